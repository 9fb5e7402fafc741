"""Renderers over :class:`~.view_model.OpGraph`: graphviz DOT and SVG, HTML with the SVG inline, text.

JupyterLab shows an ``image/svg+xml`` output as an ``<img>``, where tooltips and links are dead; here
the SVG goes inline into ``text/html`` (its XML prolog stripped), so hovering a node shows its tooltip
and a node's numbered badge links to its row in the reasons table beside the graph.

How a node reads, without colour: a node on a device has a solid border with rounded corners, prints
its partition's tag ("P7") beside the op name and sits in its partition's labelled box; a node left on
the CPU has a dashed border, square corners and a black badge numbered by its reason code
(``REASON_NUMBER``: the same number in every view and in the partition lab) and keyed to the reasons
table; a collapsed chain has a double border; an offload op of a compiled model is a 3-D box.
Colours (Okabe–Ito hues, safe for colour-blind readers, in three tints) help tell partitions apart;
the tags do it for sure.  An edge that copies a tensor between the host and a device is bold and says
how many bytes cross; an edge carrying weights unpacked on the CPU (never copied at run time) is dotted.

Legibility: the SVG keeps its natural size (text ≥ 8.5 pt, 11.3 CSS px) in a box scrolling both ways
(class ``wb-graph``), and a graph with partitions is ranked as one (``newrank``), so its partitions'
boxes stack along the data flow instead of standing side by side.  Only inline styles are used
(JupyterLab drops ``<style>`` blocks in untrusted notebooks).
"""

from __future__ import annotations

import html as _html
import re
import uuid
from pathlib import Path

import graphviz

from . import _html as H

__all__ = ["to_dot", "svg", "html", "save_html", "text", "mimebundle", "inline_svg", "PALETTE", "SideBySide",
           "side_by_side", "offload_view", "partition_colours", "MIN_FONT_PT", "GRAPH_CLASS"]

# (border, fill) per partition: Okabe–Ito hues and light tints of them
PALETTE = (
    ("#E69F00", "#FDF0D5"), ("#0072B2", "#D6E8F5"), ("#009E73", "#D3F0E7"), ("#CC79A7", "#F6E2ED"),
    ("#56B4E9", "#E1F2FC"), ("#D55E00", "#F9E0CF"), ("#9E8C00", "#FBF7CE"),
)
# the smallest text drawn, in points (the SVG's user unit): 8.5 pt is 11.3 CSS px at the natural size
MIN_FONT_PT = 8.5
NODE_PT, LINE_PT, EDGE_PT = 10, 9, MIN_FONT_PT
GRAPH_CLASS = "wb-graph"     # the scrolling box holding a picture; its <svg> carries the same class


