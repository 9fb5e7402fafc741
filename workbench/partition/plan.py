"""What a partitioner decided: a :class:`Plan` with a placement and a reason for every node."""

from __future__ import annotations

import heapq
import html
from dataclasses import dataclass, field

from ..errors import WorkbenchError

__all__ = ["Plan", "Placement", "Partition", "PlanDiff", "PlanError", "Reason", "REASON_CODES", "node_macs",
           "execution_order"]


class PlanError(WorkbenchError):
    """A plan that cannot run: once each partition becomes one operator, the graph has a cycle."""


# why a node is not on the device, as a short code (the reason text says it with the values it saw)
REASON_CODES = {
    "offloaded": "on the device",
    "unsupported-op": "the target has no such op",
    "version": "the op's version is above the highest the target knows",
    "dtype": "a tensor type the target does not take",
    "constraint": "an attribute or shape limit of the target (a pool over 9x9, a rank, a size …)",
    "denied": "denied by the user (deny list)",
    "too-small": "its partition has fewer nodes than the minimum per partition",
    "partition-limit": "its partition is over the limit on partitions",
    "dependency": "it depends on a node that stays on the CPU in a way the strategy cannot cut",
    "not-reached": "the strategy's walk never reached it",
    "resource": "it shares a resource variable with a node that stays on the CPU",
    "delegated": "another delegate already has it",
    "other": "a reason of the delegate's own",
    "after-cut": "it comes after the tensors the user cut at (cut_after): only their ancestors go to the device",
}


class Reason(str):
    """A reason text that also carries its code (one of ``REASON_CODES``): it is a ``str`` everywhere
    (printing, comparing, JSON), and ``reason.code`` says what kind of reason it is."""

    code: str = "other"

    def __new__(cls, code: str, text: str):
        if code not in REASON_CODES:
            raise ValueError(f"unknown reason code {code!r} (known: {', '.join(REASON_CODES)})")
        self = super().__new__(cls, text)
        self.code = code
        return self


def reason_code(reason) -> str:
    """The code of a reason (``"other"`` for a plain string, e.g. a delegate's own ``supports`` text)."""
    return getattr(reason, "code", "other")


@dataclass(frozen=True)
class Placement:
    """Where one node runs and why: the record a plan and a delegated interpreter share."""

    node: int
    op: str
    version: int
    partition: int | None        # index into Plan.partitions, None = stays on the CPU
    reason: str

    @property
    def on_target(self) -> bool:
        return self.partition is not None

    @property
    def lane(self) -> str:
        """Where the node runs: "device" (in a partition) or "cpu"."""
        return "cpu" if self.partition is None else "device"

    @property
    def code(self) -> str:
        """Why, as a short code (``REASON_CODES``): "offloaded" on the device."""
        return "offloaded" if self.partition is not None else reason_code(self.reason)


@dataclass(frozen=True)
class Partition:
    index: int
    nodes: tuple                 # in a valid execution order
    inputs: tuple                # every tensor read from outside (constants included, as TFLite lists them)
    outputs: tuple               # tensors read after the partition, or graph outputs
    runtime_inputs: tuple        # inputs that are not static (constants, unpacked constants): what crosses at run time
    macs: int
    bytes_in: int
    bytes_out: int
    est_us: float                # simulated time on the target, transfers included
    weights_bytes: int = 0       # static inputs (weights), uploaded to the device once
    streamed_bytes: int = 0      # the part of them that does not fit the device's memory: read on every run

    def __len__(self) -> int:
        return len(self.nodes)


def node_macs(g, i: int) -> int:
    """Multiply-accumulates of node ``i`` (conv / depthwise / deconv / FC / pools; 1 per output element
    for element-wise ops; 0 for data movement), as a :class:`~workbench.partition.cost.NodeWork`: an int
    that also carries the op and the node's bytes (input activations, output activations, weights), which
    the cost model reads (``partition/cost.py``)."""
    from .cost import NodeWork

    n = g.nodes[i]
    ins = [t for t in n.inputs if t >= 0]
    return NodeWork(_macs(g, i), n.name,
                    sum(g.nbytes(t) for t in ins if not g.static[t]),
                    sum(g.nbytes(t) for t in n.outputs if t >= 0), sum(g.nbytes(t) for t in ins if g.static[t]))


