"""One cost model, used by the partitioner's estimates and by the simulated device alike.

A target's ``cost`` figures (its .json file) describe a device by a few numbers::

    macs_per_cycle, clock_mhz      compute: multiply-accumulates per µs = macs_per_cycle × clock_mhz (the peak)
    conv_efficiency                the share of the peak a convolution, transposed convolution or
                                   fully-connected layer reaches (absent: 1)
    depthwise_efficiency           the same for a depthwise convolution (absent: 1); depthwise layers do few
                                   multiply-accumulates per byte they read, so accelerators reach less of
                                   their peak on them
    other_efficiency               the same for every other op: pools, element-wise ops (absent: 1)
    memory_bandwidth_mb_s          the device's own memory: a layer reads its input activations and its
                                   weights and writes its output at this rate, while it computes (absent or
                                   0: no memory term)
    op_overhead_us                 a fixed cost per operator on the device (launch, synchronisation)
    bandwidth_mb_s                 host ↔ device copies: bytes per µs
    transfer_overhead_us           a fixed cost per tensor copied (DMA set-up, cache maintenance)
    cpu_macs_per_cycle, cpu_clock_mhz   the host CPU, for the "all on the CPU" estimate
    memory_mb                      device memory for weights (0 or absent: unlimited); weights that do
                                   not fit are read from host memory on every run, at bandwidth_mb_s
    max_partition_mb               a hard limit: a partition whose weights and boundary tensors need
                                   more is refused (0 or absent: none)
    shared_memory                  1: the device works in the host's own tensor memory, so nothing is
                                   copied and no transfer is paid (XNNPACK binds TFLite's tensors directly:
                                   ``tensorflow/lite/delegates/xnnpack/xnnpack_delegate.cc``, the external
                                   values it sets to the tensors' data); 0 or absent: copies in and out

One node on the device takes::

    compute = MACs / (macs_per_cycle × clock_mhz × efficiency of its kind of op)
    memory  = (input activations + weights + output activations) bytes / memory_bandwidth_mb_s
    time    = max(compute, memory) + op_overhead_us

the slower of its arithmetic and its memory traffic (the two overlap: the device fetches the next block
while it computes on this one), plus a fixed cost.  A target without the efficiency and memory figures
gets ``MACs / (macs_per_cycle × clock_mhz) + op_overhead_us``, the workbench's first model.

Where a target's figures come from (its ``source`` text says it for every figure): ``edgetpu`` and
``am5729`` have some FITTED by ``benchmarks/cost_model_check.py`` to published timings (Coral's "Edge TPU
performance benchmarks" table, TI's TIDL "Performance data" table) and checked on networks the fit did not
use; ``benchmarks/results/cost_model_check.txt`` says how far off the model is on those.

Every figure the workbench shows as *modeled* comes from these functions: a partition's estimate is the
sum of its nodes' device times and its tensors' copy times, exactly what the simulated device adds up
while it runs, so a plan's estimate and a delegated run's modeled total agree by construction.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["device_node_us", "transfer_us", "cpu_node_us", "PartitionCost", "partition_cost", "MB", "NodeWork",
           "op_kind", "streamed_us"]

MB = 1024 * 1024

# which efficiency figure an op uses (any other op: "other")
_KIND = {"CONV_2D": "conv", "TRANSPOSE_CONV": "conv", "FULLY_CONNECTED": "conv",
         "Convolution2DTransposeBias": "conv", "DEPTHWISE_CONV_2D": "depthwise"}


def op_kind(op) -> str:
    """``"conv"``, ``"depthwise"`` or ``"other"``: which efficiency figure of a target the op ``op`` (a
    BuiltinOperator name or member, a custom op's name, or None) runs at."""
    name = getattr(op, "name", op)
    return _KIND.get(name, "other") if isinstance(name, str) else "other"


class NodeWork(int):
    """A node's multiply-accumulates (an ``int``) that also carries what the cost model needs beyond them:
    the op, the bytes of its input activations, of its output activations and of its weights.
    :func:`workbench.partition.node_macs` returns one, so every caller that hands node MACs to
    :func:`partition_cost` or :func:`device_node_us` gets the full model without more arguments."""

    op: str | None
    in_bytes: int
    out_bytes: int
    weight_bytes: int

    def __new__(cls, macs: int, op=None, in_bytes: int = 0, out_bytes: int = 0, weight_bytes: int = 0):
        self = super().__new__(cls, int(macs))
        self.op = getattr(op, "name", op)
        self.in_bytes, self.out_bytes, self.weight_bytes = int(in_bytes), int(out_bytes), int(weight_bytes)
        return self

    def __reduce__(self):
        return NodeWork, (int(self), self.op, self.in_bytes, self.out_bytes, self.weight_bytes)


def _args(macs, op, in_bytes, out_bytes, weight_bytes):
    if op is None:
        op = getattr(macs, "op", None)
    if in_bytes is None:
        in_bytes = getattr(macs, "in_bytes", 0)
    if out_bytes is None:
        out_bytes = getattr(macs, "out_bytes", 0)
    if weight_bytes is None:
        weight_bytes = getattr(macs, "weight_bytes", 0)
    return op, in_bytes, out_bytes, weight_bytes


def _work_us(cost: dict, macs, op, in_bytes, out_bytes, weight_bytes) -> float:
    """max(compute, memory) of one node (µs), without the per-operator overhead."""
    rate = cost["macs_per_cycle"] * cost["clock_mhz"] * cost.get(op_kind(op) + "_efficiency", 1.0)
    compute = macs / rate
    bw = cost.get("memory_bandwidth_mb_s", 0.0)
    if not bw:
        return compute
    return max(compute, (in_bytes + out_bytes + weight_bytes) / bw)


def device_node_us(cost: dict, macs: int, *, op=None, in_bytes: int | None = None, out_bytes: int | None = None,
                   weight_bytes: int | None = None) -> float:
    """Modeled time of one node on the device (µs): the slower of its multiply-accumulates at the device's
    rate for its kind of op (``op``) and its bytes (input and output activations, weights) at the device's
    memory bandwidth, plus the per-operator overhead.  Arguments left out are read from ``macs`` when it is
    a :class:`NodeWork` (else: no op, 0 bytes).  With a target that has no efficiency or memory figures
    this is ``macs / (macs_per_cycle × clock_mhz) + op_overhead_us``."""
    op, in_bytes, out_bytes, weight_bytes = _args(macs, op, in_bytes, out_bytes, weight_bytes)
    return _work_us(cost, macs, op, in_bytes, out_bytes, weight_bytes) + cost.get("op_overhead_us", 0.0)


def transfer_us(cost: dict, nbytes: int) -> float:
    """Modeled time of copying one tensor of ``nbytes`` between host and device memory (0 for a device that
    works in the host's memory: ``shared_memory``)."""
    if cost.get("shared_memory"):
        return 0.0
    return nbytes / cost["bandwidth_mb_s"] + cost.get("transfer_overhead_us", 0.0)


def streamed_us(cost: dict, nbytes: int) -> float:
    """Modeled time of reading ``nbytes`` of weights from host memory (they do not fit the device's
    ``memory_mb``): over the host link, at ``bandwidth_mb_s``, on every run."""
    return nbytes / cost["bandwidth_mb_s"] if nbytes else 0.0


def cpu_node_us(cost: dict, macs: int) -> float:
    """Modeled time of one node on the host CPU (for "all on the CPU" comparisons)."""
    return macs / (cost.get("cpu_macs_per_cycle", 4.0) * cost.get("cpu_clock_mhz", 1500.0))


@dataclass(frozen=True)
class PartitionCost:
    """A partition's modeled time for one run, by part (µs)."""

    compute_us: float        # the nodes' work: per node the slower of its arithmetic and its memory traffic
    overhead_us: float       # the per-operator overheads
    copy_in_us: float        # runtime inputs, host → device
    copy_out_us: float       # outputs, device → host
    streamed_us: float = 0.0  # weights read from host memory because they do not fit the device's

    @property
    def total_us(self) -> float:
        return self.compute_us + self.overhead_us + self.copy_in_us + self.copy_out_us + self.streamed_us

    def __repr__(self) -> str:
        parts = ", ".join(f"{k} {getattr(self, k + '_us'):.1f}" for k in ("compute", "overhead", "copy_in",
                                                                         "copy_out", "streamed"))
        return f"PartitionCost({self.total_us:.1f} µs modeled: {parts})"


def partition_cost(cost: dict, node_macs, in_bytes, out_bytes, streamed_bytes: int = 0) -> PartitionCost:
    """The modeled cost of one run of a partition: ``node_macs`` per node (plain ints, or
    :class:`NodeWork` values that also carry the op and the bytes), ``in_bytes`` / ``out_bytes`` per tensor
    crossing, ``streamed_bytes`` of weights read from host memory."""
    ovh = cost.get("op_overhead_us", 0.0)
    work = sum(_work_us(cost, m, *_args(m, None, None, None, None)) for m in node_macs)
    return PartitionCost(work, len(node_macs) * ovh,
                         sum(transfer_us(cost, b) for b in in_bytes), sum(transfer_us(cost, b) for b in out_bytes),
                         streamed_us(cost, streamed_bytes))
