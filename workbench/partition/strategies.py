"""Three ways to cut a graph between a target and the CPU, and the ``partition`` entry point.

* ``tflite``  — TFLite's delegate partitioning: PartitionGraphIntoIndependentNodeSubsets over the nodes
  the target supports (greedy by default), then GraphPartitionHelper's largest-first selection
  (``max_partitions``, ``min_nodes``) and a re-partition of the chosen nodes (TFLITE_FACTS §5.1-5.3).
* ``edgetpu`` — the Edge TPU compiler's default: map ops from the start of the graph; the first op that
  cannot be mapped and everything after it run on the CPU (§5.5).
* ``tidl``    — the TI paper's walk: from the graph outputs up through producers; stop at unsupported
  nodes, whose inputs become the boundary; repeat up to ``max_partitions`` subgraphs (§5.6).
"""

from __future__ import annotations

from .graph import GraphView
from .plan import Partition, Placement, Plan, node_macs
from .subsets import partition_graph
from .target import Target, load_target

__all__ = ["partition", "STRATEGIES", "boundary"]

STRATEGIES = ("tflite", "edgetpu", "tidl")
TIDL_DEFAULT_MAX_SUBGRAPHS = 16    # edgeai-tidl-tools examples


def _deny_sets(deny) -> tuple[set, set]:
    nodes, ops = set(), set()
    for d in deny or ():
        if isinstance(d, str) and not d.lstrip("-").isdigit():
            ops.add(d)
        else:
            nodes.add(int(d))
    return nodes, ops


def boundary(g: GraphView, nodes) -> tuple[tuple, tuple]:
    """(inputs, outputs) of a node set: tensors read from outside (constants included), and tensors
    read outside or that are graph outputs — sorted, as TFLite lists them."""
    inside = set(nodes)
    outs_g = set(g.outputs)
    ins, outs = set(), set()
    for i in inside:
        n = g.nodes[i]
        for t in n.inputs:
            if t >= 0 and g.producer[t] not in inside:
                ins.add(t)
        for t in n.outputs:
            if t >= 0 and (t in outs_g or any(c not in inside for c in g.consumers[t])):
                outs.add(t)
    return tuple(sorted(ins)), tuple(sorted(outs))


def _make_partition(g: GraphView, target: Target, index: int, nodes, ins=None, outs=None) -> Partition:
    if ins is None:
        ins, outs = boundary(g, nodes)
    runtime = tuple(t for t in ins if not g.static[t])   # weights (constant or unpacked) do not cross
    macs = sum(node_macs(g, i) for i in nodes)
    b_in = sum(g.nbytes(t) for t in runtime)
    b_out = sum(g.nbytes(t) for t in outs)
    c = target.cost
    rate = c["macs_per_cycle"] * c["clock_mhz"]         # MACs per µs
    bw = c["bandwidth_mb_s"]                             # bytes per µs
    est = (macs / rate + len(nodes) * c["op_overhead_us"] + (b_in + b_out) / bw
           + (len(runtime) + len(outs)) * c["transfer_overhead_us"])
    return Partition(index, tuple(nodes), tuple(ins), tuple(outs), runtime, macs, b_in, b_out, est)


def _support(g: GraphView, target: Target, deny) -> list:
    """For every node: None when the target takes it, else the reason it does not."""
    dn, dops = _deny_sets(deny)
    out = []
    for i, n in enumerate(g.nodes):
        if i in dn:
            out.append(f"{n.name}: node {i} denied by the policy")
        elif n.name in dops:
            out.append(f"{n.name}: op type denied by the policy")
        else:
            out.append(target.check(g, i))
    return out


# ------------------------------------------------------------------------------------------------


def _tflite(g, target, why, max_partitions, min_nodes, greedy, control_edges):
    n = g.num_nodes
    ins = [x.inputs for x in g.nodes]
    outs = [x.outputs for x in g.nodes]
    if control_edges is None:
        control_edges = g.control_edges if greedy else ()
    in_p = [w is None for w in why]
    subsets = partition_graph(ins, outs, g.num_tensors, g.outputs, in_p, greedy=greedy, control_edges=control_edges)
    parts = [s for s in subsets if s.partition]
    ranked = sorted(range(len(parts)), key=lambda k: -len(parts[k].nodes))  # stable: ties keep plan order
    reason = list(why)
    chosen = set()
    stop = False
    for rank, k in enumerate(ranked):
        size = len(parts[k].nodes)
        if stop or (min_nodes > 0 and size < min_nodes):
            stop = True   # GetFirstNLargestPartitions stops at the first partition that is too small
            for i in parts[k].nodes:
                reason[i] = f"supported, but its partition has {size} node(s) < min_nodes_per_partition {min_nodes}"
        elif max_partitions > 0 and len(chosen) >= max_partitions:
            for i in parts[k].nodes:
                reason[i] = (f"supported, but its partition ({size} nodes) is not among the {max_partitions} largest "
                             f"(max_delegated_partitions={max_partitions})")
        else:
            chosen.add(k)
    if len(chosen) != len(parts):   # ReplaceNodeSubsetsWithDelegateKernels re-partitions the chosen nodes
        keep = [False] * n
        for k in chosen:
            for i in parts[k].nodes:
                keep[i] = True
        subsets = partition_graph(ins, outs, g.num_tensors, g.outputs, keep, greedy=greedy,
                                  control_edges=control_edges)
        parts = [s for s in subsets if s.partition]
    else:
        parts = [parts[k] for k in range(len(parts))]
    groups = [(p.nodes, p.inputs, p.outputs) for p in parts]
    return groups, reason, subsets


