"""Smaller views of a big graph: collapse long chains, focus on one node's neighbourhood.

Both return a new :class:`~.view_model.OpGraph` whose ``base`` is the full graph; reasons keep their
numbers, so a badge means the same thing in every view of one graph.
"""

from __future__ import annotations

import dataclasses
from collections import deque

from .view_model import Node, Overlay, op_counts

__all__ = ["collapse_chains", "focus", "chains"]

_CHAINABLE = ("op", "offload")


def _adjacency(view, static: bool = True):
    succ: dict = {n.id: set() for n in view.nodes}
    pred: dict = {n.id: set() for n in view.nodes}
    for e in view.edges:
        if e.src in succ and e.dst in pred and (static or not e.static):
            succ[e.src].add(e.dst)
            pred[e.dst].add(e.src)
    return succ, pred


def chains(view, min_length: int = 3) -> list:
    """Maximal chains of ≥ ``min_length`` operator nodes, each (but the last) with exactly one reader
    node, each (but the first) with exactly one producer node, all in the same place (lane and group).
    Weights unpacked on the CPU (static edges: fp16 DEQUANTIZE, DENSIFY of constants) do not count as
    producers; an unpacking node in the same place whose readers are all in one chain joins it.
    Returns (run, unpacking nodes joined) pairs of node ids, the run in data order.
    """
    succ, pred = _adjacency(view, static=False)
    by_id = {n.id: n for n in view.nodes}

    def linked(a: str, b: str) -> bool:
        x, y = by_id[a], by_id[b]
        return (x.kind in _CHAINABLE and y.kind in _CHAINABLE and succ[a] == {b} and pred[b] == {a}
                and x.lane == y.lane and x.group == y.group)

    nxt = {}
    has_prev = set()
    for n in view.nodes:
        if n.kind in _CHAINABLE and len(succ[n.id]) == 1:
            b = next(iter(succ[n.id]))
            if linked(n.id, b):
                nxt[n.id] = b
                has_prev.add(b)
    out = []
    for n in view.nodes:
        if n.id in nxt and n.id not in has_prev:
            run = [n.id]
            while run[-1] in nxt:
                run.append(nxt[run[-1]])
            if len(run) >= min_length:
                out.append(run)
    # unpacking nodes (only static out-edges, no in-edges) whose readers all sit in one chain
    where = {nid: k for k, run in enumerate(out) for nid in run}
    joined: list = [[] for _ in out]
    readers: dict = {}
    has_input = set()
    for e in view.edges:
        readers.setdefault(e.src, []).append((e.dst, e.static))
        has_input.add(e.dst)
    for n in view.nodes:
        r = readers.get(n.id)
        if n.kind in _CHAINABLE and n.id not in where and n.id not in has_input and r and all(st for _, st in r):
            ks = {where.get(dst) for dst, _ in r}
            k = ks.pop() if len(ks) == 1 else None
            if k is not None and (by_id[out[k][0]].lane, by_id[out[k][0]].group) == (n.lane, n.group):
                joined[k].append(n.id)
    return [(run, tuple(j)) for run, j in zip(out, joined)]


