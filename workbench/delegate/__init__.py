"""Delegation: running part of a model on a (simulated) accelerator, as TFLite delegates do.

    from workbench.delegate import load_delegate
    d = load_delegate("tidl")                        # as ai_edge_litert's load_delegate, a target for a library
    it = workbench.Interpreter(model_path=..., experimental_delegates=[d])   # prepare + partitioning
    it.placements()                                  # every node: device or CPU, partition, reason
    it.allocate_tensors(); it.invoke(); d.device     # partitions ran on the simulated device

This package sits above the interpreter and the partitioner (ARCHITECTURE's import order: ... →
partition → interpreter → delegate → viz → cli): the partitioner decides which nodes go where and knows
nothing of kernels; the interpreter runs kernels and knows nothing of partitions; here the two meet.
It also holds the kernel of ``workbench-offload``, the custom op ``workbench partition -o`` writes,
registered with the interpreter through the ``workbench.kernels`` entry-point group (see
:mod:`workbench.delegate.offload`).
"""

from ..errors import DelegateError
from ..partition.devices import Devices, core_times, devices_of
from . import interface
from .device import Device, DeviceData, DeviceKernel, PartitionStats
from .error import NodeError, node_errors
from .interface import Delegate, Delegation, NodeSignature, apply, plan_subsets, version_error
from .offload import Offload, read_options
from .pipeline import PipelineRun, pipeline
from .simulated import SimulatedAccelerator, SimulatedKernel, load_delegate

FAIL_POINTS, MODES, RESTORED = interface.FAIL_POINTS, interface.MODES, interface.RESTORED
OfflineStrategyError = interface.OfflineStrategyError

__all__ = ["Delegate", "DelegateError", "Delegation", "NodeSignature", "SimulatedAccelerator", "SimulatedKernel",
           "Device", "DeviceKernel", "DeviceData", "PartitionStats", "Offload", "read_options", "apply",
           "plan_subsets", "version_error", "load_delegate", "node_errors", "NodeError", "FAIL_POINTS", "RESTORED",
           "MODES", "OfflineStrategyError", "pipeline", "PipelineRun", "Devices", "devices_of", "core_times"]
