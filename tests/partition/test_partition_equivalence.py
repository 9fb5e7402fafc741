"""The fast partitioner gives exactly what the straightforward versions give.

* ``naive_tidl`` is the literal output-upward walk (one whole backward sweep per subgraph, as the
  strategy was first written); the one-sweep bit-mask walk in ``strategies._tidl`` must give the same
  plan — placements, reasons, partitions — on random graphs with fan-out, several outputs, dead
  branches and every policy knob.
* GraphView's lists equal a plain recomputation; the target checks' options table equals
  ``workbench.options.parse(...).params`` for every corpus node.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from helpers.naive_partition import naive_tidl
from workbench import load
from workbench.options import parse as parse_options
from workbench.partition import GraphView, partition, strategies
from workbench.partition.target import _opts
from workbench.schema import CLASSES, ModelBuilder, TensorType
from workbench.schema import BuiltinOperator as B
from workbench.schema.types import TENSOR_ITEMSIZE

# ------------------------------------------------------------------------------------------------
# the literal walk, pass by pass (the strategy's first implementation, kept as the twin)


def random_model(rng: random.Random, n: int, variables: bool = False):
    """A random DAG of MUL (supported) / ADD (not) nodes: fan-out, 1-2 outputs per node, several
    graph outputs, dead branches (no path to an output).  ``variables``: also READ_VARIABLE /
    ASSIGN_VARIABLE of two resource variables here and there (CPU nodes chained by control edges)."""
    b = ModelBuilder()
    avail = [b.input("x", [1, 4])]
    if rng.random() < 0.5:
        avail.append(b.input("x2", [1, 4]))
    avail.append(b.constant("c", np.ones((1, 4), np.float32)))
    produced = []
    handles = []
    if variables:
        for name in ("u", "v"):
            h = b.tensor(f"h_{name}", [], TensorType.RESOURCE)
            b.op(B.VAR_HANDLE, [], [h], CLASSES["VarHandleOptions"](container="", shared_name=name))
            b.op(B.ASSIGN_VARIABLE, [h, avail[0]], [])
            handles.append(h)
    for k in range(n):
        if handles and rng.random() < 0.25:
            h = rng.choice(handles)
            if rng.random() < 0.5:
                b.op(B.ASSIGN_VARIABLE, [h, rng.choice(avail[-6:])], [])
            else:
                r = b.tensor(f"r{k}", [1, 4])
                b.op(B.READ_VARIABLE, [h], [r])
                avail.append(r)
                produced.append(r)
            continue
        recent = avail[-6:] if rng.random() < 0.7 else avail
        ins = [rng.choice(recent), rng.choice(avail)]
        outs = [b.tensor(f"t{k}", [1, 4])]
        if rng.random() < 0.15:
            outs.append(b.tensor(f"t{k}b", [1, 4]))
        b.op(B.MUL if rng.random() < 0.65 else B.ADD, ins, outs)
        avail.extend(outs)
        produced.extend(outs)
    picks = rng.sample(produced, min(len(produced), rng.randint(1, 3)))
    if produced[-1] not in picks and rng.random() < 0.7:
        picks.append(produced[-1])
    b.output(*picks)
    return b.build()


@pytest.fixture(scope="module")
def mul_target(tmp_path_factory):
    p = tmp_path_factory.mktemp("t") / "mul.json"
    p.write_text(json.dumps({"name": "mul-only", "ops": {"MUL": {}},
                             "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}}))
    return str(p)


def _plans(model, target, monkeypatch, **knobs):
    fast = partition(model, target, "tidl", **knobs)
    with monkeypatch.context() as m:
        m.setattr(strategies, "_tidl", naive_tidl)
        slow = partition(model, target, "tidl", **knobs)
    return fast, slow


@pytest.mark.parametrize("seed", range(120))
def test_tidl_one_sweep_equals_the_pass_by_pass_walk(seed, mul_target, monkeypatch):
    rng = random.Random(seed)
    model = random_model(rng, rng.randint(1, 60), variables=seed % 3 == 1)
    knobs = {"max_partitions": rng.choice([0, 0, 1, 2, 3, 5]), "min_nodes": rng.choice([0, 0, 2, 3])}
    if seed % 4 == 0:
        knobs["deny"] = [rng.randrange(len(model.subgraphs[0].operators))]
    fast, slow = _plans(model, mul_target, monkeypatch, **knobs)
    assert fast.placements == slow.placements, (seed, knobs)
    assert fast.partitions == slow.partitions, (seed, knobs)


def test_tidl_equivalence_on_a_long_graph_with_many_subgraphs(mul_target, monkeypatch):
    # more than 64 subgraphs: the masks are wider than a machine word
    rng = random.Random(99)
    b = ModelBuilder()
    ts = [b.input("x", [1, 4])]
    for k in range(600):   # a chain with short skips: one subgraph per run of MULs
        y = b.tensor(f"t{k}", [1, 4])
        b.op(B.ADD if k % 5 == 4 or rng.random() < 0.1 else B.MUL, [ts[-1], rng.choice(ts[-4:])], [y])
        ts.append(y)
    b.output(ts[-1])
    model = b.build()
    fast, slow = _plans(model, mul_target, monkeypatch, max_partitions=200)
    assert fast.placements == slow.placements and fast.partitions == slow.partitions
    assert len(fast.partitions) > 64


@pytest.mark.parametrize("target", ["tidl", "xnnpack", "edgetpu", "old-delegate"])
def test_tidl_equivalence_on_the_corpus(corpus_paths, target, monkeypatch):
    for name, path in sorted(corpus_paths.items()):
        m = load(path)
        for knobs in ({}, {"max_partitions": 2}, {"min_nodes": 3}):
            fast, slow = _plans(m, target, monkeypatch, **knobs)
            assert fast.placements == slow.placements, (name, knobs)
            assert fast.partitions == slow.partitions, (name, knobs)


# ------------------------------------------------------------------------------------------------
# GraphView and the option lookup of the target checks


def test_graphview_lists_equal_a_plain_recomputation(corpus_paths):
    for name, path in sorted(corpus_paths.items()):
        m = load(path)
        sg = m.subgraphs[0]
        g = GraphView(m)
        nt = len(sg.tensors)
        producer = [-1] * nt
        consumers = [[] for _ in range(nt)]
        for i, op in enumerate(sg.operators):
            for t in op.outputs or ():
                if 0 <= t < nt:
                    producer[t] = i
            for t in sorted(set(op.inputs or ())):
                if 0 <= t < nt:
                    consumers[t].append(i)
        assert g.producer == producer, name
        assert [sorted(c) for c in g.consumers] == consumers, name
        assert all(c == sorted(c) for c in g.consumers), name
        side = [i for i, op in enumerate(sg.operators)
                if g.nodes[i].op in (B.IF, B.WHILE, B.CALL_ONCE, B.VAR_HANDLE, B.ASSIGN_VARIABLE, B.READ_VARIABLE)
                or any(0 <= t < nt and sg.tensors[t].type == TensorType.RESOURCE
                       for t in (*(op.inputs or ()), *(op.outputs or ())))]
        assert g.control_edges == tuple(zip(side, side[1:])), name
        for t in range(nt):
            size = 1
            for d in sg.tensors[t].shape or ():
                size *= max(int(d), 1)
            assert g.nbytes(t) == size * TENSOR_ITEMSIZE.get(sg.tensors[t].type, 1), (name, t)


def test_option_lookup_equals_options_parse(corpus_paths):
    for name, path in sorted(corpus_paths.items()):
        m = load(path)
        g = GraphView(m)
        for i, op in enumerate(m.subgraphs[0].operators):
            assert _opts(g, g.nodes[i]) == parse_options(m, op, 0).params, (name, i)