def _edgetpu(g, target, why, max_partitions, min_nodes):
    reason = list(why)
    cut = next((i for i in g.order if why[i] is not None), None)
    prefix = list(g.order) if cut is None else list(g.order[:g.order.index(cut)])
    if cut is not None:
        for i in g.order[g.order.index(cut) + 1:]:
            if why[i] is None:
                reason[i] = (f"supported, but more than one subgraph is not supported (the Edge TPU mapping stopped "
                             f"at node {cut}, {g.nodes[cut].name})")
    if prefix and min_nodes > 0 and len(prefix) < min_nodes:
        for i in prefix:
            reason[i] = f"supported, but its partition has {len(prefix)} node(s) < min_nodes_per_partition {min_nodes}"
        prefix = []
    return ([(prefix, None, None)] if prefix else []), reason


def _tidl(g, target, why, max_partitions, min_nodes):
    n = g.num_nodes
    limit = max_partitions if max_partitions > 0 else TIDL_DEFAULT_MAX_SUBGRAPHS
    succ = [sorted({c for t in x.outputs if t >= 0 for c in g.consumers[t]}) for x in g.nodes]
    is_output = [False] * n
    for t in g.outputs:
        if 0 <= t < g.num_tensors and g.producer[t] >= 0:
            is_output[g.producer[t]] = True
    group = [-1] * n
    walked = [False] * n
    reason = list(why)
    groups: list[list[int]] = []
    hit_limit = False
    while True:
        if len(groups) >= limit:
            hit_limit = True
            break
        k = len(groups)
        members: list[int] = []
        reaches = [False] * n
        for i in range(n - 1, -1, -1):
            cs = succ[i]
            if group[i] >= 0 or not (is_output[i] or any(walked[c] for c in cs)):
                reaches[i] = any(reaches[c] for c in cs)
                continue
            walked[i] = True
            if why[i] is not None:
                reaches[i] = any(reaches[c] for c in cs)
                continue
            back = next((c for c in cs if group[c] != k and reaches[c]), None)
            if back is None:
                group[i] = k
                members.append(i)
                reaches[i] = True
            else:
                reaches[i] = True
                reason[i] = (f"supported, but its output feeds node {back} ({g.nodes[back].name}) outside the "
                             f"subgraph, which leads back into it (cut there)")
        if not members:
            break
        groups.append(sorted(members))
    for i in range(n):
        if group[i] < 0 and why[i] is None:
            if not walked[i]:
                reason[i] = "supported, but not reached by the output-upward walk (no path to a graph output)"
            elif hit_limit:
                reason[i] = f"supported, but max_num_subgraphs={limit} was reached"
    result = []
    for members in groups:
        if min_nodes > 0 and len(members) < min_nodes:
            for i in members:
                reason[i] = f"supported, but its subgraph has {len(members)} node(s) < min_nodes_per_partition {min_nodes}"
            continue
        result.append((members, None, None))
    return result, reason


def partition(model, target="xnnpack", strategy: str = "tflite", *, subgraph: int = 0, deny=(),
              max_partitions: int = 0, min_nodes: int = 0, greedy: bool = True, control_edges=None,
              graph: GraphView | None = None) -> Plan:
    """Cut ``model.subgraphs[subgraph]`` between ``target`` and the CPU with ``strategy``.

    ``deny``: node indices and/or op names forced onto the CPU; ``max_partitions`` (≤ 0: unlimited;
    tidl: max_num_subgraphs, default 16); ``min_nodes`` per partition; ``greedy`` / ``control_edges``
    (tflite only: TFLite's clustering flag and extra "b after a" edges).
    """
    target = load_target(target)
    g = graph if graph is not None else GraphView(model, subgraph)
    why = _support(g, target, deny)
    if strategy == "tflite":
        groups, reason, _ = _tflite(g, target, why, max_partitions, min_nodes, greedy, control_edges)
    elif strategy == "edgetpu":
        groups, reason = _edgetpu(g, target, why, max_partitions, min_nodes)
    elif strategy == "tidl":
        groups, reason = _tidl(g, target, why, max_partitions, min_nodes)
    else:
        from ..errors import WorkbenchError

        raise WorkbenchError(f"no strategy {strategy!r} (there are: {', '.join(STRATEGIES)})")
    partitions = []
    where = [None] * g.num_nodes
    for k, (nodes, ins, outs) in enumerate(groups):
        partitions.append(_make_partition(g, target, k, nodes, ins, outs))
        for i in nodes:
            where[i] = k
    placements = []
    for i, nd in enumerate(g.nodes):
        if where[i] is not None:
            r = f"offloaded to {target.name} partition {where[i]}"
        else:
            r = reason[i] or "kept on the CPU"
        placements.append(Placement(i, nd.name, nd.version, where[i], r))
    knobs = {"deny": tuple(deny or ()), "max_partitions": max_partitions, "min_nodes": min_nodes}
    if strategy == "tflite":
        knobs["greedy"] = greedy
    return Plan(target, strategy, knobs, tuple(placements), tuple(partitions), g.num_tensors, subgraph, model, g)
