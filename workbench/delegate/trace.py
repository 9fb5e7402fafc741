"""Two lanes on one clock: a delegated run as a timeline, and as Chrome trace / Perfetto JSON.

``steps()`` on a delegated interpreter yields the CPU's nodes (measured) and, for each DELEGATE node,
the device's events first — copy in, every node of the partition, copy out, all *modeled* — then the
DELEGATE node itself.  :func:`timeline` lays them on one clock: host events take their measured time;
while the device runs, the host waits for exactly the modeled time of the partition (the host's own
time spent simulating the device is not counted again), and the device's events sit inside that wait.

:func:`chrome_trace` writes the same timeline in the Trace Event format (``traceEvents``: complete
"X" events on a host lane and a device lane, nested within their lane; copies are named "copy in" /
"copy out" with their bytes in ``args``), which chrome://tracing and ui.perfetto.dev open.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Slice", "timeline", "chrome_trace", "write_chrome_trace", "LANES"]

LANES = ("host", "device")


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


def timeline(events) -> list[Slice]:
    """The events of one ``steps()`` run as slices on one clock (see the module's text)."""
    events = list(events)
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
                                ev.subgraph, "wait", 0, _args(ev)))
            u = t
            for d in pending:
                if d.lane != "device":
                    continue
                dur = min((d.modeled_ms or 0.0) * 1000.0, max(t + total - u, 0.0))
                name = d.kind if d.kind in ("copy in", "copy out", "stream") else d.op
                slices.append(Slice("device", name, u, dur, "modeled", d.node, d.subgraph, d.kind, 0, _args(d)))
                u += dur
            t += total
        else:
            dur = ev.elapsed_ms * 1000.0
            slices.append(Slice("host", ev.op, t, dur, "measured", ev.node, ev.subgraph, ev.kind, 0, _args(ev)))
            u = t
            for d in pending:       # nodes of the subgraphs this node called, inside its span
                if d.lane == "device":
                    continue
                sub = min(d.elapsed_ms * 1000.0, max(t + dur - u, 0.0))
                slices.append(Slice("host", d.op, u, sub, "measured", d.node, d.subgraph, d.kind, 1, _args(d)))
                u += sub
            t += dur
        pending = []
    return slices


def chrome_trace(events, *, name: str = "workbench") -> dict:
    """The Trace Event format of :func:`timeline` (times in µs, one process, a host and a device lane)."""
    slices = timeline(events)
    tids = {"host": 1, "device": 2}
    out = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": name}},
           {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "host (CPU, measured)"}},
           {"name": "thread_name", "ph": "M", "pid": 1, "tid": 2, "args": {"name": "device (modeled)"}}]
    for s in slices:
        out.append({"name": s.name, "cat": s.kind, "ph": "X", "pid": 1, "tid": tids[s.lane],
                    "ts": round(s.start_us, 3), "dur": round(s.dur_us, 3), "args": {**s.args, "clock": s.clock}})
    return {"traceEvents": out, "displayTimeUnit": "ms"}


def write_chrome_trace(events, path, **kw) -> Path:
    """Write :func:`chrome_trace` as JSON to ``path`` (open it in ui.perfetto.dev or chrome://tracing)."""
    path = Path(path)
    path.write_text(json.dumps(chrome_trace(events, **kw)), encoding="utf-8")
    return path