def partition_colours(k: int) -> tuple:
    """(border, fill) of partition ``k``.  Seven hues, each with three fills (light, medium, strong
    tint), so the first 21 partitions all differ; every device node also prints its "P<k>" tag, so
    colour is never the only cue."""
    border, light = PALETTE[k % len(PALETTE)]
    tint = (k // len(PALETTE)) % 3
    if tint == 0:
        return border, light
    return border, lighter(border, 0.55 if tint == 1 else 0.3)
CPU_BORDER, CPU_FILL = "#444444", "#ffffff"
PLAIN_BORDER, PLAIN_FILL = "#7a5a2a", "#fff7e8"
CUSTOM_BORDER, CUSTOM_FILL = "#ad1457", "#fce4ec"
IO_FILL = "#eeeeee"
BADGE_BG, BADGE_FG = "#111111", "#ffffff"
NO_DOT = ("graphviz's `dot` program is not installed, so there is no picture here; install it "
          "(e.g. `apt-get install graphviz`) to see the graph")


def lighter(colour: str, f: float = 0.6) -> str:
    """``colour`` mixed with white (f = 1: white)."""
    rgb = [int(colour[k:k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * f):02x}" for c in rgb)


def _esc(s) -> str:
    return _html.escape(str(s), quote=True)


def _prefix(view) -> str:
    p = view._cache.get("prefix")
    if p is None:
        p = view._cache["prefix"] = "wb" + uuid.uuid4().hex[:8]
    return p


# -- DOT -------------------------------------------------------------------------------------------------

def _op_label(n, view, prefix: str, shown) -> str:
    """An HTML-like label: op + version, the partition tag or the reason badges, fused activation,
    detail, overlays."""
    reasons = {r.number: r.text for r in view.reasons}
    head = f"<TD ALIGN=\"LEFT\"><B>{_esc(n.label)}</B></TD>"
    tagged = n.lane == "device" and n.partition is not None
    if tagged:      # "P7" beside the op name: partitions are told apart by this tag, not by colour alone
        border = partition_colours(n.partition)[0]
        tag = _esc(n.group or f"P{n.partition}")
        head += (f"<TD ALIGN=\"RIGHT\" BORDER=\"1\" COLOR=\"{border}\" BGCOLOR=\"#ffffff\" "
                 f"TITLE=\"partition {tag}\"><FONT POINT-SIZE=\"{LINE_PT}\"><B>{tag}</B></FONT></TD>")
    elif n.badges:
        def title(b):
            why = n.reason if len(n.badges) == 1 and n.reason else reasons.get(b, "")
            return _esc(f"[{b}] {why}")

        cells = "".join(
            f"<TD BGCOLOR=\"{BADGE_BG}\" HREF=\"#{prefix}_r{b}\" TITLE=\"{title(b)}\" "
            f"ID=\"{prefix}_badge_{n.id}_{b}\"><FONT COLOR=\"{BADGE_FG}\" POINT-SIZE=\"{LINE_PT}\"><B>{b}</B></FONT>"
            f"</TD>"
            for b in n.badges)
        head += (f"<TD ALIGN=\"RIGHT\"><TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"2\" CELLPADDING=\"1\">"
                 f"<TR>{cells}</TR></TABLE></TD>")
    width = 2 if (n.badges or tagged) else 1
    rows = [f"<TR>{head}</TR>"]

    def line(s, colour="#333333"):
        rows.append(f"<TR><TD ALIGN=\"LEFT\" COLSPAN=\"{width}\"><FONT POINT-SIZE=\"{LINE_PT}\" COLOR=\"{colour}\">"
                    f"{_esc(s)}</FONT></TD></TR>")

    if n.activation:
        line(f"+ {n.activation}", "#000000")
    if n.detail:
        line(n.detail, "#555555")
    for ov in shown:
        t = ov.text(n.id)
        if t is not None:
            line(f"{ov.name} {t}")
    if n.hidden:
        line(f"+{n.hidden} neighbour{'s' if n.hidden > 1 else ''} not shown", "#777777")
    return f"<<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\">{''.join(rows)}</TABLE>>"


def _node_attrs(n, view, prefix: str, shown) -> tuple:
    attrs = {"id": f"{prefix}_{n.id}", "tooltip": n.tooltip or n.label}
    if n.kind in ("input", "output", "state"):
        shape = {"input": "invhouse", "output": "house", "state": "cylinder"}[n.kind]
        label = f"{n.op}\n{n.detail}" + (f"\n+{n.hidden} not shown" if n.hidden else "")
        attrs.update(shape=shape, style="filled", fillcolor=IO_FILL, color="#888888")
        return label, attrs
    label = _op_label(n, view, prefix, shown)
    if n.lane == "device":
        border, fill = partition_colours(n.partition or 0)
        attrs.update(shape="box3d" if n.kind == "offload" else "box", style="rounded,filled", fillcolor=fill,
                     color=border, penwidth="2")
    elif n.lane == "cpu":
        attrs.update(shape="box", style="filled,dashed", fillcolor=CPU_FILL, color=CPU_BORDER, penwidth="1.2")
    elif n.op and n.kind == "op" and n.op != n.op.upper():     # a custom op (its own name, not a builtin's)
        attrs.update(shape="box", style="rounded,filled", fillcolor=CUSTOM_FILL, color=CUSTOM_BORDER)
    else:
        attrs.update(shape="box", style="rounded,filled", fillcolor=PLAIN_FILL, color=PLAIN_BORDER)
    if n.kind == "chain":
        attrs["peripheries"] = "2"
    return label, attrs


def _edge_attrs(e, edge_labels: bool) -> dict:
    tip = f"tensor {e.tensor} {e.name!r} {e.label}, {e.nbytes:,} bytes"
    attrs = {}
    if e.crossing and e.static:
        tip += (" — copied out of its partition at run time; the reader unpacks its own copy of these weights, "
                "so nothing is copied in")
        attrs.update(color="#000000", penwidth="2.2", fontcolor="#000000", style="dashed")
        lab = f"{e.label}\n⇄ {e.nbytes:,} B out"
    elif e.crossing:
        tip += " — copied between host and device at run time"
        attrs.update(color="#000000", penwidth="2.2", fontcolor="#000000")
        lab = f"{e.label}\n⇄ {e.nbytes:,} B"
    elif e.static:
        tip += " — weights unpacked on the CPU, not copied at run time"
        attrs.update(color="#999999", style="dotted")
        lab = ""
    else:
        lab = e.label
    if edge_labels and lab:
        attrs["label"] = lab
    elif e.crossing:
        attrs["label"] = f"⇄ {e.nbytes:,} B"
    attrs["tooltip"] = tip
    attrs["labeltooltip"] = tip
    return attrs


def to_dot(view, *, edge_labels: bool | None = None, overlays=None, rankdir: str = "TB") -> graphviz.Digraph:
    """The graph as a ``graphviz.Digraph``.  ``edge_labels``: shape and dtype on every edge (default:
    below 1 500 edges; crossing edges always show their bytes); ``overlays``: the overlay names shown
    on the nodes (default all)."""
    prefix = _prefix(view)
    if edge_labels is None:
        edge_labels = len(view.edges) <= 1500
    shown = [view.overlays[k] for k in (view.overlays if overlays is None else overlays) if k in view.overlays]
    d = graphviz.Digraph(name=prefix, graph_attr={"rankdir": rankdir, "nodesep": "0.18", "ranksep": "0.3",
                                                  "fontname": "Helvetica", "fontsize": str(NODE_PT), "id": prefix,
                                                  "tooltip": view.title},
                         node_attr={"fontname": "Helvetica", "fontsize": str(NODE_PT), "margin": "0.06,0.03",
                                    "height": "0.3"},
                         edge_attr={"arrowsize": "0.5", "color": "#777777", "fontname": "Helvetica",
                                    "fontsize": f"{EDGE_PT:g}", "fontcolor": "#555555"})
    if view.groups:
        # one ranking over the whole graph: without it dot ranks each partition's box on its own and sets
        # the boxes side by side (a 248-node plan came out 17 000 pt wide and 2 000 pt tall)
        d.graph_attr["newrank"] = "true"
    if len(view.nodes) > 300:
        # dot's x-coordinate pass (network simplex) dominates on deep graphs; one pass per node keeps a
        # 1 000-node graph well under a second with layouts as straight as the unlimited search's
        d.graph_attr["nslimit"] = "1"
    grouped = {}
    for g in view.groups:
        for nid in g.nodes:
            grouped.setdefault(nid, g.id)
    for n in view.nodes:
        if n.id not in grouped:
            label, attrs = _node_attrs(n, view, prefix, shown)
            d.node(n.id, label, **attrs)
    by_id = {n.id: n for n in view.nodes}
    for g in view.groups:
        border, fill = partition_colours(g.partition)
        with d.subgraph(name=f"cluster_{g.id}") as c:
            label = g.label
            if g.est_us is not None:
                label += f" · ~{g.est_us:,.1f} µs modeled"
            if "measured ms" in g.stats:
                label += f" · {g.stats['measured ms']:.3f} ms measured"
            c.attr(label=label, style="rounded,filled", fillcolor=lighter(fill), color=border, penwidth="1.5",
                   fontcolor="#111111", fontsize=str(NODE_PT), labeljust="l", id=f"{prefix}_{g.id}",
                   tooltip=f"{g.id}: {len(g.nodes)} nodes, {g.bytes_in:,} B in, {g.bytes_out:,} B out")
            for nid in g.nodes:
                n = by_id.get(nid)
                if n is not None and grouped.get(nid) == g.id:
                    label, attrs = _node_attrs(n, view, prefix, shown)
                    c.node(n.id, label, **attrs)
    for e in view.edges:
        d.edge(e.src, e.dst, **_edge_attrs(e, edge_labels))
    return d


_PROLOG = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->", re.S)


def inline_svg(svg_text: str) -> str:
    """An SVG document made fit to sit inside HTML: XML declaration, DOCTYPE and comments removed; the
    ``<svg>`` element keeps its natural size (JupyterLab's stylesheet would shrink it to the cell's
    width, ``max-width: 100%``, which made a big graph's text a pixel high) and carries the class
    ``wb-graph``."""
    out = _PROLOG.sub("", svg_text).strip()
    return re.sub(r"<svg\b", f"<svg class=\"{GRAPH_CLASS} jp-mod-unconfined\" style=\"max-width:none;height:auto\"",
                  out, count=1)


def svg(view, **kw) -> str:
    """The picture as inline-ready SVG (no XML prolog); runs ``dot`` once per view and options."""
    key = ("svg", tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in kw.items())))
    out = view._cache.get(key)
    if out is None:
        out = view._cache[key] = inline_svg(to_dot(view, **kw).pipe(format="svg", encoding="utf-8"))
    return out


