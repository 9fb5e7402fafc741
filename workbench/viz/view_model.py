"""One neutral view model of a subgraph — operators as nodes, tensors as edges, partitions as groups —
built from a Model, a Plan, a delegated run or a compiled model; the renderers (:mod:`.render`) and
the Model Explorer export (:mod:`.explorer_export`) read nothing else.

    g = viz.op_graph(model)                       # ops as nodes (op + version, fused activation)
    g = viz.op_graph(plan)                        # + placement, partitions, reasons, boundary bytes
    g = viz.op_graph(interpreter)                 # + what the delegate's device counted
    g = viz.op_graph(compiled, expand=True)       # workbench-offload ops opened up (their sub-models)
    g.with_overlay("int8 error", {12: 0.03}, fmt="{:.3f}", combine="max")
    g.collapse(4); g.focus(12, radius=2)          # big graphs: fewer nodes
    g.save_html("plan.html")                      # one self-contained file

Node ids are strings: ``n12`` is ``operators[12]``, ``in3`` / ``out5`` / ``state7`` the graph input,
output or state (variable) tensor 3 / 5 / 7, ``n4.2`` the operator 2 of the sub-model carried by the
offload op 4, ``c12`` a collapsed chain starting at ``n12``.  Overlays are generic per-node data (name →
{node id: value} with a formatter), so measured times, int8 errors or anything else plug in the same way.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..partition.plan import REASON_CODES, reason_code, span_label
from ..schema import load, op_name
from ..schema.enums import ActivationFunctionType, TensorType

__all__ = ["Node", "Edge", "Group", "Reason", "Overlay", "OpGraph", "op_graph", "DTYPE_SHORT", "offload_ops",
           "REASON_NUMBER"]

# a CPU node's badge number: its reason code's place in ``REASON_CODES`` (workbench/partition/plan.py),
# so a number means the same code in every view and every cut (1 = unsupported-op, 4 = constraint, ...)
REASON_NUMBER = {code: k for k, code in enumerate(REASON_CODES)}

DTYPE_SHORT = {"FLOAT32": "f32", "FLOAT16": "f16", "FLOAT64": "f64", "BFLOAT16": "bf16", "INT8": "i8",
               "UINT8": "u8", "INT16": "i16", "UINT16": "u16", "INT32": "i32", "UINT32": "u32", "INT64": "i64",
               "UINT64": "u64", "INT4": "i4", "BOOL": "bool", "STRING": "str", "COMPLEX64": "c64",
               "RESOURCE": "res", "VARIANT": "var"}


# -- the records -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Node:
    """One box of the graph."""

    id: str
    kind: str                     # op | offload | chain | input | output | state
    op: str = ""
    version: int = 0
    index: int | None = None      # operators[index] of the viewed subgraph (None: not an operator of it)
    original: int | None = None   # node index in the model before compile (inside an opened offload op)
    lane: str | None = None       # "device" | "cpu" | None (no placement known)
    group: str | None = None      # the Group (partition) holding it
    partition: int | None = None
    reason: str = ""              # why it stays on the CPU
    badges: tuple = ()            # reason numbers (Reason.number) shown on the node
    activation: str = ""          # fused activation ("RELU6"), "" for none
    detail: str = ""              # a second line: tensor shape, chain contents, offload summary
    members: tuple = ()           # chain: the node ids it stands for
    hidden: int = 0               # focus: neighbours left out of the view
    tooltip: str = ""

    @property
    def label(self) -> str:
        if self.kind in ("op", "offload"):
            return f"{self.op} v{self.version}"
        return self.op

    @property
    def badge(self) -> int | None:
        return self.badges[0] if self.badges else None

    def __repr__(self) -> str:
        where = "" if self.lane is None else f" {self.lane}" + (f" {self.group}" if self.group else "")
        extra = f" [{','.join(map(str, self.badges))}]" if self.badges else ""
        return f"Node({self.id} {self.kind} {self.label}{where}{extra})"


@dataclass(frozen=True)
class Edge:
    """One tensor from its producer to one reader."""

    src: str
    dst: str
    tensor: object                # tensor index (or (offload op, inner index) inside an opened offload op)
    name: str
    shape: tuple
    dtype: str
    nbytes: int
    crossing: bool = False        # copied between the host and a device (or two partitions) at run time
    static: bool = False          # weights unpacked on the CPU (fp16 DEQUANTIZE / DENSIFY): never copied

    @property
    def label(self) -> str:
        return f"[{','.join(str(d) for d in self.shape)}] {DTYPE_SHORT.get(self.dtype, self.dtype.lower())}"

    def __repr__(self) -> str:
        cross = f" ⇄ {self.nbytes:,} B" if self.crossing else ""
        return f"Edge({self.src}→{self.dst} {self.name!r} {self.label}{cross})"


@dataclass(frozen=True)
class Group:
    """A partition (or the inside of an offload op): a box around its nodes."""

    id: str
    label: str
    nodes: tuple                  # node ids
    partition: int
    target: str = ""
    bytes_in: int = 0
    bytes_out: int = 0
    est_us: float | None = None   # modeled time of one run (transfers included)
    stats: dict = field(default_factory=dict)   # anything measured: "measured ms", "invocations", ...

    def __repr__(self) -> str:
        return f"Group({self.id}: {len(self.nodes)} nodes, {self.bytes_in:,} B in / {self.bytes_out:,} B out)"


@dataclass(frozen=True)
class Reason:
    """Why nodes stay on the CPU, one record per reason code: the number on their badges
    (:data:`REASON_NUMBER`), what the code means, the operator indices, and ``details``: each reason
    text met (with the values the check saw, "AVERAGE_POOL_2D: filter 16x16 > 9x9 limit") and its nodes."""

    number: int
    text: str
    nodes: tuple
    code: str = "other"
    details: tuple = ()          # (reason text, operator indices), most nodes first

    @property
    def texts(self) -> tuple:
        return tuple(t for t, _ in self.details)

    def __repr__(self) -> str:
        return f"Reason({self.number} {self.code}: {self.text!r} × {len(self.nodes)})"


@dataclass(frozen=True)
class Overlay:
    """Per-node data: ``values`` maps node ids to values; ``fmt`` (a format string or a function) makes
    the text shown on the node; ``combine`` ("sum", "max", "min", "mean" or a function of a list) gives a
    collapsed chain its value (None: chains show none)."""

    name: str
    values: dict
    fmt: object = "{}"
    combine: object = None
    description: str = ""

    def format(self, value) -> str:
        if callable(self.fmt):
            return str(self.fmt(value))
        try:
            return self.fmt.format(value)
        except (ValueError, TypeError):
            return str(value)

    def text(self, node_id: str) -> str | None:
        v = self.values.get(node_id)
        return None if v is None else self.format(v)

    def combined(self, values: list):
        if not values or self.combine is None:
            return None
        if callable(self.combine):
            return self.combine(values)
        return {"sum": sum, "max": max, "min": min,
                "mean": lambda v: sum(v) / len(v)}[self.combine](values)

    def __repr__(self) -> str:
        return f"Overlay({self.name!r}: {len(self.values)} nodes)"


# -- the view model ----------------------------------------------------------------------------------

@dataclass(eq=False)
class OpGraph:
    """Nodes, edges, groups, reasons and overlays of one subgraph; the renderers draw it.

    ``source`` says what it was built from: "model", "plan", "run" or "compiled" (offload ops opened
    when ``expanded``).  :meth:`collapse` and :meth:`focus` return smaller views of the same graph
    (``base`` keeps the full one, which the Model Explorer export reads)."""

    title: str
    source: str
    subgraph: int
    nodes: tuple
    edges: tuple
    groups: tuple = ()
    reasons: tuple = ()
    overlays: dict = field(default_factory=dict)
    notes: tuple = ()
    expanded: bool = False
    model: object = field(default=None, repr=False)
    plan: object = field(default=None, repr=False)
    base: object = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    # -- lookups ------------------------------------------------------------------------------------
    def node(self, key) -> Node:
        """A node by id ("n12") or operator index (12); in a collapsed view, the chain holding it."""
        want = f"n{key}" if isinstance(key, int) else key
        index = self._index()
        if want not in index:
            for n in self.nodes:
                if want in n.members:
                    return n
            raise KeyError(f"no node {key!r} in this view ({len(self.nodes)} nodes)")
        return self.nodes[index[want]]

    def _index(self) -> dict:
        idx = self._cache.get("index")
        if idx is None:
            idx = self._cache["index"] = {n.id: k for k, n in enumerate(self.nodes)}
        return idx

    def group(self, gid: str) -> Group:
        for g in self.groups:
            if g.id == gid:
                return g
        raise KeyError(f"no group {gid!r} (groups: {', '.join(g.id for g in self.groups) or 'none'})")

    @property
    def ops(self) -> tuple:
        """The operator-like nodes (op, offload, chain), without graph inputs / outputs / state."""
        return tuple(n for n in self.nodes if n.kind in ("op", "offload", "chain"))

    @property
    def crossing(self) -> tuple:
        return tuple(e for e in self.edges if e.crossing)

    def reason_of(self, number: int) -> Reason:
        return next(r for r in self.reasons if r.number == number)

    # -- derived views ------------------------------------------------------------------------------
    def _derive(self, **changes) -> "OpGraph":
        changes.setdefault("base", self.base or self)
        changes.setdefault("_cache", {})
        return dataclasses.replace(self, **changes)

    def with_overlay(self, name: str, values: dict, fmt="{}", combine=None, description: str = "") -> "OpGraph":
        """This view with one more overlay; ``values`` keys are node ids or operator indices.  In a
        collapsed view a chain shows its members' values combined (``combine``)."""
        vals = {(f"n{k}" if isinstance(k, int) else k): v for k, v in dict(values).items()}
        base = None
        if self.base is not None:
            base = self.base.with_overlay(name, vals, fmt, combine, description)
            for n in self.nodes:
                if n.members:
                    c = Overlay(name, {}, fmt, combine).combined([vals[m] for m in n.members if m in vals])
                    if c is not None:
                        vals[n.id] = c
        ov = Overlay(name, vals, fmt, combine, description)
        return dataclasses.replace(self, overlays={**self.overlays, name: ov}, base=base, _cache={})

    def collapse(self, min_length: int = 3) -> "OpGraph":
        """Long chains (each node with one producer and one reader, same placement) become one node."""
        from .transform import collapse_chains

        return collapse_chains(self, min_length)

    def focus(self, node, radius: int = 2) -> "OpGraph":
        """The nodes at most ``radius`` edges away from ``node`` (either direction)."""
        from .transform import focus

        return focus(self, node, radius)

    def expand(self) -> "OpGraph":
        """A compiled model's view with each offload op opened into the operators it carries."""
        if self.source != "compiled":
            raise ValueError(f"expand() opens the workbench-offload ops of a compiled model; this view is of a "
                             f"{self.source}")
        if self.expanded:
            return self
        return _from_compiled(self.model, self.subgraph, expand=True, title=self.title)

    # -- display ------------------------------------------------------------------------------------
    def dot(self, **kw):
        from .render import to_dot

        return to_dot(self, **kw)

    def svg(self, **kw) -> str:
        from .render import svg

        return svg(self, **kw)

    def html(self, **kw) -> str:
        from .render import html

        return html(self, **kw)

    def save_html(self, path, **kw) -> Path:
        from .render import save_html

        return save_html(self, path, **kw)

    def _repr_mimebundle_(self, include=None, exclude=None, **_):
        from .render import mimebundle

        return mimebundle(self, include, exclude)

    def summary(self) -> str:
        from .render import text

        return text(self)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        ops = len(self.ops)
        cross = len(self.crossing)
        parts = [f"{ops} op nodes", f"{len(self.edges)} edges" + (f" ({cross} crossing)" if cross else "")]
        if self.groups:
            parts.append(f"{len(self.groups)} groups")
        if self.reasons:
            parts.append(f"{len(self.reasons)} CPU reasons")
        if self.overlays:
            parts.append("overlays: " + ", ".join(self.overlays))
        return f"OpGraph({self.title}: " + ", ".join(parts) + ")"

    # -- export -------------------------------------------------------------------------------------
    def explorer_node_data(self, **kw) -> dict:
        from .explorer_export import node_data

        return node_data(self, **kw)

    def save_explorer_node_data(self, directory, **kw) -> list:
        from .explorer_export import save_node_data

        return save_node_data(self, directory, **kw)


