"""Three ways to cut a graph between a target and the CPU, and the ``partition`` entry point.

* ``tflite``  — TFLite's delegate partitioning: PartitionGraphIntoIndependentNodeSubsets over the nodes
  the target supports (greedy by default), then GraphPartitionHelper's largest-first selection
  (``max_partitions``, ``min_nodes``) and a re-partition of the chosen nodes
  (``tensorflow/lite/graph_info.cc``, ``tensorflow/lite/delegates/utils.cc``).
* ``edgetpu`` — the Edge TPU compiler (coral.ai docs): TFLite's greedy partitioning of the ops it can map;
  by default ONE Edge TPU subgraph, the first delegated subset — every mappable op whose inputs come
  from the graph inputs, constants or ops already in it (so an op depending on a CPU op stays on the
  CPU, while an independent branch later in the file is still mapped, and CPU ops at the very start,
  such as a float QUANTIZE, do not stop it).  ``max_partitions`` = K models the compiler's ``-a``:
  the first K delegated subsets, each one Edge TPU subgraph (K < 0: all of them; 0: the default, 1).
* ``tidl``    — the TI paper's walk: from the graph outputs up through producers; stop at unsupported
  nodes, whose inputs become the boundary; repeat up to ``max_partitions`` subgraphs.

Whatever the strategy, two rules hold (checked in :func:`partition`):

* a partition is convex over data AND control edges (``GraphView.control_edges``: ops with side
  effects — resource variables, IF / WHILE / CALL_ONCE — keep their order).  The contracted graph
  (each partition one operator) must have no cycle; :func:`plan.execution_order` raises a
  :class:`PlanError` naming the cycle if a strategy ever made one.
* resource variables (the target's ``variables``): ``"private"`` — every node touching a variable goes
  to the same place (one partition, or the CPU): the device keeps the variable, whose id means nothing
  elsewhere.  If a node of the variable is refused, the others are too ("shares resource variable 'x'
  with node 0 (CALL_ONCE), which stays on the CPU"); if the strategy splits them, they are refused and
  the strategy runs again.  ``"shared"`` (XNNPACK) — the delegate uses the interpreter's variables, so
  they may be split; a VAR_HANDLE goes along only when a READ/ASSIGN_VARIABLE of its variable does.
"""

from __future__ import annotations

from ..schema.enums import BuiltinOperator
from .cost import MB, partition_cost
from .graph import GraphView, gc_paused
from .plan import Partition, Placement, Plan, Reason, execution_order, node_macs
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


def _make_partition(g: GraphView, target: Target, index: int, nodes, ins=None, outs=None,
                    free_bytes: float = float("inf")) -> Partition:
    """One partition with its modeled cost; ``free_bytes``: device memory left for its weights (what does
    not fit is streamed from host memory on every run)."""
    if ins is None:
        ins, outs = boundary(g, nodes)
    runtime = tuple(t for t in ins if not g.static[t])   # weights (constant or unpacked) do not cross
    per_node = [node_macs(g, i) for i in nodes]
    in_bytes = [g.nbytes(t) for t in runtime]
    out_bytes = [g.nbytes(t) for t in outs]
    weights = sum(g.nbytes(t) for t in ins if g.static[t])
    streamed = int(max(0, weights - max(free_bytes, 0)))
    est = partition_cost(target.cost, per_node, in_bytes, out_bytes, streamed).total_us
    return Partition(index, tuple(nodes), tuple(ins), tuple(outs), runtime, sum(per_node), sum(in_bytes),
                     sum(out_bytes), est, weights, streamed)


