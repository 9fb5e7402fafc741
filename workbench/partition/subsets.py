"""PartitionGraphIntoIndependentNodeSubsets (TFLite ``graph_info.cc``), on plain lists.

Given the execution plan (nodes 0..n-1 with their input and output tensors), the set P of nodes a
delegate wants (``in_p[i]``), the ``greedy`` flag and control edges ("b must run after a"), cut the
plan into subsets that alternate between "partition" (nodes of P) and "non-partition", each in
dependency order (``tensorflow/lite/graph_info.cc`` PartitionGraphIntoIndependentNodeSubsets).

Two implementations, giving the same subsets in the same join order:

* :func:`partition_graph_by_sweeps` is the algorithm as graph_info.cc writes it: open a subset, sweep
  the whole plan again and again adding every node that can run and is of the subset's type, close
  it, open the next.  Read this one to learn the algorithm; it is O(n²) on long alternating chains.
* :func:`partition_graph` (what the strategies call) gets there with a priority queue of ready nodes
  per sweep: O(n log n).  The tests compare the two on random graphs.

graph_info.h's worked example: six nodes with edges 0→1→2→3, 1→4→5, 3→5 (node k writes tensor
k + 1, tensor 0 is the graph input, tensor 6 the graph output) and P = {2, 3}:

>>> node_inputs = [[0], [1], [2], [3], [2], [4, 5]]
>>> node_outputs = [[1], [2], [3], [4], [5], [6]]
>>> in_p = [node in (2, 3) for node in range(6)]
>>> for subset in partition_graph_by_sweeps(node_inputs, node_outputs, 7, [6], in_p):
...     print(subset)
NodeSubset(non-partition, nodes=[0, 1, 4], inputs=[0], outputs=[2, 5])
NodeSubset(partition, nodes=[2, 3], inputs=[2], outputs=[4])
NodeSubset(non-partition, nodes=[5], inputs=[4, 5], outputs=[6])

Greedy, the first subset's sweep takes 0 and 1, steps over 2 and 3 (in P), and takes 4, which is
ready as soon as 1 has run; 5 waits for 3.  The heap-based partitioner gives the same subsets:

>>> (partition_graph(node_inputs, node_outputs, 7, [6], in_p)
...  == partition_graph_by_sweeps(node_inputs, node_outputs, 7, [6], in_p))
True

A control edge 3⇒4 (4 must run after 3) keeps 4 out of the first subset; so does ``greedy=False``,
where a subset ends at the first node of the plan that cannot join (here 2), which keeps the plan's
order:

>>> [s.nodes for s in partition_graph_by_sweeps(node_inputs, node_outputs, 7, [6], in_p,
...                                             control_edges=[(3, 4)])]
[[0, 1], [2, 3], [4, 5]]
>>> [s.nodes for s in partition_graph(node_inputs, node_outputs, 7, [6], in_p, control_edges=[(3, 4)])]
[[0, 1], [2, 3], [4, 5]]
>>> [s.nodes for s in partition_graph_by_sweeps(node_inputs, node_outputs, 7, [6], in_p, greedy=False)]
[[0, 1], [2, 3], [4, 5]]
>>> [s.nodes for s in partition_graph(node_inputs, node_outputs, 7, [6], in_p, greedy=False)]
[[0, 1], [2, 3], [4, 5]]
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

__all__ = ["NodeSubset", "partition_graph", "partition_graph_by_sweeps", "ALWAYS_READY", "NOT_READY"]

ALWAYS_READY = -2   # graph inputs, constants: ready before anything runs
NOT_READY = -1      # produced by a node that has not been scheduled yet


@dataclass
class NodeSubset:
    """One subset: ``partition`` True when its nodes are in P.  Tensor lists are sorted, unique."""

    partition: bool
    nodes: list = field(default_factory=list)       # in the order they joined
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)

    def __repr__(self) -> str:
        kind = "partition" if self.partition else "non-partition"
        return f"NodeSubset({kind}, nodes={self.nodes}, inputs={self.inputs}, outputs={self.outputs})"


def partition_graph_by_sweeps(node_inputs, node_outputs, num_tensors: int, graph_outputs, in_p, *,
                              greedy: bool = True, control_edges=()) -> list[NodeSubset]:
    """The subsets of the plan, found by whole sweeps as ``graph_info.cc`` does.

    Same arguments and result as :func:`partition_graph`: ``node_inputs[i]`` / ``node_outputs[i]``
    are node i's tensor indices (-1: an omitted optional input), ``num_tensors`` the number of
    tensors, ``graph_outputs`` the graph's output tensors, ``in_p[i]`` true when the delegate wants
    node i, ``control_edges`` pairs (a, b): b must run after a.  The numbered comments are the steps
    of ``graph_info.cc`` PartitionGraphIntoIndependentNodeSubsets.
    """
    n = len(node_inputs)

    # 1. every tensor is ready from the start (graph inputs, constants) except those a node of the
    #    plan produces; epoch[t] becomes the number of the subset that produced t
    epoch = [ALWAYS_READY] * num_tensors
    for outputs in node_outputs:
        for t in outputs:
            if t >= 0:
                epoch[t] = NOT_READY
    assigned = [False] * n
    waiting = [0] * n                       # control edges into node i not yet released
    for _, b in control_edges:
        waiting[b] += 1

    def can_run(i: int) -> bool:
        return (not assigned[i] and waiting[i] == 0
                and all(t < 0 or epoch[t] != NOT_READY for t in node_inputs[i]))

    subsets: list[NodeSubset] = []
    while True:
        # 2. open a new subset; its type is fixed by the first node that joins
        s = len(subsets)
        subset = NodeSubset(partition=False)
        subsets.append(subset)

        def join(i: int) -> bool:
            """Node i joins the subset if it can run and is of the subset's type."""
            if not can_run(i):
                return False
            if not subset.nodes:
                subset.partition = bool(in_p[i])
            elif bool(in_p[i]) != subset.partition:
                return False
            assigned[i] = True
            subset.nodes.append(i)
            for t in node_inputs[i]:
                if t >= 0 and epoch[t] != s:        # made outside this subset: a subset input ...
                    subset.inputs.append(t)
                    if epoch[t] >= 0:               # ... and an output of the earlier subset that made it
                        subsets[epoch[t]].outputs.append(t)
            for t in node_outputs[i]:
                if t >= 0:
                    epoch[t] = s
            for a, b in control_edges:
                if a == i:
                    waiting[b] -= 1
            return True

        # 3. sweep the plan in order; 4. greedy: sweep again until a sweep adds nothing;
        #    not greedy: the subset ends at the first node that cannot join once one has
        while True:
            joined = ended = False
            for i in range(n):
                if join(i):
                    joined = True
                elif joined and not greedy:
                    ended = True
                    break
            if ended or not joined:
                break

        # 5. an empty subset means every node is placed
        if not subset.nodes:
            subsets.pop()
            break

    # 6. graph outputs are outputs of the subset that made them; tensor lists sorted, unique
    for t in graph_outputs:
        if 0 <= t < num_tensors and epoch[t] >= 0:
            subsets[epoch[t]].outputs.append(t)
    for subset in subsets:
        subset.inputs = sorted(set(subset.inputs))
        subset.outputs = sorted(set(subset.outputs))
    return subsets