# -- building ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _TensorInfo:
    name: str
    shape: tuple
    dtype: str
    nbytes: int
    constant: bool
    static: bool


def _dtype_name(t) -> str:
    try:
        return TensorType(t).name
    except ValueError:
        return str(int(t))


def _tensor_infos(g, prefix=None) -> dict:
    out = {}
    for t, meta in enumerate(g.tensors):
        key = t if prefix is None else (prefix, t)
        out[key] = _TensorInfo(meta.name or f"tensor {t}", tuple(int(d) for d in meta.shape or ()),
                               _dtype_name(meta.type), g.nbytes(t), bool(g.constant[t]), bool(g.static[t]))
    return out


def _activation(op) -> str:
    for table in (op.builtin_options, op.builtin_options_2):
        v = getattr(table, "fused_activation_function", None)
        if v:
            try:
                return ActivationFunctionType(int(v)).name
            except ValueError:
                return str(v)
    return ""


def _op_nodes(model, g, subgraph: int, prefix: str = "n", original=None) -> list:
    """(Node, input keys, output keys) of every operator of GraphView ``g``."""
    sg = model.subgraphs[subgraph]
    ops = sg.operators or ()
    items = []
    for nd in g.nodes:
        op = ops[nd.index]
        act = _activation(op)
        consts = sum(1 for t in nd.inputs if t >= 0 and g.constant[t])
        tip = f"operators[{nd.index}] {nd.name} v{nd.version}" + (f", fused {act}" if act else "")
        if consts:
            tip += f", {consts} constant input{'s' if consts > 1 else ''}"
        calls = g.calls.get(nd.index, ())
        detail = f"calls subgraph{'s' if len(calls) > 1 else ''} {', '.join(map(str, calls))}" if calls else ""
        items.append([Node(f"{prefix}{nd.index}", "op", nd.name, nd.version, index=nd.index, activation=act,
                           detail=detail, tooltip=tip + (f", {detail}" if detail else "")), nd.inputs, nd.outputs])
    return items


