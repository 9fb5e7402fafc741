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
from .devices import with_devices
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


def tidl_left_behind(nodes, reset_at: int, limit: int) -> str:
    """Why a supported node stays on the CPU after the TIDL walk's ``limit`` passes."""
    return (f"supported, but the walk reset the subgraph's output at node {reset_at} ({nodes[reset_at].name}), "
            f"leaving it between that node and the graph output, and max_num_subgraphs={limit} passes were made")


def _tidl(g, target, why, max_partitions, min_nodes):
    """The TIDL import tool's walk, as the TI paper describes it ("TensorFlow Lite Heterogeneous
    Execution with TI Deep Learning Offload", section on partitioning).

    The walk starts at the graph output and takes producers upward.  A supported node joins the TIDL
    subgraph.  At an unsupported node the import "continues but uses the input of this unsupported node
    as the output of the updated TIDL subgraph": the subgraph's output is *reset* to that node's input,
    so the nodes walked so far (between it and the graph output) stay on the Arm, and the walk goes on
    upward "until no producer node can be found".  One pass therefore keeps the INPUT side of the graph:
    on DeepLab v3 the backbone above the 33x33 AVERAGE_POOL_2D, on MobileNet v1 everything before the
    head.  "This pattern can be repeated": pass k + 1 walks what pass k left behind, the nodes between
    the unsupported node that ended pass k and the graph output, and so on up to ``max_partitions``
    (TIDL's ``max_num_subgraphs``, 16 by default).

    The walk visits nodes in reverse file order (the file order is an execution order, so every
    consumer comes before its producer).  A node is *walked* when it produces a graph output or feeds
    a walked node.  A reset happens at every walked unsupported node, and also at a node the walk never
    reaches (it feeds no output) that leads into the subgraph being collected through a control edge
    (ASSIGN_VARIABLE before the next READ_VARIABLE): leaving it out would leave a path that exits the
    subgraph and comes back.  Each stretch between two resets is one pass's subgraph; the stretch next
    to the graph input is pass 0.  Every edge is looked at once: O(nodes + edges).
    """
    n = g.num_nodes
    limit = max_partitions if max_partitions > 0 else TIDL_DEFAULT_MAX_SUBGRAPHS
    producer, consumers, nodes = g.producer, g.consumers, g.nodes
    nt = g.num_tensors
    after: dict[int, list] = {}      # control successors
    for a, b in g.control_edges:
        after.setdefault(a, []).append(b)
    is_output = [False] * n
    for t in g.outputs:
        if 0 <= t < nt and producer[t] >= 0:
            is_output[producer[t]] = True
    walked = [False] * n
    stretch = [-1] * n               # which stretch (counted from the graph output) a node joined
    stretches: list[list[int]] = [[]]
    closed_at: list[int | None] = [None]   # the node whose reset ended each stretch, at its input end
    for i in range(n - 1, -1, -1):
        succ = [c for t in nodes[i].outputs if 0 <= t < nt for c in consumers[t] if c > i]
        w = is_output[i] or any(walked[c] for c in succ)
        walked[i] = w
        if w and why[i] is None:
            stretch[i] = len(stretches) - 1
            stretches[-1].append(i)
            continue
        into = any(stretch[c] == len(stretches) - 1 for c in (*succ, *after.get(i, ())))
        if (w or into) and stretches[-1]:          # reset: the subgraph's output becomes this node's input
            closed_at[-1] = i
            stretches.append([])
            closed_at.append(None)
    passes = [(sorted(s), u) for s, u in zip(reversed(stretches), reversed(closed_at)) if s]
    reason = list(why)
    for i in range(n):
        if why[i] is None and not walked[i]:
            reason[i] = Reason("not-reached", "supported, but not reached by the output-upward walk (no path to "
                                              "a graph output)")
    result = []
    for k, (members, u) in enumerate(passes):
        if k >= limit:
            for i in members:
                reason[i] = Reason("partition-limit", tidl_left_behind(nodes, u, limit))
            continue
        if min_nodes > 0 and len(members) < min_nodes:
            for i in members:
                reason[i] = Reason("too-small", f"supported, but its subgraph has {len(members)} node(s) < "
                                                f"min_nodes_per_partition {min_nodes}")
            continue
        result.append((members, None, None))
    return result, reason


