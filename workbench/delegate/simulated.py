"""A toy delegate for any target file: takes what the target supports, runs it on a simulated device.

    d = SimulatedAccelerator("tidl")                          # which ops, which limits, what they cost
    it = workbench.Interpreter(model_path=..., experimental_delegates=[d])
    it.allocate_tensors(); it.invoke()
    d.device_us, d.stats                                      # modeled device time, per partition

It refuses op versions above the target's ``max_version`` at prepare (in the GPU delegate's words) and
can be told to fail on purpose (``fail="prepare"``, ``"init"`` or ``"invoke"``) to show what TFLite
does then.
"""

from __future__ import annotations

from ..errors import DelegateError
from ..partition import Partition, Target, load_target
from ..partition.target import _check
from .device import DeviceKernel
from .interface import FAIL_POINTS, Delegate, NodeSignature

__all__ = ["SimulatedAccelerator", "SimulatedKernel"]


class SimulatedKernel(DeviceKernel):
    """The device kernel, with the delegate's failure points."""

    name = "simulated_delegate"

    def init(self, context, node):
        self.delegate._maybe_fail("init", f"partition {self.partition.index}")
        return None

    def invoke(self, context, node, data) -> None:
        self.delegate._maybe_fail("invoke", f"partition {self.partition.index}")
        super().invoke(context, node, data)


class SimulatedAccelerator(Delegate):
    """A delegate for a :class:`Target` (a name or a target file): takes what the target supports (with
    the target's exact reasons), refuses op versions above the target's ``max_version`` at prepare,
    runs its partitions on a simulated device and counts the time the device would take.

    ``max_versions``: op name → highest known version, overriding the target's; ``fail``: one of
    ``FAIL_POINTS`` to fail on purpose there; the other knobs are :class:`Delegate`'s.
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

    def prepare(self, model, subgraph: int = 0, **kw):
        self._maybe_fail("prepare", "DelegatePrepare")
        return super().prepare(model, subgraph, **kw)

    def create_kernel(self, partition: Partition) -> SimulatedKernel:
        return SimulatedKernel(self, partition)

    # -- counters (the device's) ----------------------------------------------------------------------
    @property
    def stats(self) -> dict:
        """Partition index → PartitionStats of subgraph 0 (``device.stats`` has every subgraph)."""
        return {k: s for (sg, k), s in self.device.stats.items() if sg == 0}

    @property
    def device_us(self) -> float:
        return self.device.device_us

    @property
    def invocations(self) -> int:
        return self.device.invocations

    def reset_stats(self) -> None:
        self.device.reset()

    def _maybe_fail(self, point: str, where: str) -> None:
        if self.fail == point:
            raise DelegateError(f"{self.name}: failing on purpose in {point} ({where})")
