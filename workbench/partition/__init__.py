"""Partition a model between a (simulated) accelerator and the CPU, and compile the result.

    from workbench import partition as P
    plan = P.partition(model, "tidl", "tidl")        # every node: where it runs, and why
    plan.diff(P.partition(model, "tidl", "tflite"))
    out = P.compile(plan)                            # one CUSTOM op per partition, a standard .tflite

Targets are data (``targets/*.json``); strategies know nothing about kernels (GraphView + a predicate),
and nothing here imports the interpreter: running a plan (the offload kernel, delegates, the simulated
accelerator) is :mod:`workbench.delegate`'s job.
Every plan runs: its partitions are convex over data and control edges (a :class:`PlanError` spells
out a cycle otherwise); ops calling subgraphs (IF / WHILE / CALL_ONCE) and resource variables follow
the rules in :mod:`workbench.partition.target` ("calls subgraph 1 which the delegate would not see",
"shares resource variable 'x' with node 0 (CALL_ONCE), which stays on the CPU").
"""

from .compiler import OFFLOAD_OP, boundary_config, boundary_entries, compile, submodel
from .devices import CoreTimes, Devices, core_times, devices_of, with_devices
from .graph import GraphView
from .plan import REASON_CODES, Partition, Placement, Plan, PlanDiff, PlanError, Reason, execution_order, node_macs
from .strategies import STRATEGIES, boundary, partition
from .subsets import NodeSubset, partition_graph, partition_graph_by_sweeps
from .target import Target, TargetError, list_targets, load_target, parse_target

__all__ = ["GraphView", "Plan", "Placement", "Partition", "PlanDiff", "PlanError", "execution_order", "partition",
           "STRATEGIES", "boundary",
           "NodeSubset", "partition_graph", "partition_graph_by_sweeps", "Target", "TargetError", "load_target",
           "list_targets", "parse_target",
           "node_macs", "compile", "submodel", "OFFLOAD_OP", "Reason", "REASON_CODES", "boundary_config",
           "boundary_entries", "Devices", "devices_of", "with_devices", "core_times", "CoreTimes"]
