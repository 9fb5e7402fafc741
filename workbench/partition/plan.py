"""What a partitioner decided: a :class:`Plan` with a placement and a reason for every node."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

__all__ = ["Plan", "Placement", "Partition", "PlanDiff", "node_macs"]


@dataclass(frozen=True)
class Placement:
    node: int
    op: str
    version: int
    partition: int | None        # index into Plan.partitions, None = stays on the CPU
    reason: str

    @property
    def on_target(self) -> bool:
        return self.partition is not None


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

    def __len__(self) -> int:
        return len(self.nodes)


def node_macs(g, i: int) -> int:
    """Multiply-accumulates of node ``i`` (conv / depthwise / deconv / FC / pools; 1 per output element
    for element-wise ops; 0 for data movement)."""
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
        c = self.target.cost
        cpu_rate = c.get("cpu_macs_per_cycle", 4.0) * c.get("cpu_clock_mhz", 1500.0)   # MACs per µs
        g = self.graph
        total = [node_macs(g, i) for i in range(g.num_nodes)] if g is not None else []
        cpu_only = sum(total) / cpu_rate
        on = {i for p in self.partitions for i in p.nodes}
        rest = sum(m for i, m in enumerate(total) if i not in on) / cpu_rate
        return {"cpu_only_us": cpu_only, "plan_us": rest + sum(p.est_us for p in self.partitions),
                "target_us": sum(p.est_us for p in self.partitions), "cpu_rest_us": rest}

    def to_dict(self) -> dict:
        return {
            "target": self.target.name, "strategy": self.strategy, "knobs": self.knobs,
            "nodes": len(self.placements), "offloaded": self.offloaded,
            "partitions": [{"index": p.index, "nodes": list(p.nodes), "inputs": list(p.inputs),
                            "outputs": list(p.outputs), "runtime_inputs": list(p.runtime_inputs),
                            "macs": p.macs, "bytes_in": p.bytes_in, "bytes_out": p.bytes_out,
                            "est_us": round(p.est_us, 3)} for p in self.partitions],
            "placements": [{"node": p.node, "op": p.op, "version": p.version, "partition": p.partition,
                            "reason": p.reason} for p in self.placements],
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


def _span(nodes) -> str:
    s = sorted(nodes)
    if not s:
        return ""
    if s[-1] - s[0] + 1 == len(s):
        return f"{s[0]}-{s[-1]}" if len(s) > 1 else str(s[0])
    return f"{s[0]}..{s[-1]}, {len(s)} nodes"