def _setup(node_inputs, node_outputs, num_tensors, control_edges):
    n = len(node_inputs)
    epoch = [ALWAYS_READY] * num_tensors
    for outs in node_outputs:
        for t in outs:
            if t >= 0:
                epoch[t] = NOT_READY
    consumers: list[list[int]] = [[] for _ in range(num_tensors)]
    need = [0] * n
    for i, ins in enumerate(node_inputs):
        seen = set()
        for t in ins:
            if t >= 0 and t not in seen:
                seen.add(t)
                if epoch[t] == NOT_READY:
                    need[i] += 1
                    consumers[t].append(i)
    ctrl_out: list[list[int]] = [[] for _ in range(n)]
    for a, b in control_edges:
        ctrl_out[a].append(b)
        need[b] += 1
    return epoch, consumers, need, ctrl_out


def partition_graph(node_inputs, node_outputs, num_tensors: int, graph_outputs, in_p, *, greedy: bool = True,
                    control_edges=()) -> list[NodeSubset]:
    """The subsets of the plan, as ``PartitionGraphIntoIndependentNodeSubsets`` returns them: the
    same as :func:`partition_graph_by_sweeps`, with a priority queue of ready nodes per sweep."""
    n = len(node_inputs)
    epoch, consumers, need, ctrl_out = _setup(node_inputs, node_outputs, num_tensors, control_edges)
    assigned = [False] * n
    subsets: list[NodeSubset] = []

    def join(i: int, s: int, sub: NodeSubset, released: list) -> None:
        assigned[i] = True
        sub.nodes.append(i)
        for t in node_inputs[i]:
            if t < 0:
                continue
            e = epoch[t]
            if e != s:
                sub.inputs.append(t)
                if e >= 0:
                    subsets[e].outputs.append(t)
        for t in node_outputs[i]:
            if t < 0:
                continue
            was_ready = epoch[t] != NOT_READY
            epoch[t] = s
            if was_ready:
                continue
            for c in consumers[t]:
                need[c] -= 1
                if need[c] == 0:
                    released.append(c)
        for b in ctrl_out[i]:
            need[b] -= 1
            if need[b] == 0:
                released.append(b)

    if greedy:
        ready = ([], [])   # heaps of schedulable, unassigned nodes: [non-partition, partition]
        for i in range(n):
            if need[i] == 0:
                heapq.heappush(ready[bool(in_p[i])], i)
        while ready[0] or ready[1]:
            if ready[0] and ready[1]:
                kind = ready[1][0] < ready[0][0]
            else:
                kind = bool(ready[1])
            s = len(subsets)
            sub = NodeSubset(kind)
            subsets.append(sub)
            current, later = ready[kind], []
            pos = -1
            while True:
                while current:
                    i = heapq.heappop(current)
                    pos = i
                    released: list[int] = []
                    join(i, s, sub, released)
                    for c in released:
                        if bool(in_p[c]) != kind:
                            heapq.heappush(ready[not kind], c)
                        elif c > pos:
                            heapq.heappush(current, c)
                        else:
                            later.append(c)   # visited already in this sweep: joins in the next one
                if not later:
                    break
                heapq.heapify(later)
                current, later, pos = later, [], -1
            ready = (current, ready[1]) if not kind else (ready[0], current)
    else:
        first = 0
        while True:
            while first < n and assigned[first]:
                first += 1
            s = len(subsets)
            sub = NodeSubset(False)
            subsets.append(sub)
            kind = None
            while True:   # sweeps; the subset ends at the first node that cannot join once one has
                did = False
                stop = False
                for i in range(first, n):
                    ok = not assigned[i] and need[i] == 0 and (kind is None or bool(in_p[i]) == kind)
                    if ok:
                        if kind is None:
                            kind = bool(in_p[i])
                            sub.partition = kind
                        join(i, s, sub, [])
                        did = True
                    elif did:
                        stop = True
                        break
                if stop or not did:
                    break
            if not sub.nodes:
                subsets.pop()
                break
    for t in graph_outputs:
        if 0 <= t < num_tensors and epoch[t] >= 0:
            subsets[epoch[t]].outputs.append(t)
    for sub in subsets:
        sub.inputs = sorted(set(sub.inputs))
        sub.outputs = sorted(set(sub.outputs))
    return subsets
