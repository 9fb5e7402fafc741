"""A graph laid out once, drawn many times: the canvas of the partition lab and the step debugger.

``dot`` places the nodes of an :class:`~workbench.viz.view_model.OpGraph` once (``dot -Tplain``: each
box's centre and size, each edge's curve); :meth:`Layout.svg` then paints that fixed picture with
per-node styles (fill, border, dashes, a numbered badge, a ring, opacity), per-edge styles and outlines
around groups of nodes — plain string work, no ``dot`` run, so a widget can redraw on every change and
a learner sees colours change while every box stays where it was.

The conventions are :mod:`workbench.viz.render`'s: a node on a device has a solid border with rounded
corners and its partition's colour; a node on the CPU a dashed border, square corners and a black
numbered badge; an edge copying a tensor between host and device is bold and says how many bytes cross.
Only inline attributes are used (JupyterLab drops ``<style>`` blocks in untrusted notebooks).
"""

from __future__ import annotations

import html
import shlex
from collections import defaultdict
from dataclasses import dataclass

import graphviz

from ..render import (
    BADGE_BG,
    BADGE_FG,
    CPU_BORDER,
    CPU_FILL,
    CUSTOM_BORDER,
    CUSTOM_FILL,
    IO_FILL,
    PLAIN_BORDER,
    PLAIN_FILL,
    lighter,
)
from ..render import partition_colours as _partition_colours

__all__ = ["Layout", "NodeStyle", "EdgeStyle", "Outline", "placement_style", "partition_colours",
           "outline_for"]

PT = 72.0                       # dot -Tplain speaks inches; SVG user units here are points, as graphviz's
NODE_PT, SMALL_PT = 10, 9       # a node's first line, every other text: 13.3 and 12 CSS px at zoom 1
LINE = 12.0                     # text line height
FONT = "Helvetica,Arial,sans-serif"
SVG_CLASS = "wb-layout"         # the class of every picture drawn here (a browser test measures its text)
EDGE_GREY = "#9a9a9a"


@dataclass
class NodeStyle:
    fill: str = PLAIN_FILL
    stroke: str = PLAIN_BORDER
    width: float = 1.0
    dashed: bool = False
    rounded: bool = True
    badge: str | None = None      # text of the black badge at the top right corner
    tag: str | None = None        # text of the white tag at the top left corner ("P7": the partition)
    ring: str | None = None       # colour of a ring drawn around the box (what changed, what runs now)
    opacity: float = 1.0
    tooltip: str = ""


@dataclass
class EdgeStyle:
    colour: str = EDGE_GREY
    width: float = 0.8
    dash: str = ""               # an SVG dash array ("2,2" dotted)
    label: str = ""              # drawn at the middle of the curve
    opacity: float = 1.0
    tooltip: str = ""


@dataclass
class Outline:
    """A box around a set of nodes (one box per connected piece of them), labelled at its top left."""

    nodes: tuple
    stroke: str
    fill: str
    label: str = ""
    tooltip: str = ""
    width: float = 1.2


def partition_colours(k: int) -> tuple:
    """(border, fill) of partition ``k``: render's Okabe–Ito hues in three tints (21 differ)."""
    return _partition_colours(k)


def placement_style(partition: int | None, badge=None, tooltip: str = "") -> NodeStyle:
    """The style of an operator node placed on a device (``partition`` k, tagged "Pk") or on the CPU (None)."""
    if partition is not None:
        border, fill = partition_colours(partition)
        return NodeStyle(fill, border, 2.0, tooltip=tooltip, tag=f"P{partition}")
    return NodeStyle(CPU_FILL, CPU_BORDER, 1.2, dashed=True, rounded=False,
                     badge=None if badge is None else str(badge), tooltip=tooltip)


HALO = ' stroke="#ffffff" stroke-width="2.2" stroke-opacity="0.85" paint-order="stroke"'   # text readable over lines