def _wire(items, infos, graph_inputs, graph_outputs, kinds=None):
    """Edges from producers to readers; nodes for graph inputs, outputs and state tensors."""
    producer = {}
    for node, _, outs in items:
        for k in outs:
            if k is not None and not (isinstance(k, int) and k < 0):
                producer[k] = node.id
    extra: dict = {}

    def io_node(kind: str, key) -> str:
        t = key if isinstance(key, int) else key[-1]
        nid = f"{kind}{t}" if isinstance(key, int) else f"{kind}{key[0]}.{key[1]}"
        if nid not in extra:
            info = infos[key]
            shape = f"[{','.join(str(d) for d in info.shape)}] {DTYPE_SHORT.get(info.dtype, info.dtype.lower())}"
            what = {"in": "graph input", "out": "graph output", "state": "state (read before any node writes it)"}[kind]
            extra[nid] = Node(nid, {"in": "input", "out": "output", "state": "state"}[kind], info.name, detail=shape,
                              tooltip=f"{what}: tensor {t} {info.name!r} {shape}, {info.nbytes:,} bytes")
        return nid

    gin = set(graph_inputs)
    edges = []
    for node, ins, _ in items:
        seen = set()
        for k in ins:
            if k is None or (isinstance(k, int) and k < 0) or k in seen:
                continue
            seen.add(k)
            info = infos[k]
            if info.constant:
                continue
            src = producer.get(k)
            if src is None:
                src = io_node("in" if k in gin else "state", k)
            edges.append(Edge(src, node.id, k, info.name, info.shape, info.dtype, info.nbytes, static=info.static))
    inputs_first = [io_node("in", k) for k in graph_inputs if k in infos and not infos[k].constant]
    for k in graph_outputs:
        info = infos[k]
        src = producer.get(k) or io_node("in", k)
        edges.append(Edge(src, io_node("out", k), k, info.name, info.shape, info.dtype, info.nbytes,
                          static=info.static))
    order = {nid: j for j, nid in enumerate(inputs_first)}
    head = sorted((n for n in extra.values() if n.kind in ("input", "state")), key=lambda n: order.get(n.id, 1 << 30))
    tail = [n for n in extra.values() if n.kind == "output"]
    return head, [node for node, _, _ in items], tail, edges


