"""The naive TIDL-style partitioner of tests/partition/test_partition_equivalence.py, shared with the
rule tests (tests/partition/test_partition_rules.py)."""

from __future__ import annotations

from workbench.partition import strategies


def naive_tidl(g, target, why, max_partitions, min_nodes, follow_control=True):
    """Tensors carry the walk; a way back into the subgraph may also go through a control edge
    (``follow_control=False``: the walk as first written, blind to them — it makes cycles)."""
    n = g.num_nodes
    limit = max_partitions if max_partitions > 0 else strategies.TIDL_DEFAULT_MAX_SUBGRAPHS
    data = [sorted({c for t in x.outputs if t >= 0 for c in g.consumers[t]}) for x in g.nodes]
    succ = [list(cs) for cs in data]
    if follow_control:
        for a, b in g.control_edges:
            succ[a] = sorted({*succ[a], b})
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
            if group[i] >= 0 or not (is_output[i] or any(walked[c] for c in data[i])):
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
                reason[i] = (f"supported, but its subgraph has {len(members)} node(s) "
                             f"< min_nodes_per_partition {min_nodes}")
            continue
        result.append((members, None, None))
    return result, reason
