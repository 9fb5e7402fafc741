"""The naive TIDL walk of tests/partition/test_partition_equivalence.py, shared with the partition
rule tests: the TI paper's walk written literally, one upward traversal per pass."""

import heapq

from workbench.partition import strategies
from workbench.partition.plan import Reason


def naive_tidl(g, target, why, max_partitions, min_nodes, follow_control=True):
    """Pass by pass.  A pass starts at the graph outputs and takes producers upward, the highest node
    first (so every consumer is seen before its producer).  A supported node joins the subgraph; an
    unsupported one resets it (the nodes collected so far are left behind).  When no producer is left,
    what is collected is the pass's subgraph.  The next pass walks what was left behind: the nodes above
    the pass's last reset.  A node the walk cannot reach (it feeds no output) that leads into the
    subgraph being collected through a control edge resets it too (``follow_control=False``: the walk
    blind to control edges, as first written — it makes cycles)."""
    n = g.num_nodes
    limit = max_partitions if max_partitions > 0 else strategies.TIDL_DEFAULT_MAX_SUBGRAPHS
    data = [sorted({c for t in x.outputs if t >= 0 for c in g.consumers[t]}) for x in g.nodes]
    succ = [list(cs) for cs in data]
    if follow_control:
        for a, b in g.control_edges:
            succ[a] = sorted({*succ[a], b})
    preds: list[set] = [set() for _ in range(n)]
    for a in range(n):
        for c in succ[a]:
            preds[c].add(a)
    outputs = {g.producer[t] for t in g.outputs if 0 <= t < g.num_tensors and g.producer[t] >= 0}
    walked = [False] * n
    for i in range(n - 1, -1, -1):
        walked[i] = i in outputs or any(walked[c] for c in data[i])
    reason = list(why)
    for i in range(n):
        if why[i] is None and not walked[i]:
            reason[i] = Reason("not-reached", "supported, but not reached by the output-upward walk (no path to "
                                              "a graph output)")
    passes = []              # (members, the reset at their input end)
    floor, closing = -1, None
    while True:
        collected, last_reset = set(), None
        heap = [-i for i in outputs if i > floor]
        seen = set(outputs)
        heapq.heapify(heap)
        while heap:
            i = -heapq.heappop(heap)
            if walked[i] and why[i] is None:
                collected.add(i)
                for p in preds[i]:          # producers (walked), and unreached nodes leading in
                    if p > floor and p not in seen:
                        seen.add(p)
                        heapq.heappush(heap, -p)
                continue
            if walked[i]:                   # unsupported: its producers are still walked
                for p in preds[i]:
                    if p > floor and p not in seen and walked[p]:
                        seen.add(p)
                        heapq.heappush(heap, -p)
                if collected:
                    collected, last_reset = set(), i
            elif collected and any(c in collected for c in succ[i]):
                collected, last_reset = set(), i
        if collected:
            passes.append((sorted(collected), closing))
        if last_reset is None:
            break
        floor, closing = last_reset, last_reset
    result = []
    for k, (members, u) in enumerate(passes):
        if k >= limit:
            for i in members:
                reason[i] = Reason("partition-limit", strategies.tidl_left_behind(g.nodes, u, limit))
            continue
        if min_nodes > 0 and len(members) < min_nodes:
            for i in members:
                reason[i] = Reason("too-small", f"supported, but its subgraph has {len(members)} node(s) < "
                                                f"min_nodes_per_partition {min_nodes}")
            continue
        result.append((members, None, None))
    return result, reason