def _mark_crossings(nodes, edges) -> list:
    """An edge crosses when it leaves a device group, or enters one with a tensor that is not static."""
    where = {n.id: (n.group if n.lane == "device" else None) for n in nodes}
    out = []
    for e in edges:
        a, b = where.get(e.src), where.get(e.dst)
        cross = a != b and (a is not None or not e.static)
        out.append(dataclasses.replace(e, crossing=cross) if cross != e.crossing else e)
    return out


def _numbered_reasons(cpu: dict) -> tuple:
    """Reason text → operator indices, grouped by reason code and numbered by :data:`REASON_NUMBER`."""
    by_code: dict = {}
    for text, nodes in cpu.items():
        by_code.setdefault(reason_code(text), []).append((str(text), tuple(nodes)))
    out = []
    for code in sorted(by_code, key=lambda c: REASON_NUMBER.get(c, len(REASON_NUMBER))):
        details = tuple(sorted(by_code[code], key=lambda d: (-len(d[1]), d[1][0])))
        nodes = tuple(sorted(i for _, ns in details for i in ns))
        out.append(Reason(REASON_NUMBER.get(code, REASON_NUMBER["other"]), REASON_CODES.get(code, code), nodes,
                          code, details))
    return tuple(out)


def _subgraph_title(model, subgraph: int) -> str:
    name = model.subgraphs[subgraph].name
    return f"subgraph {subgraph}" + (f" {name!r}" if name else "")


