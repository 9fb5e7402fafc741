"""A toy delegate for any target file: takes what the target supports, runs it on a simulated device.

    d = SimulatedAccelerator("tidl")                          # which ops, which limits, what they cost
    it = workbench.Interpreter(model_path=..., experimental_delegates=[d])
    it.allocate_tensors(); it.invoke()
    d.device_us, d.stats                                      # modeled device time, per partition

It refuses op versions above the target's ``max_version`` at prepare (in the GPU delegate's words) and
can be told to fail on purpose (``fail="prepare"``, ``"init"`` or ``"invoke"``) to show what TFLite
does then.

Two modes, as the two ways a model reaches an accelerator:

    SimulatedAccelerator("tidl")                     # runtime: claims the nodes the target's rules accept;
                                                     # TFLite's partitioner makes the partitions
    SimulatedAccelerator("tidl", mode="compiled", strategy="tidl")
                                                     # compiled: the partitions of the offline compile,
                                                     # `workbench partition --strategy tidl -o OUT.tflite`

``SimulatedAccelerator("tidl", strategy="tidl")`` (runtime mode, another strategy) raises
:class:`~workbench.delegate.interface.OfflineStrategyError`: a LiteRT runtime delegate only claims nodes
(GetSupportedNodes); the cut belongs to TFLite (``tflite/delegates/utils.cc`` GraphPartitionHelper,
``tflite/core/subgraph.cc`` ReplaceNodeSubsetsWithDelegateKernels).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import DelegateError
from ..partition import Partition, Target, load_target, submodel
from ..partition.plan import Reason
from ..partition.target import OpRule
from .device import DeviceKernel
from .interface import FAIL_POINTS, Delegate, NodeSignature
from .quantize import QUANTIZABLE, calibrate, mode_of

__all__ = ["SimulatedAccelerator", "SimulatedKernel", "load_delegate", "PRECISIONS"]

PRECISIONS = ("float", "int8")


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
    ``FAIL_POINTS`` to fail on purpose there; ``allow_dynamic_tensors`` (LiteRT's
    kTfLiteDelegateFlagsAllowDynamicTensors): by default True for the ``xnnpack`` target only — LiteRT's
    XNNPACK delegate sets the flag unless subgraph reshaping is turned off
    (``tflite/delegates/xnnpack/xnnpack_delegate.cc`` GetXNNPackDelegateFlags) — and False for the
    others, which need static shapes as TIDL does; the other knobs are :class:`Delegate`'s.

    ``precision``: ``"float"`` — the device runs the model's own kernels, outputs bit-identical to the
    CPU-only run; ``"int8"`` — the TIDL way: each partition of the main subgraph is calibrated on
    ``calibration`` (frames of the model's inputs: training data only) into an int8 copy
    (:func:`workbench.delegate.quantize.calibrate`, ``calibration_iterations``, TI's
    ``quantization_scale_type`` 0 / 1 — or ``scale_type`` for the earlier per-channel mode —, ``progress``;
    ``calibration_frames``: use only the first N frames, TI's ``calibration_frames``) and the device runs
    that, so the accuracy change is real.
    """

    def __init__(self, target="xnnpack", *, name: str | None = None, max_versions=None, fail: str | None = None,
                 precision: str = "float", calibration=None, calibration_iterations: int = 1,
                 quantization_scale_type: int = 0, scale_type: str | None = None, calibration_frames=None,
                 progress=None, allow_dynamic_tensors: bool | None = None, **knobs):
        self._target = load_target(target)
        self.name = name or f"simulated-{self._target.name}"      # before the knobs: errors name the delegate
        super().__init__(allow_dynamic_tensors=allow_dynamic_tensors, **knobs)
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if precision == "int8":
            if calibration is None or len(calibration) == 0:
                raise ValueError("precision int8 needs calibration frames: a list of input frames from the "
                                 "training data (each a list of arrays, one per model input, or one array)")
            mode_of(quantization_scale_type, scale_type)          # a bad value: ValueError, now
            if int(calibration_iterations) < 1:
                raise ValueError(f"calibration_iterations must be >= 1, got {calibration_iterations!r}")
        self.precision = precision
        self.calibration = calibration
        self.calibration_iterations = int(calibration_iterations)
        self.scale_type = scale_type
        self.quantization_scale_type = quantization_scale_type
        self.calibration_frames = calibration_frames
        self.progress = progress
        self.calibrated: dict = {}         # (subgraph, partition) → Calibrated (precision int8)
        if allow_dynamic_tensors is None:
            self.allow_dynamic_tensors = self._target.name == "xnnpack"
        # the same target without its version limits: the delegate checks versions itself, first, in the
        # GPU delegate's words (and ``max_versions`` may override the target's)
        self._unversioned = dataclasses.replace(
            self._target, defaults={k: v for k, v in self._target.defaults.items() if k != "max_version"},
            ops={k: OpRule(r.op, {c: v for c, v in r.constraints.items() if c != "max_version"}, r.custom)
                 for k, r in self._target.ops.items()}, _cache={})
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
        # the version was checked already (with the GPU delegate's words); the rest is the target's, in its words
        why = self._unversioned.check(sig.graph, sig.index)
        if why is None and self.precision == "int8" and (sig.is_custom or sig.op not in QUANTIZABLE):
            return Reason("unsupported-op", f"{sig.name}: no int8 rule for it (precision int8: the device runs a "
                                            f"calibrated int8 copy of each partition)")
        return why

    def prepare(self, model, subgraph: int = 0, **kw):
        self._maybe_fail("prepare", "DelegatePrepare")
        if self.precision == "int8" and subgraph != 0:
            n = len(model.subgraphs[subgraph].operators or ())
            kw["refused"] = {**kw.get("refused", {}),
                             **{i: ("constraint", "precision int8 calibrates the main subgraph (0) only: its "
                                                  "calibration frames are the model's inputs") for i in range(n)}}
        # a target with several cores (a "devices" table): each partition's time is its run on them
        from ..partition.devices import with_devices

        return with_devices(super().prepare(model, subgraph, **kw), getattr(self, "cores", None))

    def delegate_prepare(self, interpreter):
        delegation = super().delegate_prepare(interpreter)
        self.calibrated = {}
        plan = delegation.plans.get(0)
        if self.precision == "int8" and plan is not None and plan.partitions:
            self._calibrate(interpreter.model, plan)
        return delegation

    def _calibrate(self, model, plan) -> None:
        """Each partition's calibration frames are its own input tensors, taken from a float CPU run of
        the whole model on the calibration frames; then each is calibrated into an int8 copy."""
        from ..interpreter import Interpreter

        cpu = Interpreter(model=model, keep_intermediates=True)     # allocated at the frames' shapes, below
        details = cpu.get_input_details()
        shapes = None
        frames = {p.index: [] for p in plan.partitions}
        for frame in list(self.calibration)[:self.calibration_frames]:
            arrays = [frame] if isinstance(frame, np.ndarray) else list(frame)
            if len(arrays) != len(details):
                raise DelegateError(f"{self.name}: a calibration frame has {len(arrays)} array(s); the model has "
                                    f"{len(details)} input(s)")
            arrays = [_sized(cpu, d, a) for d, a in zip(details, arrays)]     # -1 dims: the frame's size
            if shapes != [a.shape for a in arrays]:
                cpu.allocate_tensors()
                shapes = [a.shape for a in arrays]
            for d, a in zip(details, arrays):
                cpu.set_tensor(d["index"], a)
            cpu.invoke()
            for p in plan.partitions:
                frames[p.index].append([cpu.get_tensor(t) for t in p.runtime_inputs])
        for p in plan.partitions:
            self.calibrated[(plan.subgraph, p.index)] = calibrate(
                submodel(plan, p.index), frames[p.index], iterations=self.calibration_iterations,
                quantization_scale_type=self.quantization_scale_type, scale_type=self.scale_type,
                progress=self.progress, node_names=list(p.nodes))

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


