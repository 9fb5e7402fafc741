"""The neutral view model (``viz.op_graph``) built from a Model, a Plan, a delegated run and a compiled
model, and the smaller views of it (collapse, focus) — checked against the partitioner's own records."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import workbench
from helpers.viz_models import branchy_model, undirected_ball
from workbench import viz
from workbench.delegate import SimulatedAccelerator
from workbench.partition import REASON_CODES, GraphView, partition
from workbench.partition import compile as compile_plan
from workbench.schema import op_name
from workbench.viz.transform import chains
from workbench.viz.view_model import REASON_NUMBER, offload_ops


@lru_cache(maxsize=None)
def _selfie(path):
    return workbench.load(path)


@pytest.fixture(scope="module")
def selfie(corpus_paths):
    return _selfie(str(corpus_paths["selfie_segmentation"]))


@pytest.fixture(scope="module")
def plan(selfie):
    return partition(selfie, "tidl", "tidl")


# -- from a Model ----------------------------------------------------------------------------------------

def test_model_view_has_one_node_per_operator_labelled_op_and_version(selfie):
    g = viz.op_graph(selfie)
    sg = selfie.subgraphs[0]
    assert g.source == "model" and len(g.ops) == len(sg.operators)
    for i, op in enumerate(sg.operators):
        oc = selfie.operator_codes[op.opcode_index]
        assert g.node(i).label == f"{op_name(oc)} v{oc.version}"
        assert g.node(i).lane is None and not g.node(i).badges


def test_model_view_edges_are_the_runtime_tensors_between_producer_and_reader(selfie):
    g = viz.op_graph(selfie)
    gv = GraphView(selfie)
    want = set()
    for nd in gv.nodes:
        for t in set(nd.inputs):
            if t >= 0 and not gv.constant[t]:
                src = f"n{gv.producer[t]}" if gv.producer[t] >= 0 else f"in{t}"
                want.add((src, f"n{nd.index}", t))
    want |= {(f"n{gv.producer[t]}", f"out{t}", t) for t in gv.outputs}
    assert {(e.src, e.dst, e.tensor) for e in g.edges} == want
    for e in g.edges:
        meta = selfie.subgraphs[0].tensors[e.tensor]
        assert e.shape == tuple(meta.shape) and e.dtype == meta.type.name and e.nbytes == gv.nbytes(e.tensor)


def test_fused_activation_is_on_the_node():
    g = viz.op_graph(branchy_model())
    assert g.node(0).activation == "RELU6" and g.node(1).activation == ""
    assert "+ RELU6" in g.dot().source


def test_a_path_and_a_model_give_the_same_view(corpus_paths, selfie):
    a = viz.op_graph(corpus_paths["selfie_segmentation"])
    b = viz.op_graph(selfie)
    assert [n.id for n in a.nodes] == [n.id for n in b.nodes] and a.edges == b.edges


def test_op_graph_refuses_what_it_cannot_show():
    with pytest.raises(TypeError, match="takes a Model"):
        viz.op_graph(42)


# -- from a Plan -----------------------------------------------------------------------------------------

def test_plan_view_places_every_node_as_the_plan_does(plan):
    g = viz.op_graph(plan)
    assert g.source == "plan" and len(g.ops) == len(plan.placements)
    for p in plan.placements:
        n = g.node(p.node)
        assert n.lane == p.lane and n.partition == p.partition
        if p.partition is None:
            assert n.reason == p.reason and len(n.badges) == 1
            r = g.reason_of(n.badge)
            assert r.code == p.code and p.reason in r.texts and p.node in r.nodes
            assert p.node in dict(r.details)[p.reason]
        else:
            assert n.group == f"P{p.partition}" and not n.badges
    assert [set(grp.nodes) for grp in g.groups] == [{f"n{i}" for i in part.nodes} for part in plan.partitions]
    assert sum(len(r.nodes) for r in g.reasons) == len(plan.placements) - plan.offloaded


def test_reasons_are_one_per_code_numbered_by_the_code(plan):
    g = viz.op_graph(plan)
    codes = {}
    for p in plan.placements:
        if p.partition is None:
            codes.setdefault(p.code, set()).add(p.node)
    assert {r.code: set(r.nodes) for r in g.reasons} == codes
    assert [r.number for r in g.reasons] == sorted(REASON_NUMBER[c] for c in codes)
    for r in g.reasons:
        assert r.text == REASON_CODES[r.code]
        assert {t: set(ns) for t, ns in r.details} == {
            t: {p.node for p in plan.placements if p.partition is None and p.reason == t} for t in r.texts}


def test_boundary_edges_carry_the_bytes_the_plan_counts(plan):
    g = viz.op_graph(plan)
    where = {n.id: n.group for n in g.nodes}
    for grp, part in zip(g.groups, plan.partitions):
        # static tensors (weights unpacked elsewhere) are not copied in: the reader unpacks its own copy
        ins = {e.tensor: e.nbytes for e in g.edges
               if where[e.dst] == grp.id and where[e.src] != grp.id and e.crossing and not e.static}
        outs = {e.tensor: e.nbytes for e in g.edges if where[e.src] == grp.id and where[e.dst] != grp.id}
        assert set(ins) == set(part.runtime_inputs) and sum(ins.values()) == part.bytes_in == grp.bytes_in
        assert set(outs) == set(part.outputs) and sum(outs.values()) == part.bytes_out == grp.bytes_out
        assert all(e.crossing for e in g.edges if where[e.src] == grp.id and where[e.dst] != grp.id)
    # nothing crosses between two CPU nodes; weights unpacked on the CPU never cross
    assert not any(e.crossing for e in g.edges if where[e.src] is None and where[e.dst] is None)
    assert not any(e.crossing for e in g.edges if e.static and where[e.src] is None)


def test_boundary_edges_are_labelled_with_their_bytes(plan):
    g = viz.op_graph(plan)
    source = g.dot().source
    assert g.crossing
    for e in g.crossing:
        assert f"⇄ {e.nbytes:,} B" in source


def test_modeled_time_overlay_sums_to_the_plan_estimate(plan):
    g = viz.op_graph(plan)
    modeled = g.overlays["modeled"].values
    est = plan.estimate()
    cpu = sum(modeled[f"n{p.node}"] for p in plan.placements if p.partition is None)
    assert cpu == pytest.approx(est["cpu_rest_us"])


def test_overlays_plug_in_by_operator_index_and_show_on_the_nodes(plan):
    g = viz.op_graph(plan).with_overlay("int8 error", {3: 0.25, 5: 0.5}, fmt="{:.2f}", combine="max")
    assert g.overlays["int8 error"].text("n3") == "0.25"
    assert "int8 error 0.25" in g.dot().source
    c = g.collapse(3)
    chain = c.node(5)
    if chain.kind == "chain":
        assert c.overlays["int8 error"].values[chain.id] == max(v for k, v in {"n3": 0.25, "n5": 0.5}.items()
                                                                 if k in chain.members)


# -- from a delegated run ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def delegated(selfie):
    d = SimulatedAccelerator("tidl")
    it = workbench.Interpreter(model=selfie, experimental_delegates=[d])
    it.allocate_tensors()
    x = np.random.default_rng(0).uniform(0, 1, (1, 256, 256, 3)).astype(np.float32)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it, d


def test_run_view_places_nodes_as_the_interpreter_reports(delegated, selfie):
    it, d = delegated
    plan = partition(selfie, "tidl", "tflite")          # a runtime delegate: TFLite's cut of what tidl accepts
    g = viz.op_graph(it)
    assert g.source == "run"
    for p in it.placements():
        n = g.node(p.node)
        assert n.lane == p.lane and n.partition == p.partition
        if p.partition is None:
            assert p.reason in g.reason_of(n.badge).texts and g.reason_of(n.badge).code == p.code
    assert [grp.bytes_in for grp in g.groups] == [p.bytes_in for p in plan.partitions]


def test_run_view_shows_what_the_device_counted(delegated):
    it, d = delegated
    g = viz.op_graph(it)
    for grp in g.groups:
        s = d.stats[grp.partition]
        assert grp.stats["invocations"] == s.invocations >= 1
        assert grp.stats["bytes copied in"] == s.bytes_in == grp.bytes_in * s.invocations
        assert grp.stats["delegate node"] in it.execution_plan()


def test_run_view_takes_measured_times_from_profile_and_steps(delegated):
    it, _ = delegated
    prof = it.profile(runs=1, warmup=0)
    g = viz.op_graph(it, measured=prof)
    ran = {r.node for r in prof.nodes}
    n_ops = len(it.model.subgraphs[0].operators)
    cpu_ran = {i for i in ran if i < n_ops}
    assert {int(k[1:]) for k in g.overlays["measured"].values} == cpu_ran
    assert all("measured ms" in grp.stats for grp in g.groups)
    events = list(it.steps())
    h = viz.op_graph(it, measured=events)
    assert set(h.overlays["measured"].values) == set(g.overlays["measured"].values)


# -- collapse and focus -------------------------------------------------------------------------------------

def test_collapse_folds_the_known_chains_of_a_small_graph():
    g = viz.op_graph(branchy_model())
    c3 = g.collapse(3)
    assert [n.id for n in c3.ops] == ["c0", "n4", "n5", "c6"]
    assert c3.node("c0").members == ("n0", "n1", "n2", "n3") and c3.node("c6").members == ("n6", "n7", "n8")
    assert {(e.src, e.dst) for e in c3.edges} == {("in0", "c0"), ("c0", "n4"), ("c0", "n5"), ("n4", "c6"),
                                                  ("n5", "c6"), ("c6", "out11")}
    assert [n.id for n in g.collapse(4).ops] == ["c0", "n4", "n5", "n6", "n7", "n8"]
    assert len(g.collapse(5).ops) == 9 and c3.base is g


def test_collapse_on_a_plan_keeps_every_operator_once_and_reduces_the_count(plan):
    g = viz.op_graph(plan)
    found = chains(g, 3)
    c = g.collapse(3)
    folded = sum(len(run) + len(extra) - 1 for run, extra in found)
    assert found and len(c.nodes) == len(g.nodes) - folded
    seen = [m for n in c.nodes for m in (n.members or (n.id,))]
    assert sorted(seen) == sorted(n.id for n in g.nodes)
    for n in c.nodes:          # a chain never mixes places, and keeps its members' badges
        if n.kind == "chain":
            members = [g.node(m) for m in n.members]
            assert {(m.lane, m.group) for m in members} == {(n.lane, n.group)}
            assert set(n.badges) == {b for m in members for b in m.badges}
    assert sum(e.nbytes for e in c.crossing) == sum(e.nbytes for e in g.crossing)


def test_focus_keeps_the_neighbourhood_and_counts_what_it_hides():
    g = viz.op_graph(branchy_model())
    assert [n.id for n in g.focus(4, 1).nodes] == ["n3", "n4", "n6"]
    f2 = g.focus(4, 2)
    assert [n.id for n in f2.nodes] == ["n2", "n3", "n4", "n5", "n6", "n7"]
    assert f2.node("n2").hidden == 1 and f2.node("n7").hidden == 1 and f2.node("n4").hidden == 0
    assert len(g.focus(4, 0).nodes) == 1


def test_focus_on_a_plan_matches_the_partitioners_graph(plan):
    g = viz.op_graph(plan)
    for centre, radius in ((100, 2), (100, 3), (230, 4)):
        f = g.focus(centre, radius)
        want = undirected_ball(plan.graph, centre, radius)
        assert {n.index for n in f.ops} == want
        assert all(n.kind in ("input", "output") for n in f.nodes if n.index is None)
        assert len(f.nodes) < len(g.nodes)
        assert all(set(grp.nodes) <= {n.id for n in f.nodes} for grp in f.groups)


def test_focus_inside_a_collapsed_view_centres_on_the_chain(plan):
    c = viz.op_graph(plan).collapse(3)
    chain = next(n for n in c.nodes if n.kind == "chain")
    inner = int(chain.members[1][1:])
    assert c.focus(inner, 1).nodes[0].id == chain.id or chain.id in {n.id for n in c.focus(inner, 1).nodes}


# -- a compiled model, and its offload ops opened -------------------------------------------------------------

@pytest.fixture(scope="module")
def compiled(plan):
    return compile_plan(plan)


def test_compiled_view_shows_one_offload_node_per_partition(compiled, plan):
    g = viz.op_graph(compiled)
    off = [n for n in g.ops if n.kind == "offload"]
    assert g.source == "compiled" and not g.expanded
    assert sorted(n.partition for n in off) == [p.index for p in plan.partitions]
    assert all(n.lane == "device" for n in off) and all(n.lane == "cpu" for n in g.ops if n.kind == "op")


def test_expanded_offload_ops_show_the_original_nodes_they_carry(compiled, plan, selfie):
    g = viz.op_graph(compiled, expand=True)
    docs = offload_ops(compiled)
    assert g.expanded and len(g.groups) == len(docs) == len(plan.partitions)
    sg = selfie.subgraphs[0]
    for grp in g.groups:
        doc = docs[grp.stats["offload op"]]
        originals = [g.node(nid).original for nid in grp.nodes if g.node(nid).original is not None]
        assert originals == [int(i) for i in doc["nodes"]] == list(plan.partitions[grp.partition].nodes)
        for nid in grp.nodes:
            n = g.node(nid)
            if n.original is not None:
                oc = selfie.operator_codes[sg.operators[n.original].opcode_index]
                assert (n.op, n.version) == (op_name(oc), oc.version)
        assert grp.bytes_in == plan.partitions[grp.partition].bytes_in
    # the opened graph wires the same boundary: as many crossing bytes as the plan's view
    assert sum(e.nbytes for e in g.crossing) == sum(e.nbytes for e in viz.op_graph(plan).crossing)
    assert viz.op_graph(compiled).expand().expanded


def test_offload_view_puts_the_cut_beside_the_opened_model(compiled, plan):
    s = viz.offload_view(compiled, plan)
    assert s.left.source == "plan" and s.right.expanded
    assert viz.offload_view(compiled).left.source == "compiled"
    with pytest.raises(ValueError, match="compiled model"):
        viz.op_graph(plan).expand()


def test_a_node_calling_subgraphs_says_which(corpus_paths):
    m = workbench.load(corpus_paths["openwakeword_hey_jarvis"])
    g = viz.op_graph(m)
    calling = [n for n in g.ops if n.op == "IF"]
    assert calling and all(n.detail == "calls subgraphs 2, 1" for n in calling)
    assert len(viz.op_graph(m, 1).ops) == 0 and viz.op_graph(m, 2).ops
