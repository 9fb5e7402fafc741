"""One cost model, used by the partitioner's estimates and by the simulated device alike.

A target's ``cost`` figures (its .json file) describe a device by a few numbers::

    macs_per_cycle, clock_mhz      compute: multiply-accumulates per µs = macs_per_cycle × clock_mhz
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

Every figure the workbench shows as *modeled* comes from these functions: a partition's estimate is the
sum of its nodes' device times and its tensors' copy times, exactly what the simulated device adds up
while it runs, so a plan's estimate and a delegated run's modeled total agree by construction.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["device_node_us", "transfer_us", "cpu_node_us", "PartitionCost", "partition_cost", "MB"]

MB = 1024 * 1024


def device_node_us(cost: dict, macs: int) -> float:
    """Modeled time of one node on the device: its multiply-accumulates at the device's rate, plus the
    per-operator overhead."""
    return macs / (cost["macs_per_cycle"] * cost["clock_mhz"]) + cost.get("op_overhead_us", 0.0)


def transfer_us(cost: dict, nbytes: int) -> float:
    """Modeled time of copying one tensor of ``nbytes`` between host and device memory (0 for a device that
    works in the host's memory: ``shared_memory``)."""
    if cost.get("shared_memory"):
        return 0.0
    return nbytes / cost["bandwidth_mb_s"] + cost.get("transfer_overhead_us", 0.0)


def cpu_node_us(cost: dict, macs: int) -> float:
    """Modeled time of one node on the host CPU (for "all on the CPU" comparisons)."""
    return macs / (cost.get("cpu_macs_per_cycle", 4.0) * cost.get("cpu_clock_mhz", 1500.0))


@dataclass(frozen=True)
class PartitionCost:
    """A partition's modeled time for one run, by part (µs)."""

    compute_us: float        # the nodes' multiply-accumulates
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
    """The modeled cost of one run of a partition: ``node_macs`` per node, ``in_bytes`` / ``out_bytes``
    per tensor crossing, ``streamed_bytes`` of weights read from host memory."""
    rate = cost["macs_per_cycle"] * cost["clock_mhz"]
    ovh = cost.get("op_overhead_us", 0.0)
    return PartitionCost(sum(node_macs) / rate, len(node_macs) * ovh,
                         sum(transfer_us(cost, b) for b in in_bytes), sum(transfer_us(cost, b) for b in out_bytes),
                         streamed_bytes / cost["bandwidth_mb_s"] if streamed_bytes else 0.0)
