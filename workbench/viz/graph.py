"""A graphviz picture of one subgraph: operators as boxes, tensors as ellipses.

``graph_view(model)`` returns a :class:`TensorGraph`, which *is* a ``graphviz.Digraph`` (so
``.source``, ``.render()`` and ``.pipe()`` work as usual) and displays itself as SVG in a notebook.
Where graphviz's ``dot`` program is missing, it shows a short text description instead of failing.

It draws every tensor as a node of its own, which suits a first look at a file (notebook 01).  For
placements, partitions, reasons, overlays and big graphs, use :func:`workbench.viz.op_graph`, whose
view model draws operators as nodes and tensors as edges.  (Not to be confused with
:class:`workbench.partition.GraphView`, the partitioner's dependency structure, which draws nothing.)
"""

from __future__ import annotations

import graphviz

from ..schema import buffer_bytes, op_name

CONSTANT_STYLE = {"style": "filled", "fillcolor": "#eeeeee", "color": "#bbbbbb", "fontcolor": "#777777"}
INPUT_STYLE = {"style": "filled", "fillcolor": "#bbdefb"}
OUTPUT_STYLE = {"style": "filled", "fillcolor": "#c8e6c9"}
OP_STYLE = {"shape": "box", "style": "rounded,filled", "fillcolor": "#fff3e0", "color": "#e65100"}
CUSTOM_STYLE = {"shape": "box", "style": "rounded,filled", "fillcolor": "#fce4ec", "color": "#ad1457"}


class TensorGraph(graphviz.Digraph):
    """A ``graphviz.Digraph`` of a subgraph with counts and a text fallback."""

    operators: int = 0  # operator nodes drawn
    tensors: int = 0  # tensor nodes drawn
    constants: int = 0  # of which constant (greyed)
    hidden_constants: int = 0  # constant tensors left out (constants=False)
    summary: str = ""
    _svg: tuple[str, str] | None = None

    def svg(self) -> str:
        """The SVG picture (needs graphviz's ``dot``); cached for an unchanged graph."""
        source = self.source
        if self._svg is None or self._svg[0] != source:
            self._svg = (source, self.pipe(format="svg", encoding="utf-8"))
        return self._svg[1]

    def __str__(self) -> str:
        return self.summary

    def __repr__(self) -> str:
        return self.summary

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        bundle = {"text/plain": self.summary}
        try:
            bundle["image/svg+xml"] = self.svg()
        except graphviz.ExecutableNotFound:
            bundle["text/plain"] += ("\n(graphviz's `dot` program is not installed, so this is the text view; "
                                     "install it, e.g. `apt-get install graphviz`, to see the picture)")
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle


def _select(ops, count: int) -> list[int]:
    if ops is None:
        return list(range(count))
    if isinstance(ops, int):
        return list(range(min(ops, count)))
    if isinstance(ops, slice):
        return list(range(count))[ops]
    return [int(i) for i in ops if 0 <= int(i) < count]


def _label(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def graph_view(model, subgraph: int = 0, *, ops=None, constants: bool = True, rankdir: str = "TB",
               max_width: float | None = 10.0) -> TensorGraph:
    """Operators (boxes: op name and version) and tensors (ellipses: name, shape, type) of a subgraph.

    ``ops`` picks operators: None (all), a count (the first N), a slice or a list of indices.
    Constant tensors are greyed; ``constants=False`` leaves them out and notes their number in
    the operator box, which keeps big graphs readable.  Graph inputs are blue, outputs green.
    ``max_width`` (inches) scales a wide picture down to fit a notebook; None keeps its natural size.
    """
    sg = model.subgraphs[subgraph]
    codes = model.operator_codes or ()
    tensors = sg.tensors or ()
    all_ops = sg.operators or ()
    chosen = _select(ops, len(all_ops))
    graph_attr = {"rankdir": rankdir, "nodesep": "0.15", "ranksep": "0.25", "fontsize": "10"}
    if max_width:
        graph_attr["size"] = f"{max_width:g},1000"  # width limit only; dot shrinks, never enlarges
    g = TensorGraph(name=f"subgraph_{subgraph}", graph_attr=graph_attr,
                  node_attr={"fontsize": "9", "fontname": "Helvetica", "height": "0.3", "margin": "0.05,0.02"},
                  edge_attr={"arrowsize": "0.5", "color": "#777777"})
    inputs, outputs = set(sg.inputs or ()), set(sg.outputs or ())

    def is_constant(t) -> bool:
        return t.buffer != 0 and len(buffer_bytes(model, t.buffer)) > 0

    drawn: set[int] = set()
    n_const = hidden = 0

    def tensor_node(i: int) -> None:
        nonlocal n_const
        if i in drawn:
            return
        drawn.add(i)
        t = tensors[i]
        shape = "[" + ",".join(str(d) for d in t.shape or ()) + "]"
        attrs = {}
        if is_constant(t):
            attrs = CONSTANT_STYLE
            n_const += 1
        elif i in inputs:
            attrs = INPUT_STYLE
        elif i in outputs:
            attrs = OUTPUT_STYLE
        g.node(f"t{i}", f"{_label(t.name or f't{i}')}\n{shape} {t.type.name}", tooltip=f"tensors[{i}] {t.name}",
               **attrs)

    for k in chosen:
        op = all_ops[k]
        oc = codes[op.opcode_index]
        name = op_name(oc)
        skipped = 0
        ins = []
        for i in op.inputs or ():
            if i < 0:
                continue
            if not constants and is_constant(tensors[i]):
                skipped += 1
                continue
            ins.append(i)
        hidden += skipped
        label = f"{name} v{oc.version}" + (f"\n+{skipped} constant{'s' if skipped > 1 else ''}" if skipped else "")
        style = CUSTOM_STYLE if name != getattr(oc.builtin_code, "name", None) and name == oc.custom_code else OP_STYLE
        g.node(f"o{k}", label, tooltip=f"operators[{k}]", **style)
        for i in ins:
            tensor_node(i)
            g.edge(f"t{i}", f"o{k}")
        for i in op.outputs or ():
            if i < 0:
                continue
            tensor_node(i)
            g.edge(f"o{k}", f"t{i}")
    g.operators, g.tensors, g.constants, g.hidden_constants = len(chosen), len(drawn), n_const, hidden
    head = (f"SubGraph {subgraph} {sg.name!r}: {len(chosen)} of {len(all_ops)} operators, "
            f"{len(drawn)} tensors ({n_const} constant, greyed)")
    if hidden:
        head += f"; {hidden} constant inputs left out"
    lines = [head]
    for k in chosen[:8]:
        op = all_ops[k]
        lines.append(f"  operators[{k}] {op_name(codes[op.opcode_index])}: "
                     f"{list(op.inputs or ())} → {list(op.outputs or ())}")
    if len(chosen) > 8:
        lines.append(f"  … {len(chosen) - 8} more operators")
    g.summary = "\n".join(lines)
    return g


__all__ = ["TensorGraph", "graph_view"]
