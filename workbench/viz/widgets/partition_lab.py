"""PartitionLab: turn the partitioner's knobs and watch the cut move.

Choose a model, a target and a strategy; take ops away from the target, deny nodes, limit the number
of partitions or ask for a minimum size — the plan is recomputed on every change and the picture
repainted on a layout computed once per model (``dot`` runs when the model changes, never on a recut),
so the boxes stay where they are and only colours, badges and outlines change.  A ring marks every
node whose placement changed since the previous cut (between device and CPU, or to another CPU reason
code; a partition renumbered is no change), and a close-up above the picture shows the first of them,
named in words.  The picture is drawn at its natural size (text 12-13 px at zoom 1) and scrolls.  Below
the picture: what crosses between host and device
(boundary tensors and bytes) and each partition's modeled cost by part (compute, per-op overheads,
copies in and out, weights streamed), from :mod:`workbench.partition.cost`.

**Pin** keeps the current plan: the next one is drawn below it on the same layout (one above the other,
so both fit a 1280 px screen), the nodes that differ ringed in both, with the changes listed below.

The strategy menu is a planning view of two different things, and a note beside it says which.
``tflite`` is the cut a runtime delegate gets: it claims the nodes the target accepts and TFLite's
partitioner cuts them (``tflite/delegates/utils.cc`` GraphPartitionHelper).  ``tidl`` (the TI paper's
walk) and ``edgetpu`` (the Edge TPU compiler's cut) are offline compiles: ``workbench partition
--strategy tidl -o OUT.tflite`` writes that cut into a model, and a delegate runs it only in
``mode="compiled"``.

A plain class holding ipywidgets, so tests drive it without a browser::

    lab = PartitionLab(model, target="tidl", strategy="tidl")
    lab.op_toggles["CONV_2D"].value = False   # the target without CONV_2D
    lab.deny.value = (12,)                     # node 12 stays on the CPU
    lab.max_partitions.value = 2; lab.min_nodes.value = 3
    lab.cut_after.value = "AvgPool2D/AvgPool"  # only this tensor's ancestors may go (names, comma-separated)
    lab.pin_button.click()                     # keep this plan; the next one shows below it
    with lab.changes(): ...                    # several knobs, one recut
    lab.plan, lab.pinned, lab.diff             # the Plan objects behind the view, and their placement changes
    lab.summary_html.value, lab.graph_html.value, lab.changes_html.value, lab.cost_html.value
    lab.timings                                # {"recut_ms", "draw_ms", "total_ms"} of the last update

Models: the corpus and sample models (as :class:`RuntimeExplorer` lists them) plus ``models={name:
Model or path}``.  Subgraph 0 is cut.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import ipywidgets as W

from ... import corpus
from ...errors import WorkbenchError
from ...partition import REASON_CODES, GraphView, Plan, PlanDiff, list_targets, load_target, node_macs, partition
from ...partition.cost import cpu_node_us, partition_cost
from ...partition.strategies import STRATEGIES
from ...partition.target import OpRule, Target
from ...schema import load
from ...schema.enums import BuiltinOperator
from .. import _html as H
from ..render import BADGE_BG, BADGE_FG, CPU_BORDER, CPU_FILL, partition_colours
from ..view_model import DTYPE_SHORT, REASON_NUMBER, op_graph
from ._layout import EdgeStyle, Layout, outline_for, placement_style
from .runtime_explorer import available_models

__all__ = ["PartitionLab", "without_ops", "REASON_NUMBER", "placement_changes", "strategy_label", "strategy_note"]

# a CPU node's badge: the number of its reason's code (REASON_NUMBER, shared with viz.op_graph), the same
# in every cut and every view
MOVED = "#e6007e"           # the ring around a node that moved
PICTURE_MAX_PX = 640        # a picture's box scrolls beyond this height
CLOSE_UP_PT = (420.0, 150.0)   # the close-up window around the first change (points at zoom 1)
CROSS = "#000000"
PARTS = (("compute", "#0072B2"), ("overhead", "#56B4E9"), ("copy_in", "#E69F00"), ("copy_out", "#D55E00"),
         ("streamed", "#CC79A7"))


def placement_changes(a: Plan, b: Plan) -> PlanDiff:
    """The nodes whose placement differs between plans ``a`` and ``b``: device in one and CPU in the
    other, or on the CPU in both for reasons of different codes.  A node that stays on the device while
    its partition is renumbered, or keeps its reason code with other values in the text ("…=16 was
    reached" → "…=2 was reached"), has not moved.  A :class:`PlanDiff` (``moved``: node, op, place in
    ``a``, place in ``b``, reason in ``b``)."""
    moved = []
    for p, q in zip(a.placements, b.placements):
        if (p.partition is None) != (q.partition is None) or (p.partition is None and p.code != q.code):
            moved.append((p.node, p.op, _where(p), _where(q), q.reason))
    return PlanDiff(a.name, b.name, moved, (len(a.partitions), len(b.partitions)))


def _where(p) -> str:
    return "cpu" if p.partition is None else f"P{p.partition}"


def without_ops(target: Target, off, present=None) -> Target:
    """``target`` without the op rules named in ``off`` (op names): a derived target the partitioner
    takes as any other.  ``present`` ({op name: is custom}): the model's ops — needed when the target
    takes every builtin op (``"*"``): that rule is spelled out for the model's ops, minus ``off``."""
    off = set(off or ())
    if not off:
        return target
    present = dict(present or {})
    ops = dict(target.ops)
    if "*" in ops and any(name not in ops and not present.get(name, False) for name in off):
        star = ops.pop("*")
        for name, custom in present.items():
            if not custom and name not in ops:
                ops[name] = OpRule(name, dict(star.constraints), False)
    for name in off:
        ops.pop(name, None)
    label = ", ".join(sorted(off)) if len(off) <= 2 else f"{len(off)} ops"
    return dataclasses.replace(target, name=f"{target.name} without {label}", ops=ops, _cache={})


