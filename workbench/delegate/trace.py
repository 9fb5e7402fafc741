"""Two lanes on one clock: a delegated run as a timeline, and as Chrome trace / Perfetto JSON.

``steps()`` on a delegated interpreter yields the CPU's nodes (measured) and, for each DELEGATE node,
the device's events first — copy in, every node of the partition, copy out, all *modeled* — then the
DELEGATE node itself.  :func:`timeline` lays them on one clock: host events take their measured time;
while the device runs, the host waits for exactly the modeled time of the partition (the host's own
time spent simulating the device is not counted again), and the device's events sit inside that wait.

:func:`chrome_trace` writes the same timeline in the Trace Event format (``traceEvents``: complete
"X" events on a host lane and a device lane, nested within their lane; copies are named "copy in" /
"copy out" with their bytes in ``args``), which chrome://tracing and ui.perfetto.dev open.
:func:`trace_link` shows a written trace in a notebook: a relative link to the file, and how to open it.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

__all__ = ["Slice", "timeline", "chrome_trace", "write_chrome_trace", "trace_link", "TraceLink", "LANES"]

PERFETTO = "https://ui.perfetto.dev"

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
