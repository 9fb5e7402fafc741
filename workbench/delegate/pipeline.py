"""Frames in flight: latency is not throughput.

A delegated run of one frame keeps each part of the chip busy for only part of the time: the host waits
while the device computes, and three of the AM5729's four EVEs do nothing.  TI's TIDL API keeps several
frames in flight (TIDL API User's Guide, "Using the API", downloads.ti.com/mctools/esd/docs/tidl-api/using_api.html:
one Execution Object per compute core, frames pipelined across the available EOs; an
ExecutionObjectPipeline chains a frame's layer groups, and two of them on the same cores double-buffer):
while the device works on frame k, the host prepares frame k+1, and each EVE takes a different frame.

:func:`pipeline` runs N frames for real (each frame's outputs are the plain delegated run's) and lays
them on the modeled clock:

* one frame is the steps of one modeled run (:func:`workbench.delegate.trace.timeline`): the host's nodes,
  then each partition's copies and nodes on their cores — in order, each after the one before;
* frame f goes to pipeline e = f mod in_flight, and pipeline e uses instance ``e mod count`` of each kind
  of core (4 in flight: EVE 0–3, DSP 0–1; a target without a ``devices`` table has one device); the host
  part runs on one host lane (one CPU core: an assumption);
* at most ``in_flight`` frames are under way at once (frame f starts once frame f − in_flight is done);
* each step takes the earliest time its core is free, after the step before it in its frame.

The result gives each frame's latency (its first step to its last) and the throughput (frames per
second over the whole run), both *modeled*, and a timeline that shows the overlap.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from ..errors import WorkbenchError
from .trace import Slice, chrome_trace, timeline

__all__ = ["pipeline", "PipelineRun"]


@dataclass(frozen=True)
class _Job:
    kind: str          # "host", or a kind of core ("eve", "dsp", "device")
    us: float
    name: str
    slice: Slice


class _Lane:
    """Busy intervals of one core; a job takes the earliest gap that fits."""

    def __init__(self):
        self.busy: list = []       # sorted (start, end)

    def place(self, ready: float, dur: float) -> float:
        t = ready
        k = bisect.bisect_left(self.busy, (ready, ready))
        if k > 0 and self.busy[k - 1][1] > t:
            t = self.busy[k - 1][1]
        while k < len(self.busy) and self.busy[k][0] < t + dur - 1e-9:
            t = max(t, self.busy[k][1])
            k += 1
        bisect.insort(self.busy, (t, t + dur))
        return t


@dataclass
class PipelineRun:
    """N frames run for real and scheduled on the modeled clock (see :func:`pipeline`)."""

    frames: int
    in_flight: int
    outputs: list = field(repr=False)          # per frame: the output arrays, in output-detail order
    slices: list = field(repr=False)           # the modeled timeline of every frame (lane = core)
    latency_ms: list = field(repr=False)       # per frame, modeled
    makespan_ms: float = 0.0                   # first step of frame 0 to the last step of the last frame
    one_frame_ms: float = 0.0                  # one frame alone (in_flight 1, nothing else running)
    clock: str = "modeled"

    @property
    def throughput_fps(self) -> float:
        """Frames per second over the whole run (modeled)."""
        return self.frames / (self.makespan_ms / 1000.0) if self.makespan_ms else float("inf")

    @property
    def mean_latency_ms(self) -> float:
        return float(np.mean(self.latency_ms)) if self.latency_ms else 0.0

    def lanes(self) -> list:
        out = ["host"]
        for s in self.slices:
            if s.unit not in out:
                out.append(s.unit)
        return out

    def overlaps(self) -> int:
        """How many pairs of steps of different frames run at the same time (0: no overlap)."""
        items = sorted(((s.start_us, s.end_us, s.args.get("frame")) for s in self.slices if s.dur_us > 0))
        count = 0
        for k, (a0, a1, fa) in enumerate(items):
            for b0, b1, fb in items[k + 1:]:
                if b0 >= a1 - 1e-9:
                    break
                count += fa != fb
        return count

    def chrome_trace(self, name: str = "pipeline") -> dict:
        return chrome_trace(slices=self.slices, name=name)

    def __str__(self) -> str:
        return (f"{self.frames} frames, {self.in_flight} in flight (modeled clock): latency "
                f"{self.mean_latency_ms:.2f} ms per frame (one frame alone: {self.one_frame_ms:.2f} ms), "
                f"throughput {self.throughput_fps:.2f} frames/s (1 / latency = "
                f"{1000.0 / self.mean_latency_ms if self.mean_latency_ms else float('inf'):.2f})")

    __repr__ = __str__


def _frames(interp, frames, inputs, seed):
    details = interp.get_input_details()
    if inputs is not None:
        out = []
        for frame in inputs:
            arrays = [frame] if isinstance(frame, np.ndarray) else list(frame)
            if len(arrays) != len(details):
                raise WorkbenchError(f"pipeline: a frame has {len(arrays)} array(s); the model has {len(details)} "
                                     f"input(s)")
            out.append([np.asarray(a, d["dtype"]).reshape(d["shape"]) for d, a in zip(details, arrays)])
        if not out:
            raise WorkbenchError("pipeline: no frames in inputs")
        return out
    if not isinstance(frames, int) or isinstance(frames, bool) or frames < 1:
        raise WorkbenchError(f"pipeline: frames must be a whole number >= 1, got {frames!r}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(frames):
        arrays = []
        for d in details:
            dt = np.dtype(d["dtype"])
            shape = tuple(int(x) for x in d["shape"])
            if dt.kind == "f":
                arrays.append(rng.random(shape).astype(dt))
            elif dt.kind in "iu":
                info = np.iinfo(dt)
                arrays.append(rng.integers(max(info.min, -128), min(info.max, 127) + 1, shape).astype(dt))
            elif dt.kind == "b":
                arrays.append(rng.random(shape) < 0.5)
            else:
                raise WorkbenchError(f"pipeline: cannot make a random frame for input {d['name']} ({dt}); give "
                                     f"inputs=")
        out.append(arrays)
    return out


def _jobs(slices) -> list:
    """One frame's steps in order: host nodes (top level), and the device's slices (waits are not steps)."""
    jobs = []
    for s in slices:
        if s.depth or s.kind == "wait":
            continue
        kind = "host" if s.lane == "host" else (s.unit or "device").split(":")[0]
        jobs.append(_Job(kind, s.dur_us, s.name, s))
    return jobs


def pipeline(interp, frames: int = 32, in_flight: int = 2, *, inputs=None, seed: int = 0,
             clock: str = "modeled") -> PipelineRun:
    """Run ``frames`` frames on ``interp`` (an interpreter with a delegate, allocated) for real and schedule
    them with ``in_flight`` frames under way at once on the modeled clock (see the module's text).
    ``inputs``: the frames (each a list of arrays, one per model input, or one array); default: ``frames``
    random frames (``seed``)."""
    if not isinstance(in_flight, int) or isinstance(in_flight, bool) or in_flight < 1:
        raise WorkbenchError(f"pipeline: in_flight must be a whole number >= 1, got {in_flight!r}")
    if clock != "modeled":
        raise WorkbenchError("pipeline: frames in flight are scheduled on the modeled clock only (clock='modeled')")
    if not getattr(interp, "delegations", None):
        raise WorkbenchError("pipeline: the interpreter has no delegate (give it experimental_delegates=[...])")
    xs = _frames(interp, frames, inputs, seed)
    details_in, details_out = interp.get_input_details(), interp.get_output_details()
    outputs, one = [], None
    for k, arrays in enumerate(xs):
        for d, a in zip(details_in, arrays):
            interp.set_tensor(d["index"], a)
        if k == 0:
            one = timeline(interp.steps(), clock="modeled")     # the modeled steps of one frame
        else:
            interp.invoke()
        outputs.append([np.array(interp.get_tensor(d["index"])) for d in details_out])
    jobs = _jobs(one)
    counts = devices = _device_counts(interp)
    lanes: dict = {}
    slices, latency, ends = [], [], []
    for f in range(len(xs)):
        t = ends[f - in_flight] if f >= in_flight else 0.0
        first = None
        for j in jobs:
            unit = "host" if j.kind == "host" else (f"{j.kind}:{(f % in_flight) % counts[j.kind]}"
                                                    if j.kind in devices else j.slice.unit)
            lane = lanes.setdefault(unit, _Lane())
            start = lane.place(t, j.us)
            first = start if first is None else first
            s = j.slice
            slices.append(Slice(s.lane, f"frame {f}: {s.name}", start, j.us, "modeled", s.node, s.subgraph, s.kind,
                                0, {**s.args, "frame": f}, unit))
            t = start + j.us
        first = 0.0 if first is None else first
        ends.append(t)
        latency.append((t - first) / 1000.0)
    makespan = (max(ends) - min((s.start_us for s in slices), default=0.0)) / 1000.0 if ends else 0.0
    return PipelineRun(len(xs), in_flight, outputs, slices, latency, makespan, sum(j.us for j in jobs) / 1000.0)


def _device_counts(interp) -> dict:
    """kind of core → how many the delegate's target has (its ``devices`` table); {} for one device."""
    from ..partition.devices import devices_of

    out: dict = {}
    for delegate, _ in interp.delegations:
        target = getattr(delegate, "target", None)
        devs = devices_of(target) if target is not None and getattr(target, "devices", None) else None
        if devs is not None:
            out.update({k: c.count for k, c in devs.kinds.items()})
    return out