def _over_limit(g: GraphView, target: Target, groups) -> dict:
    """node → reason, for the nodes of every partition whose weights and boundary tensors together need
    more than the target's ``max_partition_mb`` (the device cannot hold it at all)."""
    limit = target.cost.get("max_partition_mb", 0.0)
    out: dict = {}
    if not limit:
        return out
    for nodes, ins, outs in groups:
        if ins is None:
            ins, outs = boundary(g, nodes)
        need = sum(g.nbytes(t) for t in ins) + sum(g.nbytes(t) for t in outs)
        if need > limit * MB:
            text = (f"its partition needs {need / MB:.1f} MB of device memory (weights and boundary tensors) > "
                    f"{target.name}'s limit of {limit:g} MB")
            out.update((i, Reason("constraint", f"{g.nodes[i].name}: {text}")) for i in nodes)
    return out


def _support(g: GraphView, target: Target, deny, check=None) -> list:
    """For every node: None when the target takes it, else the reason it does not."""
    dn, dops = _deny_sets(deny)
    check = target.check if check is None else check
    out = []
    unpackers = []
    for i, n in enumerate(g.nodes):
        if i in dn:
            out.append(Reason("denied", f"{n.name}: node {i} denied by the policy"))
        elif n.name in dops:
            out.append(Reason("denied", f"{n.name}: op type denied by the policy"))
        else:
            out.append(check(g, i))
            if out[-1] is None and n.outputs and all(t >= 0 and g.static[t] for t in n.outputs):
                c = target.constraints(n.name, n.op == BuiltinOperator.CUSTOM)
                if c is not None and c.get("unpack_with_consumers"):
                    unpackers.append(i)
    for i in reversed(unpackers):    # last first: an unpacker feeding another one is decided after it
        reader = next((c for t in g.nodes[i].outputs for c in g.consumers[t] if out[c] is not None), None)
        if reader is not None:
            out[i] = Reason("dependency", f"{g.nodes[i].name}: unpacks constant weights that node {reader} "
                                          f"({g.nodes[reader].name}), which stays on the CPU, reads too; the delegate "
                                          f"unpacks weights only for its own nodes")
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
                reason[i] = Reason("too-small", f"supported, but its partition has {size} node(s) < "
                                                f"min_nodes_per_partition {min_nodes}")
        elif max_partitions > 0 and len(chosen) >= max_partitions:
            for i in parts[k].nodes:
                reason[i] = Reason("partition-limit", f"supported, but its partition ({size} nodes) is not among "
                                                      f"the {max_partitions} largest "
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


EDGETPU_MORE = "More than one subgraph is not supported"   # the compiler's status for ops after the cut


def _edgetpu(g, target, why, max_partitions, min_nodes):
    """The Edge TPU compiler's placement, on TFLite's own partitioner.

    The compiler is a TFLite delegate at heart (its failures log TFLite's "Restored original execution plan after
    delegate application failure"): the ops it can map are handed to TFLite's greedy partitioning
    (``graph_info.cc``), whose subsets alternate CPU / delegated, each in dependency order.  Without ``-a`` it keeps
    the first delegated subset — the ops that can run before anything it cannot map must (Coral's docs: "the first
    op that cannot be mapped and everything after it", read as data dependency, as compiled models show).  With
    ``-a`` every later delegated subset is mapped too, one more Edge TPU subgraph each (one model: 2 ops mapped
    without -a, 85 with).  ``max_partitions``: 0 → 1 (the default), K > 0 → the first K, K < 0 → all.
    """
    n = g.num_nodes
    nodes = g.nodes
    in_p = [w is None for w in why]
    subsets = partition_graph([x.inputs for x in nodes], [x.outputs for x in nodes], g.num_tensors, g.outputs, in_p,
                              greedy=True, control_edges=g.control_edges)
    parts = [sorted(s.nodes) for s in subsets if s.partition]
    limit = 1 if max_partitions == 0 else (len(parts) if max_partitions < 0 else max_partitions)
    kept, dropped = parts[:limit], parts[limit:]
    reason = list(why)
    result = []
    for p in kept:
        if min_nodes > 0 and len(p) < min_nodes:
            for i in p:
                reason[i] = Reason("too-small", f"supported, but its partition has {len(p)} node(s) < "
                                                f"min_nodes_per_partition {min_nodes}")
        else:
            result.append((p, None, None))
    if dropped:
        mapped = [False] * n
        for p, _, _ in result:
            for i in p:
                mapped[i] = True
        preds: list[list[int]] = [[] for _ in range(n)]
        for a, b in g.control_edges:
            preds[b].append(a)
        blocker = [-1] * n        # the op the compiler cannot map that a CPU node waits for (itself if it is one)
        producer = g.producer
        for i in range(n):
            if mapped[i]:
                continue
            if why[i] is not None:
                blocker[i] = i
                continue
            for t in nodes[i].inputs:
                p = producer[t] if t >= 0 else -1
                if p >= 0 and not mapped[p] and blocker[p] >= 0:
                    blocker[i] = blocker[p]
                    break
            else:
                for p in preds[i]:
                    if not mapped[p] and blocker[p] >= 0:
                        blocker[i] = blocker[p]
                        break
        if limit == 1:
            tail = "the compiler makes one Edge TPU subgraph unless run with -a (max_partitions > 1 or < 0)"
        else:
            tail = f"max_partitions={limit} Edge TPU subgraphs (-a) already made"
        for p in dropped:
            for i in p:
                b = blocker[i]
                dep = (f"depends on node {b} ({nodes[b].name}), which stays on the CPU; " if b >= 0 and b != i
                       else "")
                reason[i] = Reason("dependency" if dep else "partition-limit", f"{EDGETPU_MORE}: {dep}{tail}")
    return result, reason


def _tidl(g, target, why, max_partitions, min_nodes):
    """The output-upward walk, repeated up to ``limit`` times — computed in ONE sweep.

    Pass k of the walk visits the still-undecided nodes from the last to the first.  A node is
    *walked* when it produces a graph output or feeds a walked node (that set never changes after
    the first pass).  A walked, supported, undecided node joins subgraph k unless one of its
    consumers outside subgraph k leads back into it — it is then cut, and tried again in pass k + 1.

    "Consumers" here include control successors (``g.control_edges``): a path that leaves subgraph k
    through a tensor and comes back through a side-effect ordering edge (ASSIGN_VARIABLE before the
    next READ_VARIABLE) makes a cycle just as well.  Only tensors carry the walk itself.

    Pass k's decision at node i needs only pass k's decisions at the nodes after i and the earlier
    passes' decisions at i, so all passes run together, last node to first, one bit per pass:
    ``reach[i]`` has bit k when i belongs to subgraph k or has a path to it; a consumer c "leads
    back" in pass k when bit k is in ``reach[c]`` but c is not in subgraph k.  Node i joins the first
    pass whose bit is not in the OR of its consumers' "leads back" masks.  Every edge is looked at
    once, whatever the number of subgraphs: O(nodes + edges).  (Passes only ever see nodes after i
    as consumers — the file order is an execution order; ``naive_tidl`` in the tests is the literal
    pass-by-pass walk it is checked against.)
    """
    n = g.num_nodes
    limit = max_partitions if max_partitions > 0 else TIDL_DEFAULT_MAX_SUBGRAPHS
    full = (1 << limit) - 1
    producer, consumers, nodes = g.producer, g.consumers, g.nodes
    nt = g.num_tensors
    after: dict[int, list] = {}      # control successors: a path through them leads back just as well
    for a, b in g.control_edges:
        after.setdefault(a, []).append(b)
    is_output = [False] * n
    for t in g.outputs:
        if 0 <= t < nt and producer[t] >= 0:
            is_output[producer[t]] = True
    walked = [False] * n
    reach = [0] * n        # bit k: in subgraph k, or a path to it
    back = [0] * n         # bit k: reach in pass k while not in subgraph k (a way back into it)
    group = [-1] * n
    members: list[list[int]] = []
    for i in range(n - 1, -1, -1):
        w = is_output[i]
        r = 0
        cut = 0
        for t in nodes[i].outputs:
            if 0 <= t < nt:
                for c in consumers[t]:
                    if c > i:
                        if walked[c]:
                            w = True
                        r |= reach[c]
                        cut |= back[c]
        for c in after.get(i, ()):
            r |= reach[c]
            cut |= back[c]
        if not w:
            reach[i] = back[i] = r
            continue
        walked[i] = True
        if why[i] is not None:
            reach[i] = back[i] = r
            continue
        free = ~cut & full          # passes in which no consumer leads back into the subgraph
        if free:
            bit = free & -free      # the first of them
            k = bit.bit_length() - 1
            group[i] = k
            if k == len(members):
                members.append([])
            members[k].append(i)
            reach[i] = r | bit
            back[i] = r & ~bit
        else:
            reach[i] = back[i] = r
    hit_limit = len(members) >= limit
    reason = list(why)
    for i in range(n):
        if group[i] < 0 and why[i] is None:
            if not walked[i]:
                reason[i] = Reason("not-reached", "supported, but not reached by the output-upward walk (no path to "
                                                  "a graph output)")
            elif hit_limit:
                reason[i] = Reason("partition-limit", f"supported, but max_num_subgraphs={limit} was reached")
    result = []
    for nodes_k in members:
        nodes_k.reverse()
        if min_nodes > 0 and len(nodes_k) < min_nodes:
            for i in nodes_k:
                reason[i] = Reason("too-small", f"supported, but its subgraph has {len(nodes_k)} node(s) < "
                                                f"min_nodes_per_partition {min_nodes}")
            continue
        result.append((nodes_k, None, None))
    return result, reason


def partition(model, target="xnnpack", strategy: str = "tflite", *, subgraph: int = 0, deny=(),
              max_partitions: int = 0, min_nodes: int = 0, greedy: bool = True, control_edges=None,
              graph: GraphView | None = None, check=None) -> Plan:
    """Cut ``model.subgraphs[subgraph]`` between ``target`` and the CPU with ``strategy``.

    ``deny``: node indices and/or op names forced onto the CPU; ``max_partitions`` (≤ 0: unlimited;
    tidl: max_num_subgraphs, default 16; edgetpu: Edge TPU subgraphs, 0 → 1 as the compiler makes by
    default, K > 1 → up to K as with its ``-a``, < 0 → every one); ``min_nodes`` per partition;
    ``greedy`` / ``control_edges`` (tflite only: TFLite's clustering flag and extra "b after a" edges);
    ``check(graph, node)``: the predicate deciding support (None or the reason), ``target.check`` by
    default — a delegate's IsNodeSupported.
    """
    target = load_target(target)
    with gc_paused():   # plain lists and ints only: no cycles to collect, and no full-heap walks on big graphs
        return _partition(model, target, strategy, subgraph, deny, max_partitions, min_nodes, greedy,
                          control_edges, graph, check)


def _couple_refused(g: GraphView, links, why: list) -> list:
    """Resource rule, before partitioning: a node sharing a variable with a refused node is refused too
    (transitively, breadth first, so each reason names the node it depends on)."""
    if not links.nodes:
        return why
    why = list(why)
    todo = [i for i in sorted(links.keys) if why[i] is not None]
    while todo:
        r = todo.pop(0)
        for k in links.keys[r]:
            for i in links.nodes[k]:
                if why[i] is None:
                    why[i] = Reason("resource", f"{g.nodes[i].name}: shares resource variable '{links.names[k]}' "
                                                f"with node {r} ({g.nodes[r].name}), which stays on the CPU")
                    todo.append(i)
    return why


def _shared_handles(g: GraphView, links, why: list) -> list:
    """``variables: shared`` (XNNPACK's PrepareOpsToDelegate): a VAR_HANDLE is taken only when some
    READ_VARIABLE / ASSIGN_VARIABLE of its variable is."""
    from ..schema.enums import BuiltinOperator as B

    why = list(why)
    for i in sorted(links.keys):
        nd = g.nodes[i]
        if nd.op != B.VAR_HANDLE or why[i] is not None:
            continue
        for k in links.keys[i]:
            users = [j for j in links.nodes[k] if g.nodes[j].op in (B.READ_VARIABLE, B.ASSIGN_VARIABLE)]
            if not any(why[j] is None for j in users):
                why[i] = Reason("resource", f"VAR_HANDLE: no READ_VARIABLE / ASSIGN_VARIABLE of '{links.names[k]}' "
                                            f"is taken, so its handle stays on the CPU")
    return why


def _split_resources(g: GraphView, links, where: list, why: list, strategy: str) -> dict:
    """Resource rule, after partitioning: node → reason, for every node of a variable whose nodes the
    strategy did not put all in one place (they all go to the CPU, and the strategy runs again)."""
    out: dict = {}
    for k, members in links.nodes.items():
        places = {where[i] for i in members}
        if len(places) < 2:
            continue
        for i in members:
            if why[i] is not None or i in out:
                continue
            j = next(j for j in members if where[j] != where[i])
            here = "outside the partition" if where[i] is not None else f"in partition {where[j]}"
            out[i] = Reason("resource", f"{g.nodes[i].name}: shares resource variable '{links.names[k]}' with node "
                                        f"{j} ({g.nodes[j].name}) {here}; the {strategy} strategy cannot place them "
                                        f"together, so the variable stays on the CPU")
    return out


def _partition(model, target, strategy, subgraph, deny, max_partitions, min_nodes, greedy, control_edges, graph,
               check):
    g = graph if graph is not None else GraphView(model, subgraph)
    if strategy not in STRATEGIES:
        from ..errors import WorkbenchError

        raise WorkbenchError(f"no strategy {strategy!r} (there are: {', '.join(STRATEGIES)})")
    why = _support(g, target, deny, check)
    links = g.resource_links()
    private = target.variables != "shared"
    why = _couple_refused(g, links, why) if private else _shared_handles(g, links, why)
    while True:
        if strategy == "tflite":
            groups, reason, _ = _tflite(g, target, why, max_partitions, min_nodes, greedy, control_edges)
        elif strategy == "edgetpu":
            groups, reason = _edgetpu(g, target, why, max_partitions, min_nodes)
        else:
            groups, reason = _tidl(g, target, why, max_partitions, min_nodes)
        where = [None] * g.num_nodes
        for k, (nodes, _, _) in enumerate(groups):
            for i in nodes:
                where[i] = k
        split = _split_resources(g, links, where, why, strategy) if links.nodes and private else {}
        split.update(_over_limit(g, target, groups))
        if not split:
            break
        for i, r in split.items():
            why[i] = r
        why = _couple_refused(g, links, why)
    # every strategy's plan must run once each partition is one operator (convex over data + control edges)
    extra = tuple(control_edges or ()) if strategy == "tflite" else ()
    execution_order(g, where, extra, f"plan {target.name}/{strategy}")
    free = target.cost.get("memory_mb", 0.0) * MB or float("inf")    # weights fill the device's memory in order
    partitions = []
    for k, (nodes, ins, outs) in enumerate(groups):
        partitions.append(_make_partition(g, target, k, nodes, ins, outs, free))
        free -= partitions[-1].weights_bytes
    placements = []
    for i, nd in enumerate(g.nodes):
        if where[i] is not None:
            r = f"offloaded to {target.name} partition {where[i]}"
        else:
            r = reason[i] or Reason("other", "kept on the CPU")
        placements.append(Placement(i, nd.name, nd.version, where[i], r))
    knobs = {"deny": tuple(deny or ()), "max_partitions": max_partitions, "min_nodes": min_nodes}
    if strategy == "tflite":
        knobs["greedy"] = greedy
        if control_edges:
            knobs["control_edges"] = tuple(tuple(e) for e in control_edges)   # compile re-checks with them
    return Plan(target, strategy, knobs, tuple(placements), tuple(partitions), g.num_tensors, subgraph, model, g)