def partition(model, target="xnnpack", strategy: str = "tflite", *, subgraph: int = 0, deny=(),
              max_partitions: int = 0, min_nodes: int = 0, greedy: bool = True, control_edges=None,
              graph: GraphView | None = None, check=None, cut_after=()) -> Plan:
    """Cut ``model.subgraphs[subgraph]`` between ``target`` and the CPU with ``strategy``.

    ``deny``: node indices and/or op names forced onto the CPU; ``max_partitions`` (≤ 0: unlimited;
    tidl: max_num_subgraphs, default 16; edgetpu: Edge TPU subgraphs, 0 → 1 as the compiler makes by
    default, K > 1 → up to K as with its ``-a``, < 0 → every one); ``min_nodes`` per partition;
    ``greedy`` / ``control_edges`` (tflite only: TFLite's clustering flag and extra "b after a" edges);
    ``check(graph, node)``: the predicate deciding support (None or the reason), ``target.check`` by
    default — a delegate's IsNodeSupported.  ``cut_after``: tensor names (or indices) where the device
    part ends, as the TIDL import tool's output-tensor option names them: only their ancestors may go to
    the device, every later node stays on the CPU (reason ``after-cut``).
    """
    target = load_target(target)
    with gc_paused():   # plain lists and ints only: no cycles to collect, and no full-heap walks on big graphs
        plan = _partition(model, target, strategy, subgraph, deny, max_partitions, min_nodes, greedy,
                          control_edges, graph, check, tuple(cut_after or ()))
    # a chip that lists its cores (``devices``): each partition's time is its nodes on their cores, with the
    # copies between them — the figure a delegated run on that target counts
    return with_devices(plan)


def cut_tensors(g: GraphView, cut_after) -> list[int]:
    """The tensor indices ``cut_after`` names (names or indices); an unknown name is an error that lists
    the closest names of the subgraph."""
    import difflib

    from ..errors import WorkbenchError

    by_name: dict[str, int] = {}
    order = sorted(range(g.num_tensors), key=lambda t: g.producer[t] < 0)   # computed tensors before constants
    for t in order:
        by_name.setdefault(g.tensors[t].name, t)
    for t in order:   # the converter joins fused ops' names with ";": each part names the tensor too
        for part in (g.tensors[t].name or "").split(";"):
            by_name.setdefault(part, t)
    out = []
    for item in cut_after:
        if isinstance(item, int) and not isinstance(item, bool):
            if not 0 <= item < g.num_tensors:
                raise WorkbenchError(f"cut_after: tensor {item} is out of range (the subgraph has {g.num_tensors})")
            out.append(item)
            continue
        name = str(item)
        if name not in by_name:
            close = difflib.get_close_matches(name, list(by_name), n=5, cutoff=0.4)
            if not close:   # long slim-style names: names that contain the last part of the one given
                last = name.rsplit("/", 1)[-1]
                close = [k for k in by_name if last and last in k][:5]
            hint = ("; the closest names: " + ", ".join(close)) if close else ""
            raise WorkbenchError(f"cut_after: no tensor named {name!r} in subgraph {g.subgraph}{hint}")
        out.append(by_name[name])
    return out


def _static_shapes(g: GraphView, target, why: list) -> list:
    """A target whose tensor sizes are fixed at compile time refuses a graph with a -1 in any tensor's
    shape signature (a size known only at run time): every node, with the target's own words."""
    for t, tensor in enumerate(g.tensors):
        sig = tensor.shape_signature
        if sig is not None and any(int(d) < 0 for d in sig):
            text = (f"{target.static_shapes} (tensor {t} '{tensor.name}' has shape signature "
                    f"{[int(d) for d in sig]}: tensor sizes must be constant at compile time)")
            return [Reason("constraint", text) for _ in why]
    return why


def _cut(g: GraphView, why: list, cut_after) -> list:
    """Every node that is not an ancestor of a cut tensor stays on the CPU (reason ``after-cut``)."""
    tensors = cut_tensors(g, cut_after)
    keep = [False] * g.num_nodes
    todo = [g.producer[t] for t in tensors if g.producer[t] >= 0]
    while todo:
        i = todo.pop()
        if keep[i]:
            continue
        keep[i] = True
        todo += [g.producer[t] for t in g.nodes[i].inputs if 0 <= t < g.num_tensors and g.producer[t] >= 0]
    names = ", ".join(repr(g.tensors[t].name) for t in tensors)
    return [r if keep[i] or r is not None else
            Reason("after-cut", f"{g.nodes[i].name}: after the cut at {names} (cut_after): it does not compute "
                                f"{'that tensor' if len(tensors) == 1 else 'those tensors'}")
            for i, r in enumerate(why)]


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
               check, cut_after=()):
    g = graph if graph is not None else GraphView(model, subgraph)
    if strategy not in STRATEGIES:
        from ..errors import WorkbenchError

        raise WorkbenchError(f"no strategy {strategy!r} (there are: {', '.join(STRATEGIES)})")
    why = _support(g, target, deny, check)
    if target.static_shapes:
        why = _static_shapes(g, target, why)
    if cut_after:
        why = _cut(g, why, cut_after)
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
    if cut_after:
        knobs["cut_after"] = tuple(cut_after)
    if strategy == "tflite":
        knobs["greedy"] = greedy
        if control_edges:
            knobs["control_edges"] = tuple(tuple(e) for e in control_edges)   # compile re-checks with them
    return Plan(target, strategy, knobs, tuple(placements), tuple(partitions), g.num_tensors, subgraph, model, g)