# -- text --------------------------------------------------------------------------------------------------

def _nodes_text(nodes, limit: int = 12) -> str:
    s = ", ".join(str(i) for i in nodes[:limit])
    return s + (f", … {len(nodes) - limit} more" if len(nodes) > limit else "")


def group_size(view, g) -> int:
    """How many nodes of the graph a group holds: a collapsed chain counts every node it folds."""
    by_id = {n.id: n for n in view.nodes}
    return sum(len(by_id[i].members) if i in by_id and by_id[i].members else 1 for i in g.nodes)


def text(view) -> str:
    cross = view.crossing
    head = (f"{view.title}: {len(view.ops)} op nodes, {len(view.edges)} edges"
            + (f" ({len(cross)} crossing, {sum(e.nbytes for e in cross):,} bytes)" if cross else ""))
    lines = [head]
    for g in view.groups:
        est = f", ~{g.est_us:,.1f} µs modeled" if g.est_us is not None else ""
        ms = f", {g.stats['measured ms']:.3f} ms measured" if "measured ms" in g.stats else ""
        lines.append(f"  {g.label}: {g.bytes_in:,} B in / {g.bytes_out:,} B out{est}{ms}")
    if view.reasons:
        lines.append("  on the CPU ([badge] reason code: what it means; the reasons met: nodes):")
        for r in view.reasons:
            lines.append(f"    [{r.number}] {r.code}: {r.text}")
            for t, ns in r.details or ((r.text, r.nodes),):
                lines.append(f"        {t}: {_nodes_text(list(ns))}")
    if view.overlays:
        lines.append("  overlays: " + ", ".join(f"{o.name} ({len(o.values)} nodes)" for o in view.overlays.values()))
    lines += [f"  {n}" for n in view.notes]
    return "\n".join(lines)


