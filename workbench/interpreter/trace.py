"""What ``Interpreter.steps()`` yields and what ``Interpreter.profile()`` returns."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class StepEvent:
    """One executed node: what ran, with which prepared data, on which arrays, how long it took.

    Nodes of nested subgraphs (the body of a WHILE, the branch an IF took, an init subgraph of
    CALL_ONCE) come as events too, before the event of the node that called them; ``subgraph``
    says where a node lives and ``callers`` how it was reached.

    A delegate's kernel adds events of its own before the event of its DELEGATE node: ``lane``
    "device", ``kind`` "copy in" / "node" / "copy out" (``bytes`` copied), with ``modeled_ms`` from
    the device's cost model beside the measured ``elapsed_ms`` (the host's time simulating it).
    """

    subgraph: int
    node: int
    op: str
    version: int
    kernel: str
    data: Any                       # the frozen <Op>Data prepare computed
    inputs: tuple = field(repr=False)    # copies of the input arrays (None for an absent optional input)
    outputs: tuple = field(repr=False)   # copies of the output arrays
    input_ids: tuple = ()
    output_ids: tuple = ()
    elapsed_ms: float = 0.0
    callers: tuple = ()             # (subgraph, node) of the IF / WHILE / CALL_ONCE nodes that ran this
                                    # subgraph, outermost first; () for the subgraph steps() was called on
    lane: str = "host"              # "host" (the CPU), or "device" (inside a delegate's partition)
    kind: str = "node"              # "node", "delegate" (a DELEGATE node), "copy in", "copy out", "stream"
    modeled_ms: float | None = None  # the device's modeled time (None: only measured)
    bytes: int = 0                  # bytes copied (copy events)

    def __repr__(self) -> str:
        shapes = lambda arrs: ", ".join("-" if a is None else f"{_dtype_label(a)}{list(a.shape)}" for a in arrs)  # noqa: E731
        via = "".join(f" via {s}:{n}" for s, n in reversed(self.callers))
        if self.kind in ("copy in", "copy out", "stream"):
            return (f"StepEvent({self.subgraph}:{self.node}{via} {self.kind} [{self.kernel}] {self.bytes:,} bytes, "
                    f"{self.modeled_ms:.3f} ms modeled, {self.elapsed_ms:.3f} ms measured)")
        modeled = "" if self.modeled_ms is None else f", {self.modeled_ms:.3f} ms modeled"
        lane = "" if self.lane == "host" else f" on the {self.lane}"
        return (f"StepEvent({self.subgraph}:{self.node}{via}{lane} {self.op} v{self.version} [{self.kernel}] "
                f"({shapes(self.inputs)}) -> ({shapes(self.outputs)}) {self.elapsed_ms:.3f} ms{modeled})")


def _dtype_label(a) -> str:
    """numpy's name of an array's dtype, except that string tensors (object arrays of bytes) say so."""
    return "string" if a.dtype == object else str(a.dtype)


@dataclass(frozen=True)
class NodeTiming:
    node: int
    op: str
    kernel: str
    avg_ms: float
    percent: float
    cdf_percent: float
    output_shape: tuple


@dataclass(frozen=True)
class OpTypeTiming:
    op: str
    count: int
    avg_ms: float
    percent: float
    cdf_percent: float


@dataclass(frozen=True)
class Profile:
    """Per-node and per-op-type timings over ``runs`` invokes (like TFLite's benchmark_model)."""

    runs: int
    total_ms: float                 # average time of one whole invoke, measured node by node
    nodes: tuple                    # NodeTiming in execution order
    by_op: tuple                    # OpTypeTiming, slowest first

    def top(self, n: int = 10) -> tuple:
        return tuple(sorted(self.nodes, key=lambda r: -r.avg_ms)[:n])

    def __repr__(self) -> str:
        lines = [f"Profile over {self.runs} runs: {self.total_ms:.3f} ms per invoke, {len(self.nodes)} nodes",
                 "", "============================== Summary by node type ==============================",
                 f"{'node type':<28}{'count':>7}{'avg ms':>12}{'%':>9}{'cdf%':>9}"]
        for r in self.by_op:
            lines.append(f"{r.op:<28}{r.count:>7}{r.avg_ms:>12.3f}{r.percent:>8.2f}%{r.cdf_percent:>8.2f}%")
        lines += ["", "============================== Top nodes by time ==============================",
                  f"{'node':>5}  {'op':<24}{'kernel':<34}{'avg ms':>10}{'%':>9}{'cdf%':>9}  output"]
        running = 0.0
        for r in self.top(10):
            running += r.percent
            lines.append(f"{r.node:>5}  {r.op:<24}{r.kernel:<34}{r.avg_ms:>10.3f}{r.percent:>8.2f}%"
                         f"{running:>8.2f}%  {list(r.output_shape)}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(r.op)}</td><td>{r.count}</td><td>{r.avg_ms:.3f}</td>"
                       f"<td>{r.percent:.2f}%</td><td>{r.cdf_percent:.2f}%</td></tr>" for r in self.by_op)
        nrows = "".join(f"<tr><td>{r.node}</td><td>{html.escape(r.op)}</td><td><code>{html.escape(r.kernel)}</code>"
                        f"</td><td>{r.avg_ms:.3f}</td><td>{r.percent:.2f}%</td><td>{r.cdf_percent:.2f}%</td>"
                        f"<td>{list(r.output_shape)}</td></tr>" for r in self.nodes)
        return (f"<div><b>Profile</b>: {self.total_ms:.3f} ms per invoke over {self.runs} runs"
                f"<h4>Summary by node type</h4><table><tr><th>op</th><th>count</th><th>avg ms</th><th>%</th>"
                f"<th>cdf %</th></tr>{rows}</table><h4>Per node (execution order)</h4><table><tr><th>node</th>"
                f"<th>op</th><th>kernel</th><th>avg ms</th><th>%</th><th>cdf %</th><th>output</th></tr>{nrows}"
                f"</table></div>")


def build_profile(runs: int, samples: list[list[float]], plan_rows: list[tuple]) -> Profile:
    """``samples[run][k]`` seconds for node k of ``plan_rows`` = [(node, op, kernel, shape)]."""
    if not plan_rows:
        return Profile(runs, 0.0, (), ())
    per_node = np.mean(np.asarray(samples, dtype=np.float64), axis=0) * 1000.0
    total = float(per_node.sum()) or 1e-12
    nodes = []
    cdf = 0.0
    for (node, op, kernel, shape), ms in zip(plan_rows, per_node):
        pct = 100.0 * ms / total
        cdf += pct
        nodes.append(NodeTiming(node, op, kernel, float(ms), pct, cdf, tuple(shape)))
    groups: dict[str, list[float]] = {}
    for r in nodes:
        groups.setdefault(r.op, []).append(r.avg_ms)
    by_op = []
    cdf = 0.0
    for op, values in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
        pct = 100.0 * sum(values) / total
        cdf += pct
        by_op.append(OpTypeTiming(op, len(values), float(sum(values)), pct, cdf))
    return Profile(runs, total, tuple(nodes), tuple(by_op))