def _sized(interp, detail, array) -> np.ndarray:
    """A calibration frame for one input: reshaped to the stored shape, or — when the input's shape
    signature has -1 dimensions and the frame has the same rank — the input is resized to the frame."""
    a = np.asarray(array, detail["dtype"])
    sig = tuple(detail.get("shape_signature", detail["shape"]))
    if -1 in sig and a.ndim == len(sig):
        now = next(d for d in interp.get_input_details() if d["index"] == detail["index"])["shape"]
        if tuple(a.shape) != tuple(now):
            interp.resize_tensor_input(detail["index"], list(a.shape))
        return a
    return a.reshape(detail["shape"])


# -- load_delegate ------------------------------------------------------------------------------------

_OPTIONS = {
    "mode": "runtime (default: the delegate claims nodes, TFLite partitions them) or compiled (the partitions "
            "of an offline compile with the strategy)",
    "strategy": "how the graph is cut: tflite (default); tidl or edgetpu only with mode=compiled",
    "max_partitions": "keep at most this many partitions, largest first (0: all)",
    "min_nodes": "drop partitions with fewer nodes (0: no minimum)",
    "deny": "comma-separated node indices and/or op names kept on the CPU",
    "max_versions": "comma-separated OP:N, the highest version of OP the delegate knows",
    "fail": "fail on purpose in prepare, init or invoke",
    "fallback_to_cpu": "true: when applying the delegate fails, log what LiteRT would raise and run the "
                       "original plan on the CPU (a teaching aid)",
    "allow_dynamic_tensors": "true / false: the delegate handles dynamic-sized tensors (LiteRT's "
                             "kTfLiteDelegateFlagsAllowDynamicTensors; default: true for xnnpack only)",
    "name": "the delegate's name in logs and placements",
}