def _graph_view(model, subgraph: int):
    from ..partition import GraphView

    return GraphView(model, subgraph)


def _from_model(model, subgraph: int = 0, *, title=None) -> OpGraph:
    g = _graph_view(model, subgraph)
    items = _op_nodes(model, g, subgraph)
    head, ops, tail, edges = _wire(items, _tensor_infos(g), g.inputs, g.outputs)
    return OpGraph(title or f"model, {_subgraph_title(model, subgraph)}", "model", subgraph,
                   tuple(head + ops + tail), tuple(edges), model=model)


def _modeled_node_us(plan) -> dict:
    """Modeled time of every node: MACs at the target's rate (+ its per-op overhead) on the device, at
    the CPU's rate on the CPU — the figures of ``Plan.estimate`` and ``Partition.est_us``."""
    from ..partition import node_macs

    c = plan.target.cost
    cpu_rate = c.get("cpu_macs_per_cycle", 4.0) * c.get("cpu_clock_mhz", 1500.0)
    rate = c.get("macs_per_cycle", 1.0) * c.get("clock_mhz", 1.0)
    over = c.get("op_overhead_us", 0.0)
    out = {}
    for p in plan.placements:
        m = node_macs(plan.graph, p.node)
        out[f"n{p.node}"] = (m / rate + over) if p.partition is not None else m / cpu_rate
    return out