# -- HTML --------------------------------------------------------------------------------------------------

def _badge_html(number: int) -> str:
    return (f"<span style='display:inline-block;min-width:14px;padding:0 3px;border-radius:3px;background:{BADGE_BG};"
            f"color:{BADGE_FG};font-weight:700;text-align:center'>{number}</span>")


def _tag_html(k: int, label: str = "") -> str:
    """The "P7" tag a device node prints, in its partition's colours."""
    border, fill = partition_colours(k)
    return (f"<span style='display:inline-block;padding:0 4px;border:2px solid {border};border-radius:3px;"
            f"background:{fill};color:{H.INK};font-weight:700'>{_esc(label or f'P{k}')}</span>")


def _swatch(border: str, fill: str, dashed: bool = False, rounded: bool = True) -> str:
    return (f"<span style='display:inline-block;width:22px;height:11px;vertical-align:middle;background:{fill};"
            f"border:2px {'dashed' if dashed else 'solid'} {border};border-radius:{3 if rounded else 0}px'></span>")


def _legend(view) -> str:
    items = []
    placed = any(n.lane for n in view.nodes)
    if placed:
        items.append(f"{_swatch(PALETTE[0][0], PALETTE[0][1])} on a device (solid border, in its partition's box), "
                     f"its partition's tag {_tag_html(0)} beside the op name: colours repeat, tags do not")
        items.append(f"{_swatch(CPU_BORDER, CPU_FILL, dashed=True, rounded=False)} on the CPU (dashed border) with "
                     f"{_badge_html('n')} = reason code n (the same number in every view and in the partition lab)")
        items.append("<b>bold edge ⇄ N B</b>: copied between host and device at run time")
        items.append("dotted edge: weights unpacked on the CPU (not copied at run time)")
    else:
        items.append(f"{_swatch(PLAIN_BORDER, PLAIN_FILL)} operator (op + version), "
                     f"{_swatch(CUSTOM_BORDER, CUSTOM_FILL)} custom op")
    if any(n.kind == "chain" for n in view.nodes):
        items.append("double border: a collapsed chain")
    items.append("edges: shape and dtype of the tensor; hover a node or an edge for details")
    return "<div style='margin:2px 0 6px 0;line-height:1.6'>" + "<br>".join(items) + "</div>"


