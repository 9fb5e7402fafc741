"""A simulated device: its own memory, weights uploaded once, boundary tensors copied in and out.

:class:`DeviceKernel` is what a delegate's ``create_kernel`` returns by default.  At prepare it writes
the partition as a .tflite of its own (:func:`workbench.partition.submodel` + ``dump``: those bytes are
the device's copy of the weights, uploaded once) and loads it into an interpreter whose tensor memory
is the device's.  Every invoke copies the partition's input tensors in (real copies, counted per
tensor), runs the partition's own kernels there, and copies the outputs back.

:class:`Device` keeps the counters: bytes uploaded and copied per tensor, invocations, and the modeled
device time from the target's cost figures — the same figures the partitioner used for its estimate
(:attr:`workbench.partition.Partition.est_us`), so a plan's estimate and a delegated run's modeled total
agree by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..partition import Partition, submodel
from ..schema import dump
from .offload import Offload, OffloadData

__all__ = ["Device", "DeviceKernel", "DeviceData", "PartitionStats"]


@dataclass
class PartitionStats:
    """Counters of one partition on the device."""

    partition: int
    nodes: int
    est_us: float               # modeled device time of one run (compute + transfers), from the target's costs
    weights_bytes: int = 0      # uploaded once at prepare
    invocations: int = 0
    device_us: float = 0.0      # modeled, summed over invocations
    bytes_in: int = 0           # copied in, summed over invocations
    bytes_out: int = 0

    def reset(self) -> None:
        self.invocations, self.device_us, self.bytes_in, self.bytes_out = 0, 0.0, 0, 0


@dataclass
class Device:
    """The simulated device of one delegate: what it holds and what it did."""

    name: str
    stats: dict = field(default_factory=dict)       # (subgraph, partition) → PartitionStats

    @property
    def device_us(self) -> float:
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


@dataclass(frozen=True, eq=False)
class DeviceData(OffloadData):
    """The prepared data of one delegate node: the partition on the device."""

    nodes: tuple = ()               # the original nodes the partition holds
    weights_bytes: int = 0
    est_us: float = 0.0
    stats: PartitionStats | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return (f"DeviceData(P{self.partition} on {self.target}: {len(self.nodes)} nodes, "
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
        blob = dump(submodel(plan, self.partition.index))
        shared = getattr(plan.target, "variables", "private") == "shared"
        base = self.start(context, node, blob, self.partition.index, plan.target.name, shared=shared)
        weights = len(blob)
        stats = PartitionStats(self.partition.index, len(self.partition), self.partition.est_us, weights)
        self.delegate.device.stats[(node.subgraph, self.partition.index)] = stats
        return DeviceData(base.inner, base.inputs, base.outputs, base.partition, base.target,
                          tuple(self.partition.nodes), weights, self.partition.est_us, stats)

    def invoke(self, context, node, data) -> None:
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
        s = data.stats
        s.invocations += 1
        s.device_us += data.est_us
        s.bytes_in += moved_in
        s.bytes_out += moved_out