def _macs(g, i: int) -> int:
    from ..schema.enums import BuiltinOperator as B

    n = g.nodes[i]
    if not n.outputs or n.outputs[0] < 0:
        return 0
    out = 1
    for d in g.shape(n.outputs[0]):
        out *= max(int(d), 1)
    w = g.shape(n.inputs[1]) if len(n.inputs) > 1 and n.inputs[1] >= 0 else ()
    if n.op == B.CONV_2D and len(w) == 4:
        return out * w[1] * w[2] * w[3]
    if n.op == B.DEPTHWISE_CONV_2D and len(w) == 4:
        return out * w[1] * w[2]
    if (n.op == B.TRANSPOSE_CONV or n.name == "Convolution2DTransposeBias"):
        src = n.inputs[2] if n.op == B.TRANSPOSE_CONV and len(n.inputs) > 2 else n.inputs[0]
        ins = 1
        for d in g.shape(src):
            ins *= max(int(d), 1)
        if len(w) == 4:
            return ins * w[0] * w[1] * w[2]
        return out
    if n.op == B.FULLY_CONNECTED and len(w) == 2:
        return out * w[1]
    if n.op in (B.AVERAGE_POOL_2D, B.MAX_POOL_2D, B.L2_POOL_2D):
        from .target import _opt

        return out * max(_opt(g, n, "filter_height", 1), 1) * max(_opt(g, n, "filter_width", 1), 1)
    if n.op in (B.RESHAPE, B.SQUEEZE, B.EXPAND_DIMS, B.DEQUANTIZE, B.DENSIFY, B.PAD, B.CONCATENATION,
                B.STRIDED_SLICE, B.TRANSPOSE, B.DEPTH_TO_SPACE, B.SPACE_TO_DEPTH, B.SHAPE):
        return 0
    return out