def _middle(pts) -> tuple:
    """The point halfway along a chain of cubic Bézier segments (by segment count)."""
    k = (len(pts) - 1) // 3
    if k < 1:
        return pts[len(pts) // 2]
    if k % 2 == 0:
        return pts[3 * (k // 2)]
    a, b, c, d = pts[3 * (k // 2): 3 * (k // 2) + 4]
    return tuple(0.125 * a[j] + 0.375 * b[j] + 0.375 * c[j] + 0.125 * d[j] for j in (0, 1))


def _esc(s) -> str:
    return html.escape(str(s), quote=True)


def _short(s: str, n: int = 30) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


class Layout:
    """The fixed positions of a view's nodes and edges (``dot`` runs once, here)."""

    def __init__(self, view, *, rankdir: str = "TB"):
        self.view = view
        self.nodes = {n.id: n for n in view.nodes}
        self.ids = [n.id for n in view.nodes]
        # one drawn edge per (producer, reader) pair; the tensors it carries
        self.pairs: dict = {}
        for e in view.edges:
            self.pairs.setdefault((e.src, e.dst), []).append(e)
        self.lines = {n.id: self._label_lines(n) for n in view.nodes}
        try:
            self._from_dot(rankdir)
            self.engine = "dot"
        except graphviz.ExecutableNotFound:
            self._layered()
            self.engine = "layered (graphviz's dot is not installed)"
        self._text = {nid: self._text_svg(nid) for nid in self.ids}
        # per drawn edge: the path, its bounding box and the tensors it carries (escaped), computed once
        self._edge_geo: dict = {}
        for pair, members in self.pairs.items():
            pts = self.curves.get(pair)
            if not pts:
                continue
            xs = [p[0] for p in pts]
            ys = [p[1] for p in pts]
            d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f}C" + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts[1:])
            tip = _esc(", ".join(f"tensor {e.tensor} {e.name!r} {e.label}" for e in members))
            self._edge_geo[pair] = (d, (min(xs), min(ys), max(xs), max(ys)), tip, _middle(pts))
        self._node_cache: dict = {}
        self._adj: dict = defaultdict(set)
        for a, b in self.pairs:
            self._adj[a].add(b)
            self._adj[b].add(a)

    # -- layout -----------------------------------------------------------------------------------
    @staticmethod
    def _label_lines(n) -> list:
        if n.kind in ("input", "output", "state"):
            return [_short(n.op or n.id, 30), n.detail]
        lines = [n.label]
        if n.activation:
            lines.append(f"+ {n.activation}")
        if n.detail:
            lines.append(_short(n.detail, 34))
        return lines

    def _dot_source(self, rankdir: str) -> str:
        big = len(self.ids) > 300
        out = [f'digraph G {{ graph [rankdir={rankdir} nodesep=0.18 ranksep=0.3{" nslimit=1" if big else ""}];',
               f'node [shape=box fontname=Helvetica fontsize={NODE_PT} margin="0.1,0.05" height=0.34];',
               'edge [arrowsize=0.5];']
        for nid in self.ids:
            text = "\\n".join(s.replace("\\", "\\\\").replace('"', '\\"') for s in self.lines[nid])
            out.append(f'"{nid}" [label="{text}"];')
        for a, b in self.pairs:
            out.append(f'"{a}" -> "{b}";')
        out.append("}")
        return "\n".join(out)

    def _from_dot(self, rankdir: str) -> None:
        plain = graphviz.pipe("dot", "plain", self._dot_source(rankdir).encode("utf-8")).decode("utf-8")
        self.boxes: dict = {}
        self.curves: dict = {}
        height = 0.0
        for line in plain.splitlines():
            if line.startswith("graph "):
                _, _, w, h = line.split()[:4]
                self.width, height = float(w) * PT, float(h) * PT
                self.height = height
            elif line.startswith("node "):
                f = shlex.split(line)
                x, y, w, h = (float(v) * PT for v in f[2:6])
                self.boxes[f[1]] = (x, height - y, w, h)
            elif line.startswith("edge "):
                f = shlex.split(line)
                k = int(f[3])
                pts = [(float(f[4 + 2 * j]) * PT, height - float(f[5 + 2 * j]) * PT) for j in range(k)]
                self.curves.setdefault((f[1], f[2]), pts)
        pad = 4.0
        self.width += 2 * pad
        self.height += 2 * pad
        self.boxes = {k: (x + pad, y + pad, w, h) for k, (x, y, w, h) in self.boxes.items()}
        self.curves = {k: [(x + pad, y + pad) for x, y in v] for k, v in self.curves.items()}

    def _layered(self) -> None:
        """Without ``dot``: longest-path ranks top to bottom, nodes side by side in file order."""
        rank: dict = {}
        preds = defaultdict(list)
        for a, b in self.pairs:
            preds[b].append(a)
        for nid in self.ids:                      # view nodes come in a topological (file) order
            rank[nid] = max((rank[p] + 1 for p in preds[nid] if p in rank), default=0)
        rows = defaultdict(list)
        for nid in self.ids:
            rows[rank[nid]].append(nid)
        self.boxes, self.curves = {}, {}
        gap_x, gap_y, h = 14.0, 26.0, 24.0
        width = 0.0
        for r, row in rows.items():
            x = 8.0
            for nid in row:
                w = max(60.0, 5.4 * max(len(s) for s in self.lines[nid]) + 10)
                self.boxes[nid] = (x + w / 2, 8 + r * (h + gap_y) + h / 2, w, h)
                x += w + gap_x
            width = max(width, x)
        self.width, self.height = width + 8, 8 + (max(rows, default=0) + 1) * (h + gap_y)
        for a, b in self.pairs:
            xa, ya, _, ha = self.boxes[a]
            xb, yb, _, hb = self.boxes[b]
            p0, p3 = (xa, ya + ha / 2), (xb, yb - hb / 2 - 5)
            self.curves[(a, b)] = [p0, (xa, (p0[1] + p3[1]) / 2), (xb, (p0[1] + p3[1]) / 2), p3]

    def _text_svg(self, nid: str) -> str:
        x, y, _, _ = self.boxes[nid]
        lines = self.lines[nid]
        top = y - (len(lines) - 1) * LINE / 2 + 3.2
        out = []
        for k, s in enumerate(lines):
            style = ' font-weight="600"' if k == 0 and len(lines) > 1 and self.nodes[nid].kind == "op" else ""
            size = NODE_PT if k == 0 else SMALL_PT
            colour = "#111111" if k == 0 else "#444444"
            out.append(f'<text x="{x:.1f}" y="{top + k * LINE:.1f}" text-anchor="middle" font-size="{size}" '
                       f'fill="{colour}"{style}>{_esc(s)}</text>')
        return "".join(out)

    # -- geometry helpers ---------------------------------------------------------------------------
    def box(self, nid: str) -> tuple:
        """(x0, y0, x1, y1) of a node's box, in points from the top left."""
        x, y, w, h = self.boxes[nid]
        return (x - w / 2, y - h / 2, x + w / 2, y + h / 2)

    def bounds(self, ids) -> tuple:
        """(x0, y0, x1, y1) around the boxes of ``ids`` (the whole picture when none is laid out)."""
        bs = [self.box(i) for i in ids if i in self.boxes]
        if not bs:
            return (0.0, 0.0, self.width, self.height)
        return (min(b[0] for b in bs), min(b[1] for b in bs), max(b[2] for b in bs), max(b[3] for b in bs))

    def window_around(self, ids, width: float, height: float) -> tuple | None:
        """A ``width`` × ``height`` window (points) centred on ``ids``, kept inside the picture; None when the
        whole picture fits."""
        if self.width <= width and self.height <= height:
            return None
        x0, y0, x1, y1 = self.bounds(ids)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        w, h = min(width, self.width), min(height, self.height)
        left = min(max(cx - w / 2, 0.0), self.width - w)
        top = min(max(cy - h / 2, 0.0), self.height - h)
        return (left, top, left + w, top + h)

    def pieces(self, ids) -> list:
        """The connected pieces (over this view's edges) of a set of nodes, each a list of ids."""
        todo = set(i for i in ids if i in self.boxes)
        out = []
        for start in [i for i in ids if i in todo]:
            if start not in todo:
                continue
            todo.discard(start)
            piece, stack = [start], [start]
            while stack:
                for nb in self._adj.get(stack.pop(), ()):
                    if nb in todo:
                        todo.discard(nb)
                        piece.append(nb)
                        stack.append(nb)
            out.append(piece)
        return out

    def default_style(self, nid: str) -> NodeStyle:
        n = self.nodes[nid]
        if n.kind in ("input", "output", "state"):
            return NodeStyle(IO_FILL, "#888888", 1.0, tooltip=n.tooltip)
        if n.kind == "op" and n.op and n.op != n.op.upper():
            return NodeStyle(CUSTOM_FILL, CUSTOM_BORDER, tooltip=n.tooltip)
        return NodeStyle(tooltip=n.tooltip)

    # -- drawing ----------------------------------------------------------------------------------------
    def svg(self, styles: dict | None = None, edges: dict | None = None, outlines=(), *, prefix: str = "wbl",
            zoom: float = 1.0, window=None, title: str = "") -> str:
        """The picture: ``styles`` node id → NodeStyle (others: the default look), ``edges`` (src, dst)
        → EdgeStyle, ``outlines`` drawn behind the nodes.  ``window`` (x0, y0, x1, y1) in points: only
        that part is drawn (a follow-the-cursor view of a big graph)."""
        styles = styles or {}
        edges = edges or {}
        if window is None:
            x0, y0, x1, y1 = 0.0, 0.0, self.width, self.height
        else:
            x0, y0, x1, y1 = window

        def visible(b) -> bool:
            return not (b[2] < x0 or b[0] > x1 or b[3] < y0 or b[1] > y1)

        w, h = (x1 - x0), (y1 - y0)
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="{prefix}" class="{SVG_CLASS}" width="{w * zoom:.0f}pt" '
                 f'height="{h * zoom:.0f}pt" viewBox="{x0:.1f} {y0:.1f} {w:.1f} {h:.1f}" '
                 f'font-family="{FONT}" style="background:#fff;max-width:none;height:auto" data-zoom="{zoom:g}">']
        if title:
            parts.append(f"<title>{_esc(title)}</title>")
        # arrowheads, one marker per edge colour in use
        colours = {EDGE_GREY: 0}
        for st in edges.values():
            colours.setdefault(st.colour, len(colours))
        parts.append("<defs>" + "".join(
            f'<marker id="{prefix}_a{k}" viewBox="0 0 10 10" refX="1" refY="5" markerWidth="5" markerHeight="5" '
            f'markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{c}"/></marker>'
            for c, k in colours.items()) + "</defs>")
        # outlines
        for ol in outlines:
            for piece in self.pieces(ol.nodes):
                bs = [self.box(i) for i in piece]
                bx0 = min(b[0] for b in bs) - 6
                by0 = min(b[1] for b in bs) - 15
                bx1 = max(b[2] for b in bs) + 6
                by1 = max(b[3] for b in bs) + 6
                if not visible((bx0, by0, bx1, by1)):
                    continue
                tip = f"<title>{_esc(ol.tooltip)}</title>" if ol.tooltip else ""
                parts.append(f'<g class="outline">{tip}<rect x="{bx0:.1f}" y="{by0:.1f}" width="{bx1 - bx0:.1f}" '
                             f'height="{by1 - by0:.1f}" rx="6" fill="{ol.fill}" fill-opacity="0.55" '
                             f'stroke="{ol.stroke}" stroke-width="{ol.width:g}"/>'
                             + (f'<text x="{bx0 + 4:.1f}" y="{by0 + 10:.1f}" font-size="{SMALL_PT}" '
                                f'fill="#111111"{HALO}>'
                                f'{_esc(ol.label)}</text>' if ol.label else "") + "</g>")
        # edges
        default = EdgeStyle()
        for pair, (d, bbox, tip, mid) in self._edge_geo.items():
            st = edges.get(pair, default)
            if window is not None and not visible(bbox):
                continue
            tip = _esc(st.tooltip) if st.tooltip else tip
            dash = f' stroke-dasharray="{st.dash}"' if st.dash else ""
            op = f' opacity="{st.opacity:g}"' if st.opacity < 1 else ""
            parts.append(f'<g class="edge" id="{prefix}_e_{pair[0]}_{pair[1]}"{op}><title>{tip}</title>'
                         f'<path d="{d}" fill="none" stroke="{st.colour}" stroke-width="{st.width:g}"{dash} '
                         f'marker-end="url(#{prefix}_a{colours[st.colour]})"/>')
            if st.label:
                parts.append(f'<text x="{mid[0] + 3:.1f}" y="{mid[1] + 3:.1f}" font-size="{SMALL_PT}" '
                             f'fill="{st.colour}" '
                             f'font-weight="600"{HALO}>{_esc(st.label)}</text>')
            parts.append("</g>")
        # nodes (a node drawn the same way before is not formatted again)
        cache = self._node_cache
        for nid in self.ids:
            b = self.box(nid)
            if window is not None and not visible(b):
                continue
            st = styles.get(nid) or self.default_style(nid)
            key = (nid, prefix, st.fill, st.stroke, st.width, st.dashed, st.rounded, st.badge, st.tag, st.ring,
                   st.opacity, st.tooltip)
            text = cache.get(key)
            if text is None:
                if len(cache) > 200_000:
                    cache.clear()
                text = cache[key] = self._node_svg(nid, b, st, prefix)
            parts.append(text)
        parts.append("</svg>")
        return "".join(parts)

    def _node_svg(self, nid: str, b: tuple, st: NodeStyle, prefix: str) -> str:
        x0, y0, x1, y1 = b
        op = f' opacity="{st.opacity:g}"' if st.opacity < 1 else ""
        out = [f'<g class="node" id="{prefix}_{nid}" data-node="{nid}"{op}>']
        if st.tooltip:
            out.append(f"<title>{_esc(st.tooltip)}</title>")
        if st.ring:
            out.append(f'<rect class="ring" x="{x0 - 3.5:.1f}" y="{y0 - 3.5:.1f}" width="{x1 - x0 + 7:.1f}" '
                       f'height="{y1 - y0 + 7:.1f}" rx="6" fill="none" stroke="{st.ring}" stroke-width="2.6"/>')
        dash = ' stroke-dasharray="4,2"' if st.dashed else ""
        out.append(f'<rect class="box" x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
                   f'rx="{4 if st.rounded else 0}" fill="{st.fill}" stroke="{st.stroke}" '
                   f'stroke-width="{st.width:g}"{dash}/>')
        out.append(self._text[nid])
        if st.badge is not None:
            w = 7 + 6 * len(st.badge)
            out.append(f'<g class="badge"><rect x="{x1 - w + 3:.1f}" y="{y0 - 6:.1f}" width="{w}" height="12" rx="2" '
                       f'fill="{BADGE_BG}"/><text x="{x1 - w / 2 + 3:.1f}" y="{y0 + 3.2:.1f}" text-anchor="middle" '
                       f'font-size="{SMALL_PT}" font-weight="700" fill="{BADGE_FG}">{_esc(st.badge)}</text></g>')
        if st.tag is not None:
            w = 7 + 6 * len(st.tag)
            out.append(f'<g class="tag"><rect x="{x0 - 3:.1f}" y="{y0 - 6:.1f}" width="{w}" height="12" rx="2" '
                       f'fill="#ffffff" stroke="{st.stroke}" stroke-width="1.2"/><text x="{x0 - 3 + w / 2:.1f}" '
                       f'y="{y0 + 3.2:.1f}" text-anchor="middle" font-size="{SMALL_PT}" font-weight="700" '
                       f'fill="#111111">{_esc(st.tag)}</text></g>')
        out.append("</g>")
        return "".join(out)


def outline_for(k: int, nodes, label: str, tooltip: str = "") -> Outline:
    border, fill = partition_colours(k)
    return Outline(tuple(nodes), border, lighter(fill, 0.3), label, tooltip)