def _placed(model, subgraph: int, plans, title: str, source: str, placements=None) -> OpGraph:
    """A view of ``model`` with the placements of ``plans`` (one per delegate; the first names the CPU
    reasons); group ids "P{k}" (one plan) or "{target}:P{k}"."""
    first = plans[0]
    g = first.graph if first.graph is not None else _graph_view(model, subgraph)
    items = _op_nodes(model, g, subgraph)
    several = len(plans) > 1
    groups, where = [], {}
    for j, plan in enumerate(plans):
        for part in plan.partitions:
            gid = f"{plan.target.name}:P{part.index}" if several else f"P{part.index}"
            for i in part.nodes:
                where.setdefault(i, (gid, part.index))
            groups.append((gid, plan, part))
    placements = placements if placements is not None else first.placements
    cpu: dict = {}
    for p in placements:
        if p.node not in where:
            cpu.setdefault(p.reason, []).append(p.node)
    reasons = _numbered_reasons(cpu)
    number = {i: r.number for r in reasons for i in r.nodes}
    reason_text = {i: text for r in reasons for text, ns in r.details for i in ns}
    for item in items:
        node = item[0]
        i = node.index
        if i in where:
            gid, k = where[i]
            item[0] = dataclasses.replace(node, lane="device", group=gid, partition=k,
                                          tooltip=node.tooltip + f" — on the device, {gid}")
        else:
            why = reason_text.get(i, "")
            item[0] = dataclasses.replace(node, lane="cpu", reason=why, badges=(number[i],) if i in number else (),
                                          tooltip=node.tooltip + f" — on the CPU [{number.get(i, '')}]: {why}")
    head, ops, tail, edges = _wire(items, _tensor_infos(g), g.inputs, g.outputs)
    nodes = head + ops + tail
    edges = _mark_crossings(nodes, edges)
    group_recs = []
    for gid, plan, part in groups:
        group_recs.append(Group(gid, f"{gid} · {plan.target.name} · {len(part.nodes)} nodes",
                                tuple(f"n{i}" for i in part.nodes), part.index, plan.target.name, part.bytes_in,
                                part.bytes_out, part.est_us, {"MACs": part.macs}))
    view = OpGraph(title, source, subgraph, tuple(nodes), tuple(edges), tuple(group_recs), reasons, model=model,
                   plan=first)
    if not several:
        view.overlays["modeled"] = Overlay("modeled", _modeled_node_us(first), "{:.1f} µs", "sum",
                                              f"modeled with the {first.target.name} target's cost figures")
    return view


def _from_plan(plan, *, title=None) -> OpGraph:
    model = plan.model
    return _placed(model, plan.subgraph, [plan], title or f"plan {plan.name}, {_subgraph_title(model, plan.subgraph)}",
                   "plan")


def _measured_ms(measured, subgraph: int) -> dict:
    """node index → milliseconds from a Profile, StepEvents or a dict."""
    if measured is None:
        return {}
    if isinstance(measured, dict):
        return {int(k): float(v) for k, v in measured.items()}
    nodes = getattr(measured, "nodes", None)
    if nodes is not None and hasattr(measured, "by_op"):        # a Profile
        return {r.node: r.avg_ms for r in nodes}
    sums: dict = {}
    for ev in measured:                                           # StepEvents
        if ev.subgraph == subgraph and not ev.callers:
            s = sums.setdefault(ev.node, [0.0, 0])
            s[0] += ev.elapsed_ms
            s[1] += 1
    return {k: v[0] / v[1] for k, v in sums.items()}


def _from_run(it, subgraph: int = 0, *, measured=None, title=None) -> OpGraph:
    delegations = [(d, r) for d, r in it.delegations if r is not None and r.plans.get(subgraph) is not None]
    model = it.model
    ms = _measured_ms(measured, subgraph)
    if not delegations:
        view = _from_model(model, subgraph,
                           title=title or f"run without delegation, {_subgraph_title(model, subgraph)}")
        view.source = "run"
    else:
        plans = [r.plans[subgraph] for _, r in delegations]
        names = ", ".join(getattr(d, "name", str(d)) for d, _ in delegations)
        view = _placed(model, subgraph, plans, title or f"run with {names}, {_subgraph_title(model, subgraph)}", "run",
                       placements=it.placements(subgraph))
        # what the devices counted, per partition; the delegate node of each partition
        several = len(plans) > 1
        groups = []
        by_gid = {}
        for (d, r), plan in zip(delegations, plans):
            stats = getattr(getattr(d, "device", None), "stats", {}) or {}
            dnodes = r.nodes.get(subgraph, ())
            for k, part in enumerate(plan.partitions):
                gid = f"{plan.target.name}:P{part.index}" if several else f"P{part.index}"
                extra = {}
                if k < len(dnodes):
                    extra["delegate node"] = dnodes[k]
                    if dnodes[k] in ms:
                        extra["measured ms"] = ms[dnodes[k]]
                s = stats.get((subgraph, part.index))
                if s is not None:
                    extra.update({"invocations": s.invocations, "device µs (modeled, summed)": s.device_us,
                                  "bytes copied in": s.bytes_in, "bytes copied out": s.bytes_out,
                                  "weights bytes": s.weights_bytes})
                by_gid[gid] = extra
        for grp in view.groups:
            groups.append(dataclasses.replace(grp, stats={**grp.stats, **by_gid.get(grp.id, {})}))
        view.groups = tuple(groups)
    own = {f"n{i}": v for i, v in ms.items() if i < len(model.subgraphs[subgraph].operators or ())}
    if own:
        view.overlays["measured"] = Overlay("measured", own, "{:.3f} ms", "sum",
                                               "measured on this machine (Interpreter.profile / steps)")
    return view