def execution_order(g, where, extra_edges=(), name: str = "the plan") -> list:
    """The plan's operators in a dependency order: ``('n', node)`` for a CPU node, ``('p', k)`` for
    partition k (``where[i]``: node i's partition, None on the CPU).  Ties go to the item whose first
    node comes first in the file.

    Edges: data (a tensor's producer → its readers) and control (``g.control_edges``: side-effect ops
    keep their order; plus ``extra_edges``).  A partition must be convex over both — no path may
    leave it and come back — otherwise the contracted graph has a cycle, and this raises a
    :class:`PlanError` that spells the cycle out node by node.
    """
    n = g.num_nodes
    k_max = max((w for w in where if w is not None), default=-1)
    m = n + k_max + 1
    item = [i if w is None else n + w for i, w in enumerate(where)]
    first = [-1] * m
    for i in range(n - 1, -1, -1):
        first[item[i]] = i
    succ: list[list] = [[] for _ in range(m)]
    pred: list[list] = [[] for _ in range(m)]
    indeg = [0] * m
    producer = g.producer

    def edge(a: int, b: int, kind: str) -> None:
        u, v = item[a], item[b]
        if u != v:
            succ[u].append(v)
            pred[v].append((u, a, b, kind))
            indeg[v] += 1

    for b, nd in enumerate(g.nodes):
        for t in nd.inputs:
            if t >= 0 and producer[t] >= 0:
                edge(producer[t], b, "data")
    for a, b in (*g.control_edges, *extra_edges):
        edge(a, b, "control")
    heap = [(first[u], u) for u in range(m) if first[u] >= 0 and indeg[u] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, u = heapq.heappop(heap)
        order.append(("n", u) if u < n else ("p", u - n))
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(heap, (first[v], v))
    if len(order) != sum(1 for u in range(m) if first[u] >= 0):
        raise PlanError(_cycle_message(g, item, pred, indeg, n, name))
    return order


def _cycle_message(g, item, pred, indeg, n, name) -> str:
    # every item left over has a predecessor left over: walk backwards until one repeats
    u = next(v for v in range(len(indeg)) if indeg[v] > 0)
    path, seen = [], {}
    while u not in seen:
        seen[u] = len(path)
        step = next(p for p in pred[u] if indeg[p[0]] > 0)
        path.append(step)
        u = step[0]
    cycle = list(reversed(path[seen[u]:]))      # forward: each step (from item, node a, node b, kind)

    def label(node: int) -> str:
        nd = g.nodes[node]
        where = item[node]
        return f"node {node} {nd.name}" + (f" (in partition {where - n})" if where >= n else "")

    start = next((k for k, step in enumerate(cycle) if step[0] >= n), 0)   # begin where a partition is left
    cycle = cycle[start:] + cycle[:start]
    parts = [label(cycle[0][1])]
    last = cycle[0][1]
    for _, a, b, kind in cycle:
        if a != last:
            parts.append(f"… {label(a)}")
        parts.append(("→ " if kind == "data" else "⇒ ") + label(b))
        last = b
    bad = sorted({x - n for x in (s[0] for s in cycle) if x >= n})
    return (f"{name} is invalid: partition{'s' if len(bad) > 1 else ''} {', '.join(map(str, bad))} "
            f"cannot run as one operator — the graph would have a cycle: {' '.join(parts)} "
            f"(→ data edge, ⇒ control edge: side-effect ops keep their order); a partition must be convex over "
            f"data and control edges")


@dataclass
class PlanDiff:
    a: str
    b: str
    moved: list        # (node, op, placement in a, placement in b, reason in b)
    partitions: tuple  # (count in a, count in b)

    def __bool__(self) -> bool:
        return bool(self.moved) or self.partitions[0] != self.partitions[1]

    def __repr__(self) -> str:
        lines = [f"PlanDiff {self.a} → {self.b}: partitions {self.partitions[0]} → {self.partitions[1]}, "
                 f"{len(self.moved)} nodes moved"]
        for node, op, pa, pb, why in self.moved[:40]:
            lines.append(f"  node {node:>5} {op:<24} {pa:>6} → {pb:<6} {why}")
        if len(self.moved) > 40:
            lines.append(f"  ... {len(self.moved) - 40} more")
        return "\n".join(lines)


def _where(p: Placement) -> str:
    return "cpu" if p.partition is None else f"P{p.partition}"


@dataclass
class Plan:
    target: object
    strategy: str
    knobs: dict
    placements: tuple
    partitions: tuple
    num_tensors: int = 0
    subgraph: int = 0
    model: object = field(default=None, repr=False)
    graph: object = field(default=None, repr=False)

    # -- summaries ----------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return f"{self.target.name}/{self.strategy}"

    @property
    def offloaded(self) -> int:
        return sum(1 for p in self.placements if p.partition is not None)

    def reasons(self) -> dict:
        """Reason → number of CPU nodes with it."""
        out: dict = {}
        for p in self.placements:
            if p.partition is None:
                out[p.reason] = out.get(p.reason, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def estimate(self) -> dict:
        """Simulated times (µs): all on the CPU vs. the plan (target partitions + the CPU rest)."""
        from .cost import cpu_node_us

        c = self.target.cost
        g = self.graph
        total = [node_macs(g, i) for i in range(g.num_nodes)] if g is not None else []
        cpu_only = cpu_node_us(c, sum(total))
        on = {i for p in self.partitions for i in p.nodes}
        rest = cpu_node_us(c, sum(m for i, m in enumerate(total) if i not in on))
        return {"cpu_only_us": cpu_only, "plan_us": rest + sum(p.est_us for p in self.partitions),
                "target_us": sum(p.est_us for p in self.partitions), "cpu_rest_us": rest}

    def to_dict(self) -> dict:
        return {
            "target": self.target.name, "strategy": self.strategy, "knobs": self.knobs,
            "nodes": len(self.placements), "offloaded": self.offloaded,
            "partitions": [{"index": p.index, "nodes": list(p.nodes), "inputs": list(p.inputs),
                            "outputs": list(p.outputs), "runtime_inputs": list(p.runtime_inputs),
                            "macs": p.macs, "bytes_in": p.bytes_in, "bytes_out": p.bytes_out,
                            "weights_bytes": p.weights_bytes, "streamed_bytes": p.streamed_bytes,
                            "est_us": round(p.est_us, 3)} for p in self.partitions],
            "placements": [{"node": p.node, "op": p.op, "version": p.version, "partition": p.partition,
                            "lane": p.lane, "code": p.code, "reason": str(p.reason)} for p in self.placements],
            "estimate_us": {k: round(v, 3) for k, v in self.estimate().items()},
        }

    def diff(self, other: "Plan") -> PlanDiff:
        moved = []
        for a, b in zip(self.placements, other.placements):
            if (a.partition is None) != (b.partition is None) or (a.partition is None and a.reason != b.reason):
                moved.append((a.node, a.op, _where(a), _where(b), b.reason))
        return PlanDiff(self.name, other.name, moved, (len(self.partitions), len(other.partitions)))

    # -- display ------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        n = len(self.placements)
        knobs = ", ".join(f"{k}={v}" for k, v in self.knobs.items() if v not in (None, (), 0, False))
        lines = [f"Plan {self.name}{' (' + knobs + ')' if knobs else ''}: {self.offloaded}/{n} nodes offloaded "
                 f"in {len(self.partitions)} partition(s)"]
        for p in self.partitions:
            lines.append(f"  P{p.index}: {len(p.nodes)} nodes [{_span(p.nodes)}], {len(p.runtime_inputs)} in / "
                         f"{len(p.outputs)} out tensors, {p.macs:,} MACs, {p.bytes_in + p.bytes_out:,} bytes "
                         f"crossing, ~{p.est_us:.1f} µs")
        reasons = self.reasons()
        if reasons:
            lines.append("  on the CPU:")
            for r, k in list(reasons.items())[:12]:
                lines.append(f"    {k:>5} × {r}")
            if len(reasons) > 12:
                lines.append(f"    ... {len(reasons) - 12} more reasons")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = []
        for p in self.placements:
            colour = "#e8f5e9" if p.partition is not None else "#ffebee"
            rows.append(f"<tr style='background:{colour}'><td>{p.node}</td><td><code>{html.escape(p.op)}</code> "
                        f"v{p.version}</td><td>{_where(p)}</td><td>{html.escape(p.reason)}</td></tr>")
        head = html.escape(repr(self).split("\n")[0])
        parts = "".join(f"<li>P{p.index}: {len(p.nodes)} nodes, {p.macs:,} MACs, "
                        f"{p.bytes_in + p.bytes_out:,} bytes crossing</li>" for p in self.partitions)
        return (f"<div><b>{head}</b><ul>{parts}</ul><details><summary>every node</summary><table>"
                f"<tr><th>node</th><th>op</th><th>where</th><th>reason</th></tr>{''.join(rows)}</table>"
                f"</details></div>")


def span_label(nodes, count: bool = True) -> str:
    """Node indices as a short label: "3-7" for a run, "3..12, 6 nodes" (or "3..12") for a spread."""
    s = sorted(nodes)
    if not s:
        return ""
    if s[-1] - s[0] + 1 == len(s):
        return f"{s[0]}-{s[-1]}" if len(s) > 1 else str(s[0])
    return f"{s[0]}..{s[-1]}, {len(s)} nodes" if count else f"{s[0]}..{s[-1]}"


_span = span_label
