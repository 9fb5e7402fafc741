"""A simulated device: its own memory, weights uploaded once, boundary tensors copied in and out.

:class:`DeviceKernel` is what a delegate's ``create_kernel`` returns by default.  At prepare it writes
the partition as a .tflite of its own (:func:`workbench.partition.submodel` + ``dump``: those bytes are
the device's copy of the weights, uploaded once) and loads it into an interpreter whose tensor memory
is the device's.  Every invoke copies the partition's input tensors in (real copies, counted per
tensor), runs the partition's own kernels there, and copies the outputs back.

Time: every figure called *modeled* comes from :mod:`workbench.partition.cost` and the target's cost
figures — per node (its multiply-accumulates), per tensor copied, and for weights that do not fit the
device's memory and are read from host memory on every run.  They add up to the partition's
``est_us``, the partitioner's own estimate, so a plan and a delegated run agree by construction.  What
the host spends simulating the device is *measured*, and kept apart.

While the interpreter runs ``steps()``, the kernel reports each copy and each node inside the partition
as events on the "device" lane (:class:`DeviceEvent`, a :class:`workbench.interpreter.StepEvent` that also
names its core in ``unit``), with the inner tensors.  A target that lists several cores (its ``devices``
table: :mod:`workbench.partition.devices`) runs each node on its core — ``unit`` "eve:0", "dsp:0" — with that
core's rates, and a tensor one core made and another reads is copied between them (kind "copy"); a target
without that table has one core, ``unit`` "device".
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..interpreter import StepEvent
from ..partition import Partition, node_macs, submodel
from ..partition.cost import device_node_us, transfer_us
from ..partition.devices import devices_of, schedule
from ..schema import dump
from .offload import Offload, OffloadData

__all__ = ["Device", "DeviceKernel", "DeviceData", "PartitionStats", "DeviceEvent"]


@dataclass(frozen=True)
class DeviceEvent(StepEvent):
    """A step on the device, with the core that ran it (``unit``: "device", or "eve:0", "dsp:0" …)."""

    unit: str = "device"


@dataclass
class PartitionStats:
    """Counters of one partition on the device."""

    partition: int
    nodes: int
    est_us: float               # modeled device time of one run (compute + copies + streamed weights)
    weights_bytes: int = 0      # the partition's .tflite, uploaded once at prepare
    streamed_bytes: int = 0     # weights read from host memory on every run (they do not fit the device's)
    invocations: int = 0
    device_us: float = 0.0      # modeled, summed over invocations
    bytes_in: int = 0           # copied in, summed over invocations
    bytes_out: int = 0
    last_us: float = 0.0        # modeled time of the last run

    def reset(self) -> None:
        self.invocations, self.device_us, self.bytes_in, self.bytes_out, self.last_us = 0, 0.0, 0, 0, 0.0


@dataclass
class Device:
    """The simulated device of one delegate: what it holds and what it did."""

    name: str
    stats: dict = field(default_factory=dict)       # (subgraph, partition) → PartitionStats

    @property
    def device_us(self) -> float:
        """Modeled device time, summed over every partition and invocation."""
        return sum(s.device_us for s in self.stats.values())

    @property
    def weights_bytes(self) -> int:
        return sum(s.weights_bytes for s in self.stats.values())

    @property
    def bytes_moved(self) -> int:
        return sum(s.bytes_in + s.bytes_out for s in self.stats.values())

    @property
    def invocations(self) -> int:
        return max((s.invocations for s in self.stats.values()), default=0)

    def reset(self) -> None:
        for s in self.stats.values():
            s.reset()

    def __repr__(self) -> str:
        return (f"Device({self.name}: {len(self.stats)} partition(s), weights {self.weights_bytes:,} bytes, "
                f"{self.bytes_moved:,} bytes copied, {self.device_us:.1f} µs modeled over {self.invocations} run(s))")


@dataclass(frozen=True, eq=False)
class DeviceData(OffloadData):
    """The prepared data of one delegate node: the partition on the device."""

    nodes: tuple = ()               # the original nodes the partition holds
    weights_bytes: int = 0
    est_us: float = 0.0
    node_us: tuple = ()             # modeled time of each node, in the order the device runs them
    inner_nodes: tuple = ()         # original node index of each operator of the partition's .tflite (-1: unpacks)
    outer_tensor: dict = field(default_factory=dict, repr=False)   # inner tensor → outer tensor (by name)
    cost: dict = field(default_factory=dict, repr=False)
    streamed_bytes: int = 0
    stats: PartitionStats | None = field(default=None, repr=False)
    precision: str = "float"
    calibrated: object = field(default=None, repr=False)   # the Calibrated int8 copy (precision int8)
    steps: tuple = field(default=(), repr=False)   # the run on several cores (devices.schedule; () for one core)

    @property
    def last_modeled_ms(self) -> float:
        return self.stats.last_us / 1000.0

    def __repr__(self) -> str:
        return (f"DeviceData(P{self.partition} on {self.target}, {self.precision}: {len(self.nodes)} nodes, "
                f"{len(self.inputs)} in / {len(self.outputs)} out tensors, weights {self.weights_bytes:,} bytes, "
                f"~{self.est_us:.1f} µs modeled per run)")


class DeviceKernel(Offload):
    """Runs one partition on the simulated device (see the module's text)."""

    name = "device"
    foldable = False                 # every invoke is a device run, even when all inputs are constants

    def __init__(self, delegate, partition: Partition):
        self.delegate = delegate
        self.partition = partition

    def prepare(self, context, node):
        plan = self.delegate.plan_of(self.partition)
        part = self.partition
        calibrated = getattr(self.delegate, "calibrated", {}).get((node.subgraph, part.index))
        inner_model = calibrated.model if calibrated is not None else submodel(plan, part.index)
        blob = dump(inner_model)
        shared = getattr(plan.target, "variables", "private") == "shared"
        base = self.start(context, node, blob, part.index, plan.target.name, shared=shared)
        cost = plan.target.cost
        names = {}
        for t, meta in enumerate(plan.model.subgraphs[plan.subgraph].tensors or ()):
            names.setdefault(meta.name, t)
        inner_tensors = inner_model.subgraphs[0].tensors or ()
        # an int8 copy names a float boundary tensor's int8 twin NAME/int8
        outer_tensor = {k: names.get(meta.name, names.get((meta.name or "").removesuffix("/int8"), -1))
                        for k, meta in enumerate(inner_tensors)}
        producer = plan.graph.producer
        mine = set(part.nodes)
        # which original node each operator of the partition's .tflite is (by its output tensors; -1: an
        # operator of the device's own — unpacking weights, the int8 copy's boundary conversions)
        # (in an int8 copy, the op writing NAME/int8 is the original node; the DEQUANTIZE writing the float
        # NAME is the boundary conversion)
        inner_names = {meta.name or "" for meta in inner_tensors}
        inner_nodes = []
        for op in inner_model.subgraphs[0].operators or ():
            found = -1
            for k in op.outputs or ():
                name = inner_tensors[k].name or "" if k >= 0 else ""
                if not name.endswith("/int8") and f"{name}/int8" in inner_names:
                    continue                        # the float twin of a boundary tensor
                t = outer_tensor.get(k, -1) if k >= 0 else -1
                if t >= 0 and producer[t] in mine:
                    found = producer[t]
                    break
            inner_nodes.append(found)
        inner_nodes = tuple(inner_nodes)
        devices = devices_of(plan.target)
        steps = schedule(plan, part, devices, getattr(self.delegate, "cores", None)) if devices else ()
        if steps:
            on = {st.node: st.us for st in steps if st.kind == "node"}
            node_us = tuple(on[i] for i in part.nodes)
        else:
            node_us = tuple(device_node_us(cost, node_macs(plan.graph, i)) for i in part.nodes)
        stats = PartitionStats(part.index, len(part), part.est_us, len(blob), part.streamed_bytes)
        self.delegate.device.stats[(node.subgraph, part.index)] = stats
        return DeviceData(base.inner, base.inputs, base.outputs, base.partition, base.target, tuple(part.nodes),
                          len(blob), part.est_us, node_us, inner_nodes, outer_tensor, dict(cost),
                          part.streamed_bytes, stats, "int8" if calibrated is not None else "float", calibrated,
                          steps)

    # -- running ------------------------------------------------------------------------------------
    def invoke(self, context, node, data) -> None:
        if context.interpreter.tracing:
            self._traced(context, node, data, context.interpreter.emit)
            return
        inner = data.inner
        tensors = context.tensors
        moved_in = moved_out = 0
        for k, t in zip(data.inputs, node.inputs):
            value = tensors[t]
            inner.set_tensor(k, value)                # copy in
            moved_in += value.nbytes
        inner.invoke()
        for k, t in zip(data.outputs, node.outputs):
            out = tensors[t]
            np.copyto(out, inner.get_tensor(k))        # copy out
            moved_out += out.nbytes
        if data.cost.get("shared_memory"):   # the simulation copies; a device in the host's memory would not
            moved_in = moved_out = 0
        self._count(data, moved_in, moved_out)

    def _count(self, data, moved_in: int, moved_out: int) -> None:
        s = data.stats
        s.invocations += 1
        s.last_us = data.est_us
        s.device_us += data.est_us
        s.bytes_in += moved_in
        s.bytes_out += moved_out

    def _traced(self, context, node, data, emit) -> None:
        """The same run, reported step by step on the device lane."""
        inner = data.inner
        tensors = context.tensors
        callers = context.interpreter.callers
        clock = time.perf_counter
        sg, cost = node.subgraph, data.cost

        steps = data.steps
        unit = {st.node: st.unit for st in steps if st.kind == "node"}
        first = next(iter(unit.values()), "device")      # nodes of a subgraph the partition calls run there
        copies: dict = {}           # (kind, tensor) → the schedule's copies of it; ("copy", node) → into that node
        for st in steps:
            if st.kind != "node":
                copies.setdefault((st.kind, st.node if st.kind == "copy" else st.tensor), []).append(st)

        def copy(kind, t, nbytes, elapsed, value):
            planned = copies.get((kind, t)) or [None]
            for k, st in enumerate(planned):
                emit(DeviceEvent(sg, node.index, kind, 1, context.name(t), None,
                                 (value,) if kind == "copy in" else (), (value,) if kind == "copy out" else (),
                                 (t,) if kind == "copy in" else (), (t,) if kind == "copy out" else (),
                                 elapsed * 1000.0 if k == 0 else 0.0, callers, lane="device", kind=kind,
                                 modeled_ms=(transfer_us(cost, nbytes) if st is None else st.us) / 1000.0,
                                 bytes=nbytes, unit="device" if st is None else st.unit))

        moved_in = moved_out = 0
        shared = bool(cost.get("shared_memory"))       # the device reads the host's tensors: nothing is copied
        for k, t in zip(data.inputs, node.inputs):
            value = tensors[t]
            t0 = clock()
            inner.set_tensor(k, value)
            if not shared:
                copy("copy in", t, value.nbytes, clock() - t0, np.array(value))
                moved_in += value.nbytes
        if data.streamed_bytes:
            st = (copies.get(("stream", -1)) or [None])[0]
            emit(DeviceEvent(sg, node.index, "stream", 1, "weights from host memory", None, (), (), (), (),
                             0.0, callers, lane="device", kind="stream",
                             modeled_ms=data.streamed_bytes / cost["bandwidth_mb_s"] / 1000.0,
                             bytes=data.streamed_bytes, unit="device" if st is None else st.unit))
        modeled = dict(zip(data.nodes, data.node_us))
        outer = data.outer_tensor
        for ev in inner.steps():
            orig = data.inner_nodes[ev.node] if ev.subgraph == 0 and ev.node < len(data.inner_nodes) else -1
            for st in copies.pop(("copy", orig), ()) if ev.subgraph == 0 and orig >= 0 else ():
                emit(DeviceEvent(sg, orig, "copy", 1, f"{context.name(st.tensor)} ({st.source} → {st.unit})", None,
                                 (), (), (st.tensor,), (st.tensor,), 0.0, callers, lane="device", kind="copy",
                                 modeled_ms=st.us / 1000.0, bytes=st.bytes, unit=st.unit))
            emit(DeviceEvent(sg if ev.subgraph == 0 else ev.subgraph, orig, ev.op, ev.version, ev.kernel,
                             ev.data, ev.inputs, ev.outputs,
                             tuple(outer.get(t, -1) if t >= 0 else t for t in ev.input_ids),
                             tuple(outer.get(t, -1) if t >= 0 else t for t in ev.output_ids),
                             ev.elapsed_ms, callers + tuple(ev.callers), lane="device",
                             modeled_ms=modeled.get(orig, 0.0) / 1000.0 if ev.subgraph == 0 else None,
                             unit=unit.get(orig, first) if steps else "device"))
        for k, t in zip(data.outputs, node.outputs):
            out = tensors[t]
            t0 = clock()
            np.copyto(out, inner.get_tensor(k))
            if not shared:
                copy("copy out", t, out.nbytes, clock() - t0, np.array(out))
                moved_out += out.nbytes
        self._count(data, moved_in, moved_out)