# -- compiled models: workbench-offload ops ----------------------------------------------------------

def offload_ops(model, subgraph: int = 0) -> dict:
    """operator index → the decoded custom options of every ``workbench-offload`` op of the subgraph."""
    from flatbuffers import flexbuffers

    from ..partition.compiler import FORMAT, OFFLOAD_OP

    out = {}
    codes = model.operator_codes or ()
    for i, op in enumerate(model.subgraphs[subgraph].operators or ()):
        if op_name(codes[op.opcode_index]) != OFFLOAD_OP or op.custom_options is None:
            continue
        doc = flexbuffers.Loads(bytes(op.custom_options))
        if isinstance(doc, dict) and doc.get("format") == FORMAT:
            out[i] = doc
    return out


def _span(nodes) -> str:
    return span_label(nodes, count=False)


def _node_macs(g, i: int) -> int:
    from ..partition import node_macs

    return node_macs(g, i)


def _modeled_offload_us(target: str, macs, in_bytes, out_bytes) -> float | None:
    """An offload op's modeled time with its target's cost figures (``partition_cost``, as the plan's
    ``Partition.est_us``; weights streamed from host memory are not known here); None for a target
    this workbench does not ship."""
    from ..errors import WorkbenchError
    from ..partition import load_target
    from ..partition.cost import partition_cost

    try:
        cost = load_target(target).cost
    except WorkbenchError:
        return None
    return partition_cost(cost, macs, in_bytes, out_bytes).total_us


