"""A toy delegate that simulates an accelerator on the CPU.

    d = SimulatedAccelerator("tidl")          # any Target: which ops, which limits, what they cost
    plan = d.prepare(model)                   # IsNodeSupported for every node, then TFLite's partitioning
    it = d.interpreter(model)                 # the model with each partition replaced by d's kernel
    it.allocate_tensors(); it.invoke()
    d.device_us, d.stats                      # simulated device time, per partition and in total

:class:`SimulatedAccelerator` runs each partition's sub-model on the CPU through the offload kernel
(:mod:`workbench.delegate.offload`) and adds the partition's simulated time, from the target's cost
figures, to its counters on every invoke.  It can be told to fail on purpose (``fail="prepare"``,
``"init"`` or ``"invoke"``) to show what happens then.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..partition import Partition, Plan, Target, load_target
from ..partition.target import _check
from .interface import FAIL_POINTS, Delegate, DelegateError, NodeSignature
from .offload import Offload

__all__ = ["SimulatedAccelerator", "PartitionKernel", "PartitionStats"]


@dataclass
class PartitionStats:
    partition: int
    nodes: int
    est_us: float               # simulated time of one run (compute + transfers), from the target's costs
    invocations: int = 0
    device_us: float = 0.0


class PartitionKernel(Offload):
    """Runs one partition's sub-model on the CPU (the offload kernel) and counts simulated device time."""

    name = "simulated_delegate"
    foldable = False             # every invoke is a device run, even when all inputs are constants

    def __init__(self, delegate: "SimulatedAccelerator", partition: Partition):
        self.delegate = delegate
        self.partition = partition

    def prepare(self, context, node):
        self.delegate._maybe_fail("init", f"partition {self.partition.index}")
        return super().prepare(context, node)

    def invoke(self, context, node, data) -> None:
        self.delegate._maybe_fail("invoke", f"partition {self.partition.index}")
        super().invoke(context, node, data)
        s = self.delegate.stats[self.partition.index]
        s.invocations += 1
        s.device_us += self.partition.est_us


class SimulatedAccelerator(Delegate):
    """A toy delegate for a :class:`Target`: takes what the target supports (with the target's exact
    reasons), refuses op versions above the target's ``max_version`` at prepare (GPU-delegate words),
    runs its partitions on the CPU and counts the time the device would take.

    ``max_versions``: op name → highest known version, overriding the target's; ``fail``: one of
    ``FAIL_POINTS`` to fail on purpose there.
    """

    def __init__(self, target="xnnpack", *, name: str | None = None, max_versions=None, fail: str | None = None,
                 **knobs):
        super().__init__(**knobs)
        self._target = load_target(target)
        self.name = name or f"simulated-{self._target.name}"
        self.max_versions = dict(max_versions or {})
        if fail is not None and fail not in FAIL_POINTS:
            raise ValueError(f"fail must be one of {', '.join(FAIL_POINTS)} (or None), got {fail!r}")
        self.fail = fail
        self.stats: dict[int, PartitionStats] = {}

    @property
    def target(self) -> Target:
        return self._target

    def max_version(self, sig: NodeSignature) -> int | None:
        if sig.name in self.max_versions:
            return self.max_versions[sig.name]
        c = self._target.constraints(sig.name, sig.is_custom)
        return None if c is None else c.get("max_version")

    def supports(self, sig: NodeSignature) -> str | None:
        # the version was checked already (with the GPU delegate's words); the rest is the target's
        c = self._target.constraints(sig.name, sig.is_custom)
        if c is None:
            return f"{sig.name}: not supported"
        return _check(sig.graph, sig.node, {k: v for k, v in c.items() if k != "max_version"}, self._target)

    def prepare(self, model, subgraph: int = 0) -> Plan:
        self._maybe_fail("prepare", "DelegatePrepare")
        plan = super().prepare(model, subgraph)
        self.stats = {p.index: PartitionStats(p.index, len(p.nodes), p.est_us) for p in plan.partitions}
        return plan

    def create_kernel(self, partition: Partition) -> PartitionKernel:
        return PartitionKernel(self, partition)

    # -- counters -----------------------------------------------------------------------------------
    @property
    def device_us(self) -> float:
        return sum(s.device_us for s in self.stats.values())

    @property
    def invocations(self) -> int:
        return max((s.invocations for s in self.stats.values()), default=0)

    def reset_stats(self) -> None:
        for s in self.stats.values():
            s.invocations, s.device_us = 0, 0.0

    def _maybe_fail(self, point: str, where: str) -> None:
        if self.fail == point:
            raise DelegateError(f"{self.name}: failing on purpose in {point} ({where})")