def collapse_chains(view, min_length: int = 3):
    """Every chain of :func:`chains` becomes one node ("chain": its ops counted, badges of its CPU nodes
    kept); edges inside a chain disappear, edges into or out of it are rerouted."""
    if min_length < 2:
        raise ValueError(f"min_length must be at least 2 (a chain of one node is the node), got {min_length}")
    found = chains(view, min_length)
    runs = [run + list(extra) for run, extra in found]
    if not runs:
        return view._derive(notes=view.notes + ("no chain to collapse",))
    by_id = {n.id: n for n in view.nodes}
    owner = {}
    for run in runs:
        for nid in run:
            owner[nid] = "c" + run[0][1:]
    made = {}
    for (core, _), run in zip(found, runs):
        members = [by_id[i] for i in run]
        first, last = by_id[core[0]], by_id[core[-1]]
        badges = tuple(sorted({b for m in members for b in m.badges}))
        cid = owner[run[0]]
        span = ", ".join(m.id for m in members[:3]) + (f" … {members[-1].id}" if len(members) > 3 else "")
        made[cid] = Node(cid, "chain", f"{len(members)} ops: {first.op} … {last.op}", lane=first.lane,
                         group=first.group, partition=first.partition, badges=badges, detail=op_counts(members),
                         members=tuple(run), tooltip=f"chain of {len(members)} nodes ({span}): {op_counts(members)}")
    nodes, placed = [], set()
    for n in view.nodes:
        cid = owner.get(n.id)
        if cid is None:
            nodes.append(n)
        elif cid not in placed:
            placed.add(cid)
            nodes.append(made[cid])
    edges = []
    for e in view.edges:
        a, b = owner.get(e.src, e.src), owner.get(e.dst, e.dst)
        if a == b and a in made:
            continue
        edges.append(e if (a, b) == (e.src, e.dst) else dataclasses.replace(e, src=a, dst=b))
    groups = []
    for g in view.groups:
        ids, seen = [], set()
        for nid in g.nodes:
            x = owner.get(nid, nid)
            if x not in seen:
                seen.add(x)
                ids.append(x)
        groups.append(dataclasses.replace(g, nodes=tuple(ids)))
    overlays = {}
    for name, ov in view.overlays.items():
        vals = {k: v for k, v in ov.values.items() if k not in owner}
        for cid, c in made.items():
            v = ov.combined([ov.values[m] for m in c.members if m in ov.values])
            if v is not None:
                vals[cid] = v
        overlays[name] = Overlay(ov.name, vals, ov.fmt, ov.combine, ov.description)
    folded = sum(len(r) - 1 for r in runs)
    note = f"{len(runs)} chains of ≥ {min_length} nodes collapsed ({folded} nodes fewer)"
    return view._derive(title=view.title + " — chains collapsed", nodes=tuple(nodes), edges=tuple(edges),
                        groups=tuple(groups), overlays=overlays, notes=view.notes + (note,))


def focus(view, node, radius: int = 2):
    """The nodes at most ``radius`` edges from ``node`` (an operator index or a node id), edges in either
    direction; each kept node counts its neighbours left out (``hidden``)."""
    if radius < 0:
        raise ValueError(f"radius must be ≥ 0, got {radius}")
    centre = view.node(node).id
    nbrs: dict = {n.id: set() for n in view.nodes}
    for e in view.edges:
        if e.src in nbrs and e.dst in nbrs:
            nbrs[e.src].add(e.dst)
            nbrs[e.dst].add(e.src)
    dist = {centre: 0}
    todo = deque([centre])
    while todo:
        u = todo.popleft()
        if dist[u] == radius:
            continue
        for v in nbrs[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                todo.append(v)
    keep = set(dist)
    nodes = []
    for n in view.nodes:
        if n.id in keep:
            hidden = len(nbrs[n.id] - keep)
            nodes.append(dataclasses.replace(n, hidden=hidden) if hidden != n.hidden else n)
    edges = tuple(e for e in view.edges if e.src in keep and e.dst in keep)
    groups = []
    for g in view.groups:
        ids = tuple(i for i in g.nodes if i in keep)
        if ids:
            groups.append(dataclasses.replace(g, nodes=ids))
    seen = {n.index for n in nodes if n.index is not None}
    seen |= {int(m[1:]) for n in nodes for m in n.members if m[1:].isdigit()}
    reasons = tuple(dataclasses.replace(r, nodes=tuple(i for i in r.nodes if i in seen),
                                        details=tuple((t, tuple(i for i in ns if i in seen)) for t, ns in r.details
                                                      if any(i in seen for i in ns)))
                    for r in view.reasons if any(i in seen for i in r.nodes))
    overlays = {k: Overlay(ov.name, {i: v for i, v in ov.values.items() if i in keep}, ov.fmt, ov.combine,
                           ov.description) for k, ov in view.overlays.items()}
    note = f"focus on {centre}, radius {radius}: {len(nodes)} of {len(view.nodes)} nodes"
    return view._derive(title=f"{view.title} — around {centre}", nodes=tuple(nodes), edges=edges,
                        groups=tuple(groups), reasons=reasons, overlays=overlays, notes=view.notes + (note,))