def _int_option(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"option {key}={value!r}: expected an integer") from None


def _bool_option(key: str, value: str) -> bool:
    v = value.strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no", ""):
        return False
    raise ValueError(f"option {key}={value!r}: expected true or false")


def load_delegate(library, options=None) -> SimulatedAccelerator:
    """``ai_edge_litert.interpreter.load_delegate``'s counterpart.  Where LiteRT takes a shared library,
    this takes a target: a name from ``workbench partition --list-targets`` or a target file (JSON /
    TOML).  ``options`` is a dict whose values are passed as strings, as LiteRT passes them to a
    delegate plugin (see ``_OPTIONS``).  Anything that cannot be loaded raises ``ValueError("Failed to
    load delegate from …")`` with the reason on the next line, as LiteRT does."""
    from ..partition import TargetError

    raw = {str(k): str(v) for k, v in (options or {}).items()}
    try:
        unknown = sorted(set(raw) - set(_OPTIONS))
        if unknown:
            known = "; ".join(f"{k}: {v}" for k, v in _OPTIONS.items())
            raise ValueError(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (known: {known})")
        kw: dict = {}
        if "strategy" in raw:
            from ..partition import STRATEGIES

            if raw["strategy"] not in STRATEGIES:
                raise ValueError(f"option strategy={raw['strategy']!r}: expected one of {', '.join(STRATEGIES)}")
            kw["strategy"] = raw["strategy"]
        if "mode" in raw:
            from .interface import MODES

            if raw["mode"] not in MODES:
                raise ValueError(f"option mode={raw['mode']!r}: expected one of {', '.join(MODES)}")
            kw["mode"] = raw["mode"]
        for key in ("max_partitions", "min_nodes"):
            if key in raw:
                kw[key] = _int_option(key, raw[key])
        if raw.get("deny"):
            kw["deny"] = tuple(int(x) if x.strip().lstrip("-").isdigit() else x.strip()
                               for x in raw["deny"].split(",") if x.strip())
        if raw.get("max_versions"):
            mv = {}
            for item in raw["max_versions"].split(","):
                op, sep, n = item.strip().partition(":")
                if not sep:
                    raise ValueError(f"option max_versions: {item.strip()!r} is not OP:N")
                mv[op.strip()] = _int_option("max_versions", n)
            kw["max_versions"] = mv
        if "fail" in raw:
            kw["fail"] = raw["fail"] or None
        if "fallback_to_cpu" in raw:
            kw["fallback_to_cpu"] = _bool_option("fallback_to_cpu", raw["fallback_to_cpu"])
        if "allow_dynamic_tensors" in raw:
            kw["allow_dynamic_tensors"] = _bool_option("allow_dynamic_tensors", raw["allow_dynamic_tensors"])
        if raw.get("name"):
            kw["name"] = raw["name"]
        return SimulatedAccelerator(library, **kw)
    except (ValueError, TargetError, OSError) as exc:
        raise ValueError(f"Failed to load delegate from {library}\n{exc}") from None