def strategy_label(strategy: str) -> str:
    """The strategy menu's text: which of the two ways a cut reaches a device it is."""
    return f"{strategy} (runtime)" if strategy == "tflite" else f"{strategy} (compiled offline)"


def strategy_note(strategy: str) -> str:
    """One line under the strategy menu: who makes this cut, and how to run it."""
    if strategy == "tflite":
        text = ("<b>tflite</b>: the cut a runtime delegate gets, as in LiteRT. The delegate claims the nodes the "
                "target accepts; TFLite's partitioner cuts them into partitions.")
    else:
        text = (f"<b>{H.esc(strategy)}</b>: an offline compile, not a runtime delegate's cut. "
                f"<code>workbench partition MODEL --target T --strategy {H.esc(strategy)} -o OUT.tflite</code> "
                f"writes this cut into a model (one custom op per partition); a delegate runs it only with "
                f"<code>mode=\"compiled\"</code>.")
    return f"<small style='color:#555'>{text}</small>"


class _ModelData:
    """What the lab computes once per model: graph, view, layout, MACs per node, boundary facts."""

    def __init__(self, model):
        self.model = model
        self.graph = GraphView(model, 0)
        self.view = op_graph(model)
        self.layout = Layout(self.view)
        g = self.graph
        self.n = g.num_nodes
        self.macs = [node_macs(g, i) for i in range(self.n)]
        self.present: dict = {}
        for nd in g.nodes:
            self.present.setdefault(nd.name, nd.op == BuiltinOperator.CUSTOM)
        self.index = {n.id: n.index for n in self.view.nodes if n.index is not None}
        # every drawn edge: (src index or None, dst index or None, [(tensor, static, nbytes)])
        self.pairs = [(pair, self.index.get(pair[0]), self.index.get(pair[1]),
                       [(e.tensor, e.static, e.nbytes) for e in members])
                      for pair, members in self.layout.pairs.items()]


