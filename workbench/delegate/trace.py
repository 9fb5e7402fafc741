"""One clock for a run: a delegated run as a timeline, and as Chrome trace / Perfetto JSON.

``steps()`` on a delegated interpreter yields the CPU's nodes and, for each DELEGATE node, the device's
events first — copy in, every node of the partition (each on its core: ``unit``), copy out — then the
DELEGATE node itself.  :func:`timeline` lays them on one clock.

*Which* clock: a timeline must not mix a time measured on this machine (x86, Python) with a time modeled
for the target chip.  ``clock="modeled"`` — the default when the run has a delegate whose target has cost
figures — models the host's nodes from the same target file as the device's: each host node takes
``cpu_node_us`` (its multiply-accumulates at the host's rate) plus the host's per-node overhead (the
``devices.host`` figure, 0 when absent).  ``clock="measured"`` — the default for a run without a
delegate — lays the host's measured times (there is no device then).  Either way, while the device runs
the host waits for exactly the modeled time of the partition, and the device's events sit inside that
wait, each on its core's lane.  What this machine measured is shown apart, by :func:`measured_table`.

:func:`chrome_trace` writes the same timeline in the Trace Event format (``traceEvents``: complete
"X" events on a host lane and one lane per core — "device", or "eve:0", "dsp:0" … —, nested within their
lane; copies are named "copy in" / "copy out" / "copy" with their bytes in ``args``), which
chrome://tracing and ui.perfetto.dev open.
:func:`trace_link` shows a written trace in a notebook: a relative link to the file, and how to open it.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

__all__ = ["Slice", "timeline", "chrome_trace", "write_chrome_trace", "trace_link", "TraceLink", "LANES",
           "measured_table", "MeasuredTable", "CLOCKS", "HostModel", "host_model", "units"]

PERFETTO = "https://ui.perfetto.dev"

LANES = ("host", "device")
CLOCKS = ("modeled", "measured")


@dataclass(frozen=True)
class Slice:
    """One box of the timeline."""

    lane: str              # "host" or "device"
    name: str
    start_us: float
    dur_us: float
    clock: str             # "measured" or "modeled"
    node: int
    subgraph: int
    kind: str              # node, delegate, copy in, copy out, stream, wait
    depth: int = 0         # 0: top level of its lane; 1: inside a control-flow node's span
    args: dict = field(default_factory=dict)
    unit: str = ""         # the core of a device slice ("device", "eve:0" …); "host" on the host lane

    @property
    def end_us(self) -> float:
        return self.start_us + self.dur_us


def _args(ev) -> dict:
    out = {"subgraph": ev.subgraph, "node": ev.node, "op": ev.op, "kernel": ev.kernel,
           "measured_ms": round(ev.elapsed_ms, 6)}
    if ev.modeled_ms is not None:
        out["modeled_ms"] = round(ev.modeled_ms, 6)
    if ev.bytes:
        out["bytes"] = ev.bytes
    return out


@dataclass(frozen=True)
class HostModel:
    """What the modeled clock needs for the host's nodes: the target's cost figures, the host's per-node
    overhead and the model (to count each node's multiply-accumulates)."""

    cost: dict
    overhead_us: float
    model: object
    _graphs: dict = field(default_factory=dict, repr=False, compare=False)

    def node_us(self, subgraph: int, node: int) -> float:
        from ..partition import GraphView, node_macs
        from ..partition.cost import cpu_node_us

        g = self._graphs.get(subgraph)
        if g is None:
            g = self._graphs[subgraph] = GraphView(self.model, subgraph)
        macs = node_macs(g, node) if 0 <= node < len(g.nodes) else 0
        return cpu_node_us(self.cost, macs) + self.overhead_us


def host_model(events=(), *, target=None, model=None) -> HostModel | None:
    """The :class:`HostModel` of a run: from ``target`` and ``model`` when given, else from the run's first
    DELEGATE event (its plan's target and model); None when neither is there."""
    from ..partition import load_target

    plan = None
    for ev in events:
        if ev.kind == "delegate" and getattr(ev.data, "plan", None) is not None:
            plan = ev.data.plan
            break
    if target is None and plan is None:
        return None
    t = load_target(target) if target is not None else plan.target
    m = model if model is not None else (plan.model if plan is not None else None)
    if m is None:
        return None
    if isinstance(m, (str, os.PathLike)):
        from ..schema import load

        m = load(m)
    host = (getattr(t, "devices", None) or {}).get("host", {})
    return HostModel(dict(t.cost), float(host.get("op_overhead_us", 0.0)), m)


def timeline(events, *, clock: str | None = None, target=None, model=None) -> list[Slice]:
    """The events of one ``steps()`` run as slices on one clock (see the module's text).  ``clock``:
    "modeled" (the default when the run has a delegate, or ``target`` and ``model`` are given) or
    "measured"; ``target`` / ``model``: the cost figures and the model of the host's modeled times."""
    events = list(events)
    if clock is not None and clock not in CLOCKS:
        raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
    hm = host_model(events, target=target, model=model) if clock != "measured" else None
    if clock is None:
        clock = "modeled" if hm is not None else "measured"
    elif clock == "modeled" and hm is None:
        raise ValueError("clock='modeled' needs cost figures: a delegated run, or target= and model=")

    def host_us(ev) -> float:
        return hm.node_us(ev.subgraph, ev.node) if clock == "modeled" else ev.elapsed_ms * 1000.0

    slices: list[Slice] = []
    t = 0.0
    pending: list = []          # events that come before the node that ran them (device, nested subgraphs)
    for ev in events:
        if ev.lane == "device" or ev.callers:
            pending.append(ev)
            continue
        if ev.kind == "delegate":
            total = (ev.modeled_ms or 0.0) * 1000.0
            slices.append(Slice("host", f"{ev.op} (waiting for the device)", t, total, "modeled", ev.node,
                                ev.subgraph, "wait", 0, _args(ev), "host"))
            u = t
            for d in pending:
                if d.lane != "device":
                    continue
                dur = min((d.modeled_ms or 0.0) * 1000.0, max(t + total - u, 0.0))
                name = d.kind if d.kind in ("copy in", "copy out", "copy", "stream") else d.op
                slices.append(Slice("device", name, u, dur, "modeled", d.node, d.subgraph, d.kind, 0, _args(d),
                                    getattr(d, "unit", "device")))
                u += dur
            t += total
        else:
            nested = [d for d in pending if d.lane != "device"]
            if clock == "modeled":
                dur = host_us(ev) + sum(host_us(d) for d in nested)
            else:
                dur = ev.elapsed_ms * 1000.0
            slices.append(Slice("host", ev.op, t, dur, clock, ev.node, ev.subgraph, ev.kind, 0, _args(ev), "host"))
            u = t
            for d in nested:       # nodes of the subgraphs this node called, inside its span
                sub = min(host_us(d), max(t + dur - u, 0.0))
                slices.append(Slice("host", d.op, u, sub, clock, d.node, d.subgraph, d.kind, 1, _args(d), "host"))
                u += sub
            t += dur
        pending = []
    return slices


def units(slices) -> list[str]:
    """The lanes of a timeline: "host", then every core in the order it first appears."""
    out = ["host"]
    for s in slices:
        name = s.unit or s.lane
        if name not in out:
            out.append(name)
    return out


@dataclass(frozen=True)
class MeasuredTable:
    """What this machine measured for a run (x86, Python: the time the workbench took to compute each
    node, the device's nodes included), kept apart from the modeled timeline."""

    rows: tuple           # (subgraph, node, op, where, measured ms)
    label: str = "measured on this machine (x86, Python) — not the target's time, not on the timeline"

    @property
    def total_ms(self) -> float:
        return sum(r[4] for r in self.rows)

    def __str__(self) -> str:
        out = [self.label, f"{'node':<8} {'op':<24} {'ran on':<10} {'measured ms':>12}"]
        out += [f"{sg}:{n:<6} {op:<24} {where:<10} {ms:>12.3f}" for sg, n, op, where, ms in self.rows]
        out.append(f"{'total':<44} {self.total_ms:>12.3f}")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        body = "".join(f"<tr><td>{sg}:{n}</td><td>{html.escape(op)}</td><td>{html.escape(w)}</td>"
                       f"<td style='text-align:right'>{ms:.3f}</td></tr>" for sg, n, op, w, ms in self.rows)
        return (f"<table class='wb-measured'><caption>{html.escape(self.label)}</caption><tr><th>node</th>"
                f"<th>op</th><th>ran on</th><th>measured ms</th></tr>{body}<tr><td colspan='3'>total</td>"
                f"<td style='text-align:right'>{self.total_ms:.3f}</td></tr></table>")


def measured_table(events) -> MeasuredTable:
    """The measured times of a ``steps()`` run, one row per node (host nodes and the device's nodes, the
    host's time simulating them), labelled as this machine's: never a timeline's clock."""
    rows = tuple((ev.subgraph, ev.node, ev.op, getattr(ev, "unit", ev.lane) if ev.lane == "device" else "host",
                  ev.elapsed_ms) for ev in events if ev.kind == "node")
    return MeasuredTable(rows)


def chrome_trace(events=None, *, name: str = "workbench", slices=None, **timeline_kw) -> dict:
    """The Trace Event format of :func:`timeline` (times in µs, one process, a host lane and one lane per
    core); ``slices``: an already laid-out timeline instead of ``events`` (:func:`workbench.delegate.pipeline`)."""
    slices = timeline(events, **timeline_kw) if slices is None else list(slices)
    lanes = units(slices)
    tids = {lane: k + 1 for k, lane in enumerate(lanes)}
    host_clock = next((s.clock for s in slices if s.lane == "host" and s.kind != "wait"), "modeled")
    out = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": name}}]
    for lane, tid in tids.items():
        label = f"host (CPU, {host_clock})" if lane == "host" else f"{lane} (modeled)"
        out.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": label}})
    for s in slices:
        out.append({"name": s.name, "cat": s.kind, "ph": "X", "pid": 1, "tid": tids[s.unit or s.lane],
                    "ts": round(s.start_us, 3), "dur": round(s.dur_us, 3), "args": {**s.args, "clock": s.clock}})
    return {"traceEvents": out, "displayTimeUnit": "ms"}


def write_chrome_trace(events, path, **kw) -> Path:
    """Write :func:`chrome_trace` as JSON to ``path`` (open it in ui.perfetto.dev or chrome://tracing)."""
    path = Path(path)
    path.write_text(json.dumps(chrome_trace(events, **kw)), encoding="utf-8")
    return path


@dataclass(frozen=True)
class TraceLink:
    """A written trace file, shown in a notebook as a link relative to the working directory (the
    notebook's folder in Jupyter) and one line on how to open it in Perfetto."""

    path: Path

    @property
    def href(self) -> str:
        """The link target: the path relative to the working directory when the file is inside it."""
        here = Path.cwd().resolve()
        full = self.path.resolve()
        rel = os.path.relpath(full, here) if full.is_relative_to(here) else str(full)
        return quote(Path(rel).as_posix())

    def how_to_open(self) -> str:
        return (f"To look at it: download {self.path.name} (the link, or right-click it in the file browser → "
                f"Download), open {PERFETTO} and choose \u201cOpen trace file\u201d. chrome://tracing opens it too.")

    def __str__(self) -> str:
        return f"{self.path}\n{self.how_to_open()}"

    def _repr_html_(self) -> str:
        name = html.escape(self.path.name, quote=True)
        steps = html.escape(self.how_to_open()).replace(
            html.escape(PERFETTO), f"<a href='{PERFETTO}' target='_blank' rel='noopener'>{html.escape(PERFETTO)}</a>")
        return (f"<div class='wb-trace-link'>the Chrome trace: <a href='{html.escape(self.href, quote=True)}' "
                f"download='{name}'><code>{html.escape(str(self.path))}</code></a><br><small>{steps}</small></div>")


def trace_link(path) -> TraceLink:
    """A trace file written by :func:`write_chrome_trace`, to show in a notebook (a link and how to open it)."""
    return TraceLink(Path(path))