def _reasons_table(view, prefix: str) -> str:
    if not view.reasons:
        return ""
    rows = []
    for r in view.reasons:
        nodes = list(r.nodes)
        texts = "<br>".join(f"{_esc(t)} <span style='color:#555'>({len(ns)})</span>"
                            for t, ns in (r.details or ((r.text, r.nodes),)))
        rows.append(f"<tr id='{prefix}_r{r.number}'><td style='{H.CELL}'>{_badge_html(r.number)}</td>"
                    f"<td style='{H.CELL}'><b>{_esc(r.code)}</b>: {_esc(r.text)}<br>{texts}</td>"
                    f"<td style='{H.CELL};text-align:right'>{len(nodes)}</td>"
                    f"<td style='{H.CELL}' title='{_esc(', '.join(map(str, nodes)))}'>{_esc(_nodes_text(nodes, 16))}"
                    f"</td></tr>")
    head = "".join(f"<th style='{H.CELL};font-weight:600'>{h}</th>" for h in ("#", "why on the CPU", "nodes", "which"))
    return (f"<div class='wb-graph-reasons'><b>Left on the CPU</b> (badge number = reason code)"
            f"<table style='{H.TABLE}'><tr>{head}</tr>{''.join(rows)}</table></div>")


def _groups_table(view) -> str:
    if not view.groups:
        return ""
    measured = any("measured ms" in g.stats for g in view.groups)
    modeled = any(g.est_us is not None for g in view.groups)
    heads = ["group", "nodes", "bytes in", "bytes out"] + (["modeled µs"] if modeled else []) + (
        ["measured ms"] if measured else [])
    rows = []
    for g in sorted(view.groups, key=lambda grp: grp.partition):
        cells = [_tag_html(g.partition, g.id), str(group_size(view, g)), f"{g.bytes_in:,}", f"{g.bytes_out:,}"]
        if modeled:
            cells.append("" if g.est_us is None else f"{g.est_us:,.1f}")
        if measured:
            cells.append(f"{g.stats['measured ms']:.3f}" if "measured ms" in g.stats else "")
        rows.append("<tr>" + "".join(f"<td style='{H.CELL}'>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th style='{H.CELL};font-weight:600'>{h}</th>" for h in heads)
    return (f"<div class='wb-graph-groups'><b>Partitions</b><table style='{H.TABLE}'><tr>{head}</tr>"
            f"{''.join(rows)}</table></div>")


def _nodes_table(view) -> str:
    ovs = list(view.overlays.values())
    heads = ["node", "op", "where", "reason"] + [o.name for o in ovs]
    rows = []
    for n in view.ops:
        where = n.group if n.lane == "device" else (n.lane or "")
        reason = " ".join(_badge_html(b) for b in n.badges) + (f" {_esc(n.reason)}" if n.reason else "")
        cells = [_esc(n.id), _esc(n.label) + (f" + {_esc(n.activation)}" if n.activation else ""), _esc(where), reason]
        cells += [_esc(o.text(n.id) or "") for o in ovs]
        rows.append("<tr>" + "".join(f"<td style='{H.CELL}'>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th style='{H.CELL};font-weight:600'>{_esc(h)}</th>" for h in heads)
    return (f"<details><summary>every node ({len(rows)})</summary><table style='{H.TABLE}'><tr>{head}</tr>"
            f"{''.join(rows)}</table></details>")


def _picture(view, max_height: int, **kw) -> str:
    """The SVG at its natural size in a box that scrolls both ways (class ``wb-graph``)."""
    try:
        pic = svg(view, **kw)
    except graphviz.ExecutableNotFound:
        return f"<div class='{GRAPH_CLASS} wb-graph-missing' style='padding:8px;color:#555'>{_esc(NO_DOT)}</div>"
    return (f"<div class='{GRAPH_CLASS}' style='overflow:auto;max-height:{max_height}px;max-width:100%;"
            f"border:1px solid #ddd;background:#fff'>{pic}</div>")


def _hints(view) -> tuple:
    hints = view.notes
    if len(view.nodes) > 300 and not any(n.kind == "chain" for n in view.nodes):
        hints += (f"a big graph ({len(view.nodes)} nodes): .collapse(3) folds its chains, .focus(node, radius=2) "
                  f"shows one neighbourhood",)
    return hints + ("the picture is drawn at its natural size: scroll inside the box to move around",)


def html(view, *, max_height: int = 760, **kw) -> str:
    """The graph (inline SVG at its natural size, scrolling both ways) with the legend, the reasons and
    partitions tables beside it and every node in a table below."""
    prefix = _prefix(view)
    cross = view.crossing
    summary = (f"{len(view.ops)} op nodes, {len(view.edges)} edges"
               + (f", {len(cross)} crossing ({sum(e.nbytes for e in cross):,} bytes)" if cross else "")
               + (f", {len(view.groups)} groups" if view.groups else ""))
    notes = "".join(f"<div style='color:#555'>{_esc(n)}</div>" for n in _hints(view))
    side = _legend(view) + _reasons_table(view, prefix) + _groups_table(view)
    return (f"<div class='wb-graph-view' style='font-family:Helvetica,Arial,sans-serif;font-size:12px;"
            f"color:{H.INK};background:#fff;padding:4px' id='{prefix}_view'>"
            f"<div style='margin:2px 0'><b>{_esc(view.title)}</b> — {_esc(summary)}</div>{notes}"
            f"<div style='display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start'>"
            f"<div style='flex:1 1 520px;min-width:300px'>{_picture(view, max_height, **kw)}</div>"
            f"<div style='flex:0 1 420px;min-width:260px'>{side}</div></div>{_nodes_table(view)}</div>")


def _document(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{_esc(title)}</title></head>"
            f"<body style='margin:8px;background:#fff'>{body}</body></html>\n")


def save_html(view, path, **kw) -> Path:
    """One self-contained HTML file (graph and overlays, no scripts, no external references)."""
    path = Path(path)
    path.write_text(_document(view.title, view.html(**kw) if hasattr(view, "html") else html(view, **kw)),
                    encoding="utf-8")
    return path


def mimebundle(view, include=None, exclude=None) -> dict:
    bundle = {"text/plain": text(view) if not hasattr(view, "summary") else view.summary(),
              "text/html": view.html()}
    if include:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle


# -- two views, one above the other ----------------------------------------------------------------------

class SideBySide:
    """Two views to compare (e.g. a plan's cut and the compiled model with its offload ops opened).  They
    are drawn one above the other, each at its natural size in its own scrolling box: two tall graphs
    squeezed into half a cell's width each had text a few pixels high."""

    def __init__(self, left, right, title: str = ""):
        self.left, self.right = left, right
        self.title = title or f"{left.title} | {right.title}"

    def summary(self) -> str:
        return f"{self.title}\n-- first --\n{text(self.left)}\n-- second --\n{text(self.right)}"

    def __repr__(self) -> str:
        return f"SideBySide({self.left!r}, {self.right!r})"

    def html(self, *, max_height: int = 560, **kw) -> str:
        rows = []
        for v in (self.left, self.right):
            side = _reasons_table(v, _prefix(v)) + _groups_table(v)
            rows.append(f"<div class='wb-graph-view' style='margin:6px 0'><div style='margin:2px 0'>"
                        f"<b>{_esc(v.title)}</b></div>"
                        f"<div style='display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start'>"
                        f"<div style='flex:1 1 520px;min-width:300px'>{_picture(v, max_height, **kw)}</div>"
                        f"<div style='flex:0 1 420px;min-width:260px'>{side}</div></div></div>")
        return (f"<div style='font-family:Helvetica,Arial,sans-serif;font-size:12px;color:{H.INK};background:#fff;"
                f"padding:4px'><div style='margin:2px 0'><b>{_esc(self.title)}</b></div>{_legend(self.left)}"
                f"{''.join(rows)}</div>")

    def save_html(self, path, **kw) -> Path:
        return save_html(self, path, **kw)

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        return mimebundle(self, include, exclude)


def side_by_side(left, right, title: str = "") -> SideBySide:
    return SideBySide(left, right, title)


def offload_view(compiled, plan=None, subgraph: int = 0) -> SideBySide:
    """A compiled model's offload ops opened into the operators they carry (second), below the cut they
    came from (first: the plan's view when given, else the compiled model as stored).  Given the plan,
    each offload op's modeled time is its partition's ``est_us``."""
    import dataclasses

    from .view_model import op_graph

    opened = op_graph(compiled, subgraph, expand=True)
    if plan is not None:
        est = {p.index: p.est_us for p in plan.partitions}
        opened.groups = tuple(dataclasses.replace(g, est_us=est.get(g.partition, g.est_us)) for g in opened.groups)
    left = op_graph(plan) if plan is not None else op_graph(compiled, subgraph)
    return SideBySide(left, opened, "the cut, and below it the compiled model with its offload ops opened")