class PartitionLab:
    """Widgets around one plan: the knobs, the picture (fixed layout), the costs, a pinned plan's diff."""

    def __init__(self, model=None, target: str = "tidl", strategy: str = "tidl", *, models: dict | None = None,
                 sample_dir: Path | None = None):
        self.sources = available_models(sample_dir)
        self._models: dict = {}
        if model is not None and not isinstance(model, str):     # a Model (or a path): offered as "given model"
            models = {**(models or {}), "given model": model}
            model = "given model"
        for name, m in (models or {}).items():
            if isinstance(m, (str, Path)):
                self.sources[name] = Path(m)
            else:
                self.sources[name] = name
                self._models[name] = _ModelData(m)
        names = list(self.sources)
        if model is None:
            model = next((n for n in (models or {})), None) or next(
                (n for n in ("selfie_segmentation",) if (corpus.cache_dir() / f"{n}.tflite").is_file()),
                next((n for n in names if n.startswith("sample:")), names[0]))
        self.prefix = "pl" + uuid.uuid4().hex[:6]
        self._hold = True
        self.model_name = W.Dropdown(options=names, value=model, description="model", layout=W.Layout(width="360px"))
        self.target = W.Dropdown(options=list_targets(), value=target, description="target",
                                 layout=W.Layout(width="220px"))
        self.strategy = W.Dropdown(options=[(strategy_label(s), s) for s in STRATEGIES], value=strategy,
                                   description="strategy", layout=W.Layout(width="280px"))
        self.strategy_note = W.HTML(strategy_note(strategy))
        self.max_partitions = W.BoundedIntText(value=0, min=-1, max=10_000, description="max partitions",
                                               style={"description_width": "initial"}, layout=W.Layout(width="170px"))
        self.min_nodes = W.BoundedIntText(value=0, min=0, max=100_000, description="min nodes",
                                          style={"description_width": "initial"}, layout=W.Layout(width="140px"))
        self.zoom = W.FloatSlider(value=1.0, min=0.2, max=2.0, step=0.05, description="zoom", readout_format=".2f",
                                  continuous_update=False, layout=W.Layout(width="260px"))
        self.pin_button = W.Button(description="pin this plan", icon="thumb-tack",
                                   tooltip="keep this plan; the next one is drawn below it with the changes")
        self.unpin_button = W.Button(description="unpin", disabled=True)
        self.deny = W.SelectMultiple(options=[], rows=8, description="deny", layout=W.Layout(width="300px"))
        self.cut_after = W.Text(value="", description="cut after", placeholder="tensor name(s), comma-separated",
                                continuous_update=False, style={"description_width": "initial"},
                                layout=W.Layout(width="420px"),
                                tooltip="the device part ends at these tensors: only their ancestors are offloaded")
        self.op_toggles: dict = {}
        self.ops_box = W.Box(layout=W.Layout(display="flex", flex_flow="row wrap", width="100%"))
        self.ops_note = W.HTML()
        self.summary_html = W.HTML()
        self.graph_html = W.HTML(layout=W.Layout(width="100%"))
        self.pinned_html = W.HTML(layout=W.Layout(display="none", width="100%"))
        self.changes_html = W.HTML(layout=W.Layout(width="100%"))
        self.diff_html = W.HTML()
        self.cost_html = W.HTML()
        self.boundary_html = W.HTML()
        self.reasons_html = W.HTML()
        self.tabs = W.Tab(children=[self.cost_html, self.boundary_html, self.reasons_html])
        self.tabs.titles = ("cost per partition", "boundary tensors", "why on the CPU")
        knobs = W.HBox([W.VBox([W.HTML("<b>ops the target takes</b> (untick to take one away)"), self.ops_box,
                                self.ops_note], layout=W.Layout(flex="1 1 auto")), self.deny])
        self.widget = W.VBox([
            W.HBox([self.model_name, self.target, self.strategy]), self.strategy_note,
            W.HBox([self.max_partitions, self.min_nodes, self.zoom, self.pin_button, self.unpin_button]),
            self.cut_after,
            knobs, self.summary_html, self.changes_html,
            # one above the other: side by side, two natural-size pictures are twice a screen wide
            W.VBox([self.pinned_html, self.graph_html], layout=W.Layout(width="100%")), self.diff_html, self.tabs])
        self.widget.add_class("wb-partition-lab")
        # stable hooks for tests driving the lab in a browser (tests/browser)
        for w, hook in ((self.model_name, "model"), (self.target, "target"), (self.strategy, "strategy"),
                        (self.strategy_note, "strategy-note"),
                        (self.max_partitions, "max-partitions"), (self.min_nodes, "min-nodes"),
                        (self.deny, "deny"), (self.cut_after, "cut-after"), (self.ops_box, "op-toggles"),
                        (self.summary_html, "summary"),
                        (self.graph_html, "graph"), (self.pinned_html, "pinned"), (self.diff_html, "diff"),
                        (self.changes_html, "changes")):
            w.add_class(f"wb-pl-{hook}")

        self.plan: Plan | None = None
        self.pinned: Plan | None = None
        self.diff = None
        self.error: str | None = None
        self.timings: dict = {}
        self._previous: Plan | None = None      # the previous cut (its moved nodes are ringed)
        self._targets: dict = {}
        self.model_name.observe(lambda _c: self._load_model(), names="value")
        self.target.observe(lambda _c: self._new_target(), names="value")
        self.strategy.observe(lambda c: setattr(self.strategy_note, "value", strategy_note(c["new"])), names="value")
        for w in (self.strategy, self.max_partitions, self.min_nodes, self.deny, self.cut_after):
            w.observe(lambda _c: self.update(), names="value")
        self.zoom.observe(lambda _c: self._redraw(), names="value")
        self.pin_button.on_click(lambda _b: self.pin())
        self.unpin_button.on_click(lambda _b: self.unpin())
        self._load_model()

    # -- state -----------------------------------------------------------------------------------
    def data(self, name: str | None = None) -> _ModelData:
        name = name or self.model_name.value
        if name not in self._models:
            src = self.sources[name]
            self._models[name] = _ModelData(load(corpus.path(src) if isinstance(src, str) else src))
        return self._models[name]

    @property
    def model(self):
        return self.data().model

    @property
    def layout(self) -> Layout:
        return self.data().layout

    @property
    def disabled_ops(self) -> tuple:
        return tuple(sorted(name for name, cb in self.op_toggles.items() if not cb.value))

    def current_target(self) -> Target:
        base = load_target(self.target.value)
        off = self.disabled_ops
        if not off:
            return base
        key = (self.target.value, off, self.model_name.value)
        t = self._targets.get(key)
        if t is None:
            t = self._targets[key] = without_ops(base, off, self.data().present)
        return t

    def _load_model(self) -> None:
        self._hold = True
        d = self.data()
        self.deny.value = ()
        self.cut_after.value = ""
        self.deny.options = [(f"{nd.index}: {nd.name}", nd.index) for nd in d.graph.nodes]
        self.zoom.value = 1.0       # natural size: the text is legible, the picture scrolls
        self.pinned = None
        self._previous = None
        self._build_toggles(())
        self._hold = False
        self.unpin()

    def _new_target(self) -> None:
        self._hold = True
        self._build_toggles(self.disabled_ops)
        self._hold = False
        self.update()

    def _build_toggles(self, keep_off) -> None:
        d = self.data()
        base = load_target(self.target.value)
        taken, not_taken = [], []
        for name, custom in sorted(d.present.items()):
            (taken if base.rule(name, custom) is not None else not_taken).append(name)
        self.op_toggles = {}
        for name in taken:
            cb = W.Checkbox(value=name not in keep_off, description=name, indent=False,
                            layout=W.Layout(width="auto", margin="0 10px 0 0"))
            cb.observe(lambda _c: self.update(), names="value")
            self.op_toggles[name] = cb
        self.ops_box.children = tuple(self.op_toggles.values())
        self.ops_note.value = (f"<small>not in {H.esc(base.name)} at all: {H.esc(', '.join(not_taken))}</small>"
                               if not_taken else "")

    # -- actions ------------------------------------------------------------------------------------
    def pin(self) -> None:
        """Keep the current plan; later cuts are drawn below it, with the changes."""
        if self.plan is None:
            return
        self.pinned = self.plan
        self._pinned_knobs = self._knobs_text()
        self.unpin_button.disabled = False
        self.pinned_html.layout.display = ""
        self._redraw()

    def unpin(self) -> None:
        self.pinned = None
        self.diff = None
        self.unpin_button.disabled = True
        self.pinned_html.layout.display = "none"
        self.pinned_html.value = ""
        self.diff_html.value = ""
        self.changes_html.value = ""
        self.update()

    @contextmanager
    def changes(self):
        """Turn several knobs, recut once::

            with lab.changes():
                lab.max_partitions.value = 2; lab.deny.value = (3, 9)
        """
        held = self._hold
        self._hold = True
        try:
            yield self
        finally:
            self._hold = held
            self.update()

    def update(self) -> None:
        """Recut with the current knobs and repaint."""
        if self._hold:
            return
        t0 = time.perf_counter()
        d = self.data()
        try:
            plan = partition(d.model, self.current_target(), self.strategy.value, deny=tuple(self.deny.value),
                             max_partitions=int(self.max_partitions.value), min_nodes=int(self.min_nodes.value),
                             graph=d.graph, cut_after=self.cut_tensors())
        except WorkbenchError as exc:
            self.error = str(exc)
            self.summary_html.value = (f"<div style='{H.BOX};background:#ffebee'><b>no plan:</b> "
                                       f"{H.esc(exc)}</div>")
            self.timings = {"recut_ms": (time.perf_counter() - t0) * 1000.0}
            return
        t1 = time.perf_counter()
        self.error = None
        if self.plan is not None and self.plan.model is d.model:
            self._previous = self.plan
        self.plan = plan
        self._redraw(t0, t1)

    # -- drawing ------------------------------------------------------------------------------------
    def _where(self, plan) -> list:
        return [p.partition for p in plan.placements]

    def _styles(self, plan, ring: set) -> tuple:
        # a redraw paints each plan twice (its picture and its close-up): the styles are computed once
        ring = frozenset(ring)
        cache = self.__dict__.setdefault("_style_cache", [])
        for p, r, styles in cache:
            if p is plan and r == ring:
                return styles
        styles = self._compute_styles(plan, ring)
        cache[:] = cache[-3:] + [(plan, ring, styles)]
        return styles

    def _compute_styles(self, plan, ring: set) -> tuple:
        d = self.data()
        styles = {}
        for p in plan.placements:
            nid = f"n{p.node}"
            where = "on the device, P%d" % p.partition if p.partition is not None else "on the CPU"
            tip = f"node {p.node} {p.op} v{p.version} — {where}: {p.reason}"
            st = placement_style(p.partition, None if p.partition is not None else REASON_NUMBER.get(p.code, 12), tip)
            if p.node in ring:
                st.ring = MOVED
            styles[nid] = st
        where = self._where(plan)
        edges = {}
        for pair, a, b, members in d.pairs:
            wa = where[a] if a is not None else None
            wb = where[b] if b is not None else None
            if wa == wb:
                continue
            crossing = [(t, nb) for t, static, nb in members if wa is not None or not static]
            if crossing:
                nbytes = sum(nb for _, nb in crossing)
                edges[pair] = EdgeStyle(CROSS, 2.2, label=f"⇄ {nbytes:,} B",
                                        tooltip=f"copied between host and device on every run: "
                                                f"{', '.join(f'tensor {t}' for t, _ in crossing)}, {nbytes:,} bytes")
            elif any(static for _, static, _ in members):
                edges[pair] = EdgeStyle("#b0b0b0", 0.8, dash="2,2",
                                        tooltip="weights unpacked on the CPU: not copied at run time")
        outlines = [outline_for(part.index, [f"n{i}" for i in part.nodes],
                                f"P{part.index}",
                                f"P{part.index}: {len(part.nodes)} nodes, {part.bytes_in:,} B in, "
                                f"{part.bytes_out:,} B out, ~{part.est_us:,.1f} µs modeled")
                    for part in plan.partitions]
        return styles, edges, outlines

    def _picture(self, plan, ring: set, prefix: str, heading: str, which: str) -> str:
        """One plan's picture at the zoom's size in a box scrolling both ways; ``which``: "now" or
        "pinned" (the CSS class ``wb-pl-picture-<which>``).  ``contain:inline-size`` keeps the box as
        wide as the cell, however wide the picture."""
        styles, edges, outlines = self._styles(plan, ring)
        svg = self.layout.svg(styles, edges, outlines, prefix=prefix, zoom=float(self.zoom.value),
                              title=heading)
        return (f"<div class='wb-pl-picture wb-pl-picture-{which}' style='font-family:Helvetica,Arial,sans-serif;"
                f"font-size:12px;color:{H.INK};contain:inline-size;width:100%'>"
                f"<div style='margin:2px 0'><b>{H.esc(heading)}</b></div>"
                f"<div class='wb-pl-scroll' style='overflow:auto;max-height:{PICTURE_MAX_PX}px;max-width:100%;"
                f"border:1px solid #ddd;background:#fff'>{svg}</div></div>")

    def _close_up(self, plan, ring: set, prefix: str, node: int, heading: str, which: str) -> str:
        """The part of the picture around ``node`` (a window of the fixed layout), at zoom 1."""
        window = self.layout.window_around([f"n{node}"], *CLOSE_UP_PT)
        styles, edges, outlines = self._styles(plan, ring)
        svg = self.layout.svg(styles, edges, outlines, prefix=prefix, zoom=1.0, window=window, title=heading)
        return (f"<div class='wb-pl-closeup wb-pl-closeup-{which}' style='flex:0 1 auto;max-width:100%;"
                f"contain:inline-size;width:{CLOSE_UP_PT[0] * 4 / 3 + 4:.0f}px'>"
                f"<div style='margin:2px 0'>{H.esc(heading)}</div>"
                f"<div style='overflow:auto;max-width:100%;border:2px solid {MOVED};background:#fff'>{svg}</div></div>")

    def _changes(self, plan, changed, ring: set) -> str:
        """The changed nodes in words (the first one named) and a close-up of the first change."""
        if not changed:
            return ""
        first = min(changed, key=lambda m: m[0])
        node, op, pa, pb, why = first
        others = sorted(m[0] for m in changed if m is not first)
        rest = (f" · also changed: {', '.join(map(str, others[:24]))}" + (f", … {len(others) - 24} more"
                                                                            if len(others) > 24 else "")
                if others else "")
        against = "the pinned plan" if self.pinned is not None else "the previous cut"
        words = (f"<b>first change: node {node}</b> ({H.esc(op)}: {H.esc(pa)} → {H.esc(pb)}; "
                 f"{H.esc(_cut(str(why), 90))}){rest}")
        pics = []
        if self.pinned is not None and self.pinned.model is plan.model:
            pics.append(self._close_up(self.pinned, ring, self.prefix + "zp", node, f"pinned, around node {node}",
                                       "pinned"))
        pics.append(self._close_up(plan, ring, self.prefix + "zc", node, f"now, around node {node}", "now"))
        return (f"<div class='wb-pl-changes-box' data-changed='{len(changed)}' data-first-change='{node}' "
                f"style='font-family:Helvetica,Arial,sans-serif;font-size:12px;color:{H.INK}'>"
                f"<div style='margin:2px 0'>{len(changed)} node{'s' if len(changed) != 1 else ''} changed "
                f"placement since {against} (ringed in <span style='color:{MOVED}'>magenta</span>) · {words}</div>"
                f"<div style='display:flex;flex-wrap:wrap;gap:8px'>{''.join(pics)}</div></div>")

    def _redraw(self, t0=None, t1=None) -> None:
        if self._hold or self.plan is None:
            return
        t0 = t0 if t0 is not None else time.perf_counter()
        t1 = t1 if t1 is not None else t0
        plan = self.plan
        if self.pinned is not None and self.pinned.model is plan.model:
            self.diff = placement_changes(self.pinned, plan)
            changed = self.diff.moved
            ring = {m[0] for m in changed}
            self.pinned_html.value = self._picture(self.pinned, ring, self.prefix + "p",
                                                   f"pinned: {self.pinned.name} ({self._pinned_knobs})", "pinned")
            self.diff_html.value = self._diff_html()
            heading = f"now: {plan.name} ({self._knobs_text()}) — ringed: different from the pinned plan"
        else:
            prev = self._previous
            changed = [] if prev is None else placement_changes(prev, plan).moved
            ring = {m[0] for m in changed}
            heading = f"{plan.name} ({self._knobs_text()})" + (" — ringed: moved in this cut" if ring else "")
        self.changes_html.value = self._changes(plan, changed, ring)
        self.graph_html.value = self._picture(plan, ring, self.prefix + "c", heading, "now")
        self.cost_html.value = self._cost_html(plan)
        self.boundary_html.value = self._boundary_html(plan)
        self.reasons_html.value = self._reasons_html(plan)
        t2 = time.perf_counter()
        self.timings = {"recut_ms": (t1 - t0) * 1000.0, "draw_ms": (t2 - t1) * 1000.0,
                        "total_ms": (t2 - t0) * 1000.0}
        self.summary_html.value = self._summary(plan, len(ring))

    def cut_tensors(self) -> tuple:
        """The tensor names typed into "cut after" (comma-separated)."""
        return tuple(x.strip() for x in self.cut_after.value.split(",") if x.strip())

    def _knobs_text(self) -> str:
        parts = [f"strategy {self.strategy.value}"]
        if self.disabled_ops:
            parts.append("without " + ", ".join(self.disabled_ops))
        if self.deny.value:
            parts.append("deny " + ", ".join(map(str, self.deny.value)))
        if self.max_partitions.value:
            parts.append(f"max partitions {self.max_partitions.value}")
        if self.min_nodes.value:
            parts.append(f"min nodes {self.min_nodes.value}")
        if self.cut_tensors():
            parts.append("cut after " + ", ".join(self.cut_tensors()))
        return "; ".join(parts)

    # -- numbers --------------------------------------------------------------------------------------
    def costs(self, plan: Plan | None = None) -> list:
        """One PartitionCost per partition of ``plan`` (the current one by default)."""
        plan = plan or self.plan
        d = self.data()
        g, cost = d.graph, plan.target.cost
        return [partition_cost(cost, [d.macs[i] for i in part.nodes], [g.nbytes(t) for t in part.runtime_inputs],
                               [g.nbytes(t) for t in part.outputs], part.streamed_bytes)
                for part in plan.partitions]

    def estimate(self, plan: Plan | None = None) -> dict:
        """Modeled µs: all on the CPU, the plan (partitions + the CPU's rest)."""
        plan = plan or self.plan
        d = self.data()
        cost = plan.target.cost
        on = set(i for part in plan.partitions for i in part.nodes)
        rest = cpu_node_us(cost, sum(m for i, m in enumerate(d.macs) if i not in on))
        device = sum(part.est_us for part in plan.partitions)
        return {"cpu_only_us": cpu_node_us(cost, sum(d.macs)), "plan_us": rest + device, "target_us": device,
                "cpu_rest_us": rest}

    def _summary(self, plan, moved: int) -> str:
        est = self.estimate(plan)
        crossing = sum(len(p.runtime_inputs) + len(p.outputs) for p in plan.partitions)
        nbytes = sum(p.bytes_in + p.bytes_out for p in plan.partitions)
        n = len(plan.placements)
        t = self.timings
        timing = (f" · recut {t['recut_ms']:.0f} ms + drawn {t['draw_ms']:.0f} ms" if "draw_ms" in t else "")
        what = ("changed placement since the pinned plan" if self.pinned is not None
                else "changed placement in this cut")
        return (f"<div style='{H.BOX}'><b>{plan.offloaded}/{n} nodes on {H.esc(plan.target.name)}</b> in "
                f"<b>{len(plan.partitions)}</b> partition{'s' if len(plan.partitions) != 1 else ''} · "
                f"{crossing} boundary tensor{'s' if crossing != 1 else ''}, <b>{nbytes:,} bytes</b> moved per run · "
                f"modeled <b>{est['plan_us']:,.1f} µs</b> (all on the CPU: {est['cpu_only_us']:,.1f} µs)"
                f" · {moved} node{'s' if moved != 1 else ''} {what}{timing}<br>{self._legend()}</div>")

    @staticmethod
    def _legend() -> str:
        sw = ("<span style='display:inline-block;width:18px;height:10px;vertical-align:middle;background:{f};"
              "border:2px {s} {b};border-radius:{r}px'></span>")
        badge = (f"<span style='display:inline-block;padding:0 3px;border-radius:2px;background:{BADGE_BG};"
                 f"color:{BADGE_FG};font-weight:700'>n</span>")
        b1, f1 = partition_colours(1)
        tag = (f"<span style='display:inline-block;padding:0 3px;border:1.5px solid {b1};border-radius:2px;"
               f"background:#fff;font-weight:700'>P1</span>")
        return (f"<small>{sw.format(f=f1, s='solid', b=b1, r=3)} on the device: its partition's colour and "
                f"tag {tag} (colours repeat, tags do not) · {sw.format(f=CPU_FILL, s='dashed', b=CPU_BORDER, r=0)} "
                f"on the CPU, {badge} = reason code n, the same number as in <code>viz.op_graph</code> (tab “why on "
                f"the CPU”) · <b>bold edge ⇄ B</b>: copied every run · <span style='color:{MOVED}'>ring</span>: "
                f"placement changed</small>")

    def _cost_html(self, plan) -> str:
        if not plan.partitions:
            return "<div>no partition: every node runs on the CPU</div>"
        costs = self.costs(plan)
        top = max((c.total_us for c in costs), default=1.0) or 1.0
        heads = ["partition", "nodes", "MACs", "compute µs", "overhead µs", "copy in µs", "copy out µs",
                 "streamed µs", "total µs", ""]
        rows = []
        for part, c in zip(plan.partitions, costs):
            border, fill = partition_colours(part.index)
            bar = "".join(f"<span title='{k} {getattr(c, k + '_us'):,.1f} µs' style='display:inline-block;height:10px;"
                          f"width:{160 * getattr(c, k + '_us') / top:.1f}px;background:{col}'></span>"
                          for k, col in PARTS)
            chip = f"<span style='background:{fill};border:2px solid {border};padding:0 4px'>P{part.index}</span>"
            rows.append([chip,
                         f"{len(part.nodes)}", f"{part.macs:,}", f"{c.compute_us:,.1f}", f"{c.overhead_us:,.1f}",
                         f"{c.copy_in_us:,.1f}", f"{c.copy_out_us:,.1f}", f"{c.streamed_us:,.1f}",
                         f"<b>{c.total_us:,.1f}</b>", bar])
        est = self.estimate(plan)
        key = " ".join(f"<span style='display:inline-block;width:10px;height:10px;background:{col}'></span> "
                       f"{k.replace('_', ' ')}" for k, col in PARTS)
        c = plan.target.cost
        return (H.table(heads, rows, nowrap=(0,)) +
                f"<div>{key}</div><div>the CPU's rest: {est['cpu_rest_us']:,.1f} µs · plan: "
                f"<b>{est['plan_us']:,.1f} µs</b> · all on the CPU: {est['cpu_only_us']:,.1f} µs</div>"
                f"<div><small>{H.esc(plan.target.name)}: {c.get('macs_per_cycle')} MACs/cycle at "
                f"{c.get('clock_mhz')} MHz, {c.get('op_overhead_us', 0)} µs per op, {c.get('bandwidth_mb_s')} MB/s "
                f"+ {c.get('transfer_overhead_us', 0)} µs per tensor copied</small></div>")

    def _boundary_html(self, plan, limit: int = 300) -> str:
        g = self.data().graph
        rows = []
        for part in plan.partitions:
            for way, ts in (("in", part.runtime_inputs), ("out", part.outputs)):
                for t in ts:
                    meta = g.tensors[t]
                    dtype = DTYPE_SHORT.get(_dtype(meta.type), _dtype(meta.type).lower())
                    shape = "[" + ",".join(str(s) for s in (meta.shape or ())) + "]"
                    src = g.producer[t]
                    frm = "graph input" if src < 0 else f"node {src}"
                    to = ", ".join(str(c) for c in g.consumers[t][:6]) or "graph output"
                    rows.append([f"P{part.index}", "→ in" if way == "in" else "out →", str(t),
                                 H.esc(_cut(meta.name or "", 40)), f"{shape} {dtype}", f"{g.nbytes(t):,}",
                                 H.esc(frm), H.esc(to)])
        if not rows:
            return "<div>nothing crosses: no partition</div>"
        more = f"<div>… {len(rows) - limit} more</div>" if len(rows) > limit else ""
        return (H.table(["partition", "way", "tensor", "name", "shape", "bytes", "from", "read by"], rows[:limit],
                        nowrap=(0, 1, 5)) + more)

    def _reasons_html(self, plan) -> str:
        by: dict = {}
        for p in plan.placements:
            if p.partition is None:
                by.setdefault(p.code, []).append(p.node)
        if not by:
            return "<div>every node is on the device</div>"
        rows = []
        for code in sorted(by, key=lambda c: REASON_NUMBER.get(c, 99)):
            nodes = by[code]
            first = next(p.reason for p in plan.placements if p.partition is None and p.code == code)
            shown = ", ".join(map(str, nodes[:16])) + (f", … {len(nodes) - 16} more" if len(nodes) > 16 else "")
            rows.append([f"<span style='padding:0 3px;border-radius:2px;background:{BADGE_BG};color:{BADGE_FG};"
                         f"font-weight:700'>{REASON_NUMBER.get(code, 12)}</span>", H.esc(code),
                         H.esc(REASON_CODES.get(code, "")), str(len(nodes)), H.esc(shown), H.esc(_cut(str(first), 90))])
        return H.table(["#", "code", "meaning", "nodes", "which", "e.g."], rows)

    def _diff_html(self) -> str:
        d = self.diff
        if d is None:
            return ""
        a, b = self.estimate(self.pinned), self.estimate(self.plan)
        head = (f"<b>diff</b> pinned → now: partitions {d.partitions[0]} → {d.partitions[1]}, "
                f"<b>{len(d.moved)}</b> node{'s' if len(d.moved) != 1 else ''} changed placement (device ↔ CPU, "
                f"or another reason code on the CPU; a renumbered partition is no change), modeled "
                f"{a['plan_us']:,.1f} → {b['plan_us']:,.1f} µs")
        rows = [[str(node), H.esc(op), H.esc(pa), H.esc(pb), H.esc(_cut(str(why), 100))]
                for node, op, pa, pb, why in d.moved[:200]]
        more = f"<div>… {len(d.moved) - 200} more</div>" if len(d.moved) > 200 else ""
        table = H.table(["node", "op", "pinned", "now", "why (now)"], rows) if rows else "<div>no node moved</div>"
        return f"<div style='{H.BOX}'>{head}{table}{more}</div>"

    # -- display --------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        if self.plan is None:
            return f"PartitionLab: {self.model_name.value}: {self.error or 'no plan'}"
        p = self.plan
        pin = f", pinned {self.pinned.name} ({len(self.diff.moved)} nodes differ)" if self.pinned and self.diff else ""
        return (f"PartitionLab: {self.model_name.value} on {p.target.name}/{p.strategy}: {p.offloaded}/"
                f"{len(p.placements)} nodes offloaded in {len(p.partitions)} partition(s){pin}")

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs) or {})
        bundle["text/plain"] = repr(self)
        bundle["text/html"] = (f"<div>{self.summary_html.value}{self.changes_html.value}{self.pinned_html.value}"
                               f"{self.graph_html.value}{self.diff_html.value}{self.cost_html.value}</div>")
        return bundle


def _cut(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _dtype(t) -> str:
    from ...schema.enums import TensorType

    try:
        return TensorType(t).name
    except ValueError:
        return str(int(t))