def _from_compiled(model, subgraph: int = 0, *, expand: bool = False, title=None) -> OpGraph:
    offs = offload_ops(model, subgraph)
    g = _graph_view(model, subgraph)
    items = _op_nodes(model, g, subgraph)
    infos = _tensor_infos(g)
    groups = []
    if not expand:
        for item in items:
            node = item[0]
            doc = offs.get(node.index)
            if doc is None:
                item[0] = dataclasses.replace(node, lane="cpu")
                continue
            k = int(doc.get("partition", 0))
            orig = [int(x) for x in doc.get("nodes", ())]
            item[0] = dataclasses.replace(
                node, kind="offload", lane="device", partition=k, group=f"P{k}",
                detail=f"P{k} on {doc.get('target', '?')}: {len(orig)} nodes ({_span(orig)})",
                tooltip=node.tooltip + f" — partition {k} for {doc.get('target', '?')}, original nodes "
                                       f"{', '.join(map(str, orig))}")
        head, ops, tail, edges = _wire(items, infos, g.inputs, g.outputs)
    else:
        new_items = []
        for item in items:
            node, ins, outs = item
            doc = offs.get(node.index)
            if doc is None:
                new_items.append([dataclasses.replace(node, lane="cpu"), ins, outs])
                continue
            sub = load(bytes(doc["model"]))
            sg0 = sub.subgraphs[0]
            sg_view = _graph_view(sub, 0)
            k, o = int(doc.get("partition", 0)), node.index
            orig = [int(x) for x in doc.get("nodes", ())]
            extra = len(sg_view.nodes) - len(orig)          # unpacking ops copied in front (fp16 weights)
            alias = {}
            for j, t in enumerate(sg0.inputs or ()):
                alias[t] = ins[j]
            for j, t in enumerate(sg0.outputs or ()):
                alias[t] = outs[j]
            sub_infos = _tensor_infos(sg_view, prefix=o)
            infos.update({key: v for key, v in sub_infos.items() if key[1] not in alias})
            gid = f"P{k}"
            members = []
            for inner in _op_nodes(sub, sg_view, 0, prefix=f"n{o}."):
                n = inner[0]
                j = n.index
                original = orig[j - extra] if j >= extra else None
                if original is not None:
                    tip = f"node {original} of the original model ({n.op} v{n.version}), operators[{j}] of " \
                          f"the sub-model in offload op {o}"
                    detail = f"#{original}"
                else:
                    tip = f"operators[{j}] of the sub-model in offload op {o}: {n.op} unpacking weights (a copy of a " \
                          f"CPU-side node of the original model)"
                    detail = "weights unpacked inside"
                n = dataclasses.replace(n, index=None, original=original, lane="device", group=gid, partition=k,
                                        detail=detail, tooltip=tip)
                members.append(n.id)
                key = lambda t, o=o: alias.get(t, (o, t)) if t >= 0 else -1   # noqa: E731
                new_items.append([n, tuple(key(t) for t in inner[1]), tuple(key(t) for t in inner[2])])
            target = str(doc.get("target", ""))
            in_bytes = [infos[t].nbytes for t in ins if t >= 0 and not infos[t].static]
            out_bytes = [infos[t].nbytes for t in outs if t >= 0]
            macs = [_node_macs(sg_view, j) for j in range(extra, len(sg_view.nodes))]
            groups.append(Group(gid, f"offload op {o} ({node.op}) → P{k} · {target} · nodes {_span(orig)}",
                                tuple(members), k, target, sum(in_bytes), sum(out_bytes),
                                _modeled_offload_us(target, macs, in_bytes, out_bytes),
                                {"offload op": o, "original nodes": tuple(orig)}))
        groups.sort(key=lambda grp: grp.partition)        # P0 first, whatever order the ops run in
        head, ops, tail, edges = _wire(new_items, infos, g.inputs, g.outputs)
    nodes = head + ops + tail
    edges = _mark_crossings(nodes, edges)
    what = "opened" if expand else "as stored"
    return OpGraph(title or f"compiled model ({what}), {_subgraph_title(model, subgraph)}", "compiled", subgraph,
                   tuple(nodes), tuple(edges), tuple(groups), expanded=expand, model=model)


# -- the entry point -----------------------------------------------------------------------------------

def op_graph(obj, subgraph: int = 0, *, expand: bool = False, measured=None, title: str | None = None) -> OpGraph:
    """The view model of ``obj``: a Model (or a path to one), a Plan, an Interpreter (its delegation) or a
    compiled model (its ``workbench-offload`` ops as one node each, or opened with ``expand=True``).

    ``measured``: a :class:`~workbench.interpreter.trace.Profile`, StepEvents or {node: ms} of a run —
    CPU nodes get a "measured" overlay, partitions the time of their delegate node."""
    from ..partition import Plan

    if isinstance(obj, (str, Path)):
        obj = load(Path(obj))
    if isinstance(obj, Plan):
        view = _from_plan(obj, title=title)
    elif hasattr(obj, "delegations") and hasattr(obj, "model"):
        return _from_run(obj, subgraph, measured=measured, title=title)
    elif hasattr(obj, "subgraphs") and hasattr(obj, "operator_codes"):
        if offload_ops(obj, subgraph):
            view = _from_compiled(obj, subgraph, expand=expand, title=title)
        else:
            view = _from_model(obj, subgraph, title=title)
    else:
        raise TypeError(f"op_graph() takes a Model, a path, a Plan or an Interpreter, not {type(obj).__name__}")
    ms = _measured_ms(measured, subgraph)
    if ms:
        view = view.with_overlay("measured", ms, "{:.3f} ms", "sum")
    return view


def op_counts(nodes) -> str:
    """"CONV_2D×3, RELU×2" for a run of nodes."""
    c = Counter(n.op for n in nodes)
    return ", ".join(f"{op}×{k}" if k > 1 else op for op, k in c.most_common())
