"""GraphView, targets as data, and the three strategies (``graph_info.cc``, ``delegates/utils.cc``, Edge TPU, TIDL)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from workbench.partition import (
    GraphView,
    TargetError,
    list_targets,
    load_target,
    parse_target,
    partition,
    partition_graph,
    partition_graph_by_sweeps,
)
from workbench.schema import (
    ActivationFunctionType,
    ConcatenationOptions,
    DepthwiseConv2DOptions,
    ModelBuilder,
    Padding,
    Pool2DOptions,
    TensorType,
)
from workbench.schema import (
    BuiltinOperator as B,
)

# ------------------------------------------------------------------------------------------------
# the literal algorithm (whole sweeps, as graph_info.cc writes it) is partition_graph_by_sweeps, in
# workbench/partition/subsets.py beside the heap-based partition_graph: the twin of the fast one


def as_tuples(subsets):
    return [(s.partition, s.nodes, s.inputs, s.outputs) for s in subsets]


# graph_info.h: edges 0→1→2→3, 1→4→5, 3→5 (tensor k+1 is node k's output; tensor 0 is the input)
EX_INPUTS = [[0], [1], [2], [3], [2], [4, 5]]
EX_OUTPUTS = [[1], [2], [3], [4], [5], [6]]
EX_P = [i in (2, 3) for i in range(6)]


@pytest.mark.parametrize("partitioner", [partition_graph, partition_graph_by_sweeps])
def test_graph_info_worked_example_greedy_gives_014_23_5(partitioner):
    subs = partitioner(EX_INPUTS, EX_OUTPUTS, 7, [6], EX_P, greedy=True)
    assert [s.nodes for s in subs] == [[0, 1, 4], [2, 3], [5]]
    assert [s.partition for s in subs] == [False, True, False]
    assert subs[1].inputs == [2] and subs[1].outputs == [4]
    assert subs[0].outputs == [2, 5] and subs[2].inputs == [4, 5] and subs[2].outputs == [6]


@pytest.mark.parametrize("partitioner", [partition_graph, partition_graph_by_sweeps])
def test_graph_info_worked_example_control_edge_3_4_gives_01_23_45(partitioner):
    subs = partitioner(EX_INPUTS, EX_OUTPUTS, 7, [6], EX_P, greedy=True, control_edges=[(3, 4)])
    assert [s.nodes for s in subs] == [[0, 1], [2, 3], [4, 5]]


@pytest.mark.parametrize("partitioner", [partition_graph, partition_graph_by_sweeps])
def test_graph_info_worked_example_non_greedy_keeps_plan_order(partitioner):
    subs = partitioner(EX_INPUTS, EX_OUTPUTS, 7, [6], EX_P, greedy=False)
    assert [s.nodes for s in subs] == [[0, 1], [2, 3], [4, 5]]


def _random_dag(rng, n):
    node_inputs, node_outputs = [], []
    t = 2   # tensors 0, 1: graph inputs / constants
    for i in range(n):
        avail = list(range(t))
        k = rng.randint(1, 3)
        ins = rng.sample(avail, min(k, len(avail)))
        if rng.random() < 0.1:
            ins.append(-1)   # an omitted optional input
        node_inputs.append(ins)
        node_outputs.append([t] if rng.random() < 0.8 else [t, t + 1])
        t += len(node_outputs[-1])
    outs = rng.sample(range(2, t), min(2, t - 2))
    return node_inputs, node_outputs, t, outs


@pytest.mark.parametrize("seed", range(60))
def test_fast_partitioner_equals_the_literal_sweeps(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    ins, outs, nt, gout = _random_dag(rng, n)
    in_p = [rng.random() < 0.5 for _ in range(n)]
    ctrl = []
    if seed % 3 == 0:
        side = sorted(rng.sample(range(n), min(n, 4)))
        ctrl = list(zip(side, side[1:]))
    for greedy in (True, False):
        fast = as_tuples(partition_graph(ins, outs, nt, gout, in_p, greedy=greedy, control_edges=ctrl))
        sweeps = as_tuples(partition_graph_by_sweeps(ins, outs, nt, gout, in_p, greedy=greedy, control_edges=ctrl))
        assert fast == sweeps, (seed, greedy)


# ------------------------------------------------------------------------------------------------
# models made in code


def worked_example_model():
    """The graph_info.h example as a model: nodes 2, 3 are MUL, the others ADD."""
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    c = b.constant("c", np.ones((1, 4), np.float32))
    t = [x] + [b.tensor(f"t{k}", [1, 4]) for k in range(1, 7)]
    for k, (ins, outs) in enumerate(zip(EX_INPUTS, EX_OUTPUTS)):
        op = B.MUL if k in (2, 3) else B.ADD
        a = [t[i] for i in ins] + ([c] if len(ins) == 1 else [])
        b.op(op, a, [t[o] for o in outs])
    b.output(t[6])
    return b.build()


def mul_only_target(tmp_path, **extra):
    doc = {"name": "mul-only", "ops": {"MUL": {}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}}
    doc.update(extra)
    p = tmp_path / "mul.json"
    p.write_text(json.dumps(doc))
    return str(p)


def test_graphview_producers_consumers_and_constants():
    m = worked_example_model()
    g = GraphView(m)
    assert g.num_nodes == 6
    assert g.producer[g.nodes[5].outputs[0]] == 5
    t2 = g.nodes[1].outputs[0]
    assert g.consumers[t2] == [2, 4]
    assert g.is_constant(g.nodes[0].inputs[1]) and not g.is_constant(g.inputs[0])
    assert g.predecessors(5) == [3, 4] and g.successors(1) == [2, 4]
    assert g.control_edges == ()


def test_graphview_chains_side_effect_ops_in_plan_order():
    b = ModelBuilder()
    x = b.input("x", [1])
    r1 = b.tensor("h1", [], TensorType.RESOURCE)
    r2 = b.tensor("h2", [], TensorType.RESOURCE)
    y = b.tensor("y", [1])
    z = b.tensor("z", [1])
    b.op(B.VAR_HANDLE, [], [r1])
    b.op(B.RELU, [x], [y])
    b.op(B.VAR_HANDLE, [], [r2])
    b.op(B.ASSIGN_VARIABLE, [r1, y], [])
    b.op(B.RELU, [y], [z])
    b.output(z)
    g = GraphView(b.build())
    assert [g.has_side_effect(i) for i in range(5)] == [True, False, True, True, False]
    assert g.control_edges == ((0, 2), (2, 3))


def test_graphview_knows_which_subgraphs_a_node_calls(corpus_paths):
    from workbench import load

    g = GraphView(load(corpus_paths["openwakeword_hey_jarvis"]))
    assert g.calls == {25: (2, 1)} and g.reachable_subgraphs(25) == [2, 1]
    assert g.view(2).num_nodes == 26 and g.view(2).view(0) is g
    wake = GraphView(load(corpus_paths["microwakeword_alexa"]))
    assert wake.calls == {0: (1,)}
    links = wake.resource_links()
    assert len(links.nodes) == 6 and all(0 in nodes for nodes in links.nodes.values())   # CALL_ONCE: every variable
    assert links.names[("var", "", "stream_6/states")] == "stream_6/states"
    assert links.nodes[("var", "", "stream_6/states")] == (0, 3, 10, 13)
    assert GraphView(worked_example_model()).calls == {}


def test_the_new_target_constraints_give_exact_reasons(tmp_path):
    doc = {"name": "q", "ops": {"CONCATENATION": {"min_inputs": 2, "max_inputs": 3},
                                "QUANTIZE": {"dtype_pairs": [["FLOAT32", "INT8"]]}},
           "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}}
    t = parse_target(doc)
    b = ModelBuilder()
    xs = [b.input(f"x{k}", [1, 2]) for k in range(4)]
    y = b.tensor("y", [1, 8])
    b.op(B.CONCATENATION, xs, [y], ConcatenationOptions(axis=1))
    q = b.tensor("q", [1, 8], np.uint8, quantization={"scale": 0.1, "zero_point": 128})
    b.op(B.QUANTIZE, [y], [q])
    b.output(q)
    plan = partition(b.build(), t, "tflite")
    assert plan.placements[0].reason == "CONCATENATION: 4 inputs, the target takes 2 to 3"
    assert plan.placements[1].reason == ("QUANTIZE: FLOAT32 → UINT8 not among the type pairs it takes "
                                         "(FLOAT32 → INT8)")
    assert t.variables == "private" and load_target("xnnpack").variables == "shared"


def test_tflite_strategy_on_the_worked_example_model(tmp_path):
    plan = partition(worked_example_model(), mul_only_target(tmp_path), "tflite")
    assert [p.nodes for p in plan.partitions] == [(2, 3)]
    assert [p.partition for p in plan.placements] == [None, None, 0, 0, None, None]
    assert plan.placements[0].reason == "ADD: not supported"
    assert plan.partitions[0].runtime_inputs == (GraphView(plan.model).nodes[1].outputs[0],)


def chain_model(kinds):
    """A chain of ops (MUL = supported by mul_only_target, ADD = not)."""
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    c = b.constant("c", np.full((1, 4), 0.5, np.float32))
    cur = x
    for k, kind in enumerate(kinds):
        y = b.tensor(f"y{k}", [1, 4])
        b.op(B.MUL if kind == "M" else B.ADD, [cur, c], [y])
        cur = y
    b.output(cur)
    return b.build()


def test_max_partitions_keeps_the_largest(tmp_path):
    m = chain_model("MMMAMAMM")   # supported runs of 3, 1, 2
    plan = partition(m, mul_only_target(tmp_path), "tflite")
    assert [len(p) for p in plan.partitions] == [3, 1, 2]
    one = partition(m, mul_only_target(tmp_path), "tflite", max_partitions=1)
    assert [p.nodes for p in one.partitions] == [(0, 1, 2)]
    assert one.placements[4].reason.startswith("supported, but its partition (1 nodes) is not among the 1 largest")


def test_min_nodes_stops_at_the_first_small_partition(tmp_path):
    m = chain_model("MMMAMAMM")
    plan = partition(m, mul_only_target(tmp_path), "tflite", min_nodes=2)
    assert [p.nodes for p in plan.partitions] == [(0, 1, 2), (6, 7)]
    assert plan.placements[4].reason == "supported, but its partition has 1 node(s) < min_nodes_per_partition 2"


def test_denied_nodes_and_op_types(tmp_path):
    m = chain_model("MMMM")
    plan = partition(m, mul_only_target(tmp_path), "tflite", deny=[1])
    assert [p.nodes for p in plan.partitions] == [(0,), (2, 3)]
    assert plan.placements[1].reason == "MUL: node 1 denied by the policy"
    plan = partition(m, mul_only_target(tmp_path), "tflite", deny=["MUL"])
    assert plan.partitions == () and plan.placements[0].reason == "MUL: op type denied by the policy"


# ------------------------------------------------------------------------------------------------
# targets


def pool_model(size=33):
    b = ModelBuilder()
    x = b.input("x", [1, size, size, 8])
    y = b.tensor("y", [1, 1, 1, 8])
    b.op(B.AVERAGE_POOL_2D, [x], [y], Pool2DOptions(padding=Padding.VALID, stride_w=1, stride_h=1,
                                                     filter_width=size, filter_height=size))
    b.output(y)
    return b.build()


def test_tidl_rejects_a_33x33_average_pool_with_the_limit():
    plan = partition(pool_model(33), "tidl", "tidl")
    assert plan.placements[0].reason == "AVERAGE_POOL_2D: filter 33x33 > 9x9 limit"
    assert partition(pool_model(9), "tidl", "tidl").offloaded == 1


def test_old_delegate_rejects_depthwise_v2():
    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 3])
    w = b.constant("w", np.ones((1, 3, 3, 3), np.float32))
    y = b.tensor("y", [1, 8, 8, 3])
    b.op(B.DEPTHWISE_CONV_2D, [x, w, -1], [y], DepthwiseConv2DOptions(stride_w=1, stride_h=1, dilation_w_factor=2,
                                                                    dilation_h_factor=2), version=2)
    b.output(y)
    plan = partition(b.build(), "old-delegate", "tflite")
    assert plan.placements[0].reason == "DEPTHWISE_CONV_2D v2 > max version 1"


def test_tidl_does_not_support_resize_bilinear():
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 3])
    s = b.constant("size", np.array([8, 8], np.int32))
    y = b.tensor("y", [1, 8, 8, 3])
    b.op(B.RESIZE_BILINEAR, [x, s], [y])
    b.output(y)
    assert partition(b.build(), "tidl", "tidl").placements[0].reason == "RESIZE_BILINEAR: not supported"


def test_edgetpu_is_int8_only_and_pools_take_no_fused_activation():
    plan = partition(pool_model(3), "edgetpu", "edgetpu")
    assert plan.placements[0].reason == ("Operation is working on an unsupported data type: "
                                         "AVERAGE_POOL_2D: input 0 is FLOAT32, not in [INT8, UINT8]")
    b = ModelBuilder()
    q = {"scale": 0.1, "zero_point": 0}
    x = b.input("x", [1, 4, 4, 8], np.int8, quantization=q)
    y = b.tensor("y", [1, 2, 2, 8], np.int8, quantization=q)
    b.op(B.MAX_POOL_2D, [x], [y], Pool2DOptions(padding=Padding.VALID, stride_w=2, stride_h=2, filter_width=2,
                                                 filter_height=2,
                                                 fused_activation_function=ActivationFunctionType.RELU))
    b.output(y)
    plan = partition(b.build(), "edgetpu", "edgetpu")
    assert plan.placements[0].reason == ("Operation is otherwise supported, but not mapped due to some unspecified "
                                         "limitation: MAX_POOL_2D: fused activation RELU not allowed (allowed: NONE)")


def test_shipped_targets_load():
    assert set(list_targets()) >= {"tidl", "edgetpu", "xnnpack", "old-delegate"}
    for name in list_targets():
        t = load_target(name)
        assert t.name == name and t.cost["macs_per_cycle"] > 0
    assert len(load_target("tidl").ops) <= 25


@pytest.mark.parametrize("doc, message", [
    ({"name": "x", "ops": {"CONV_2D": {}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1},
      "colour": 1}, "colour: unknown key"),
    ({"name": "x", "ops": {"CONV_2D": {"max_filter": 9}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1,
                                                                  "bandwidth_mb_s": 1}},
     "ops.CONV_2D.max_filter: expected [height, width] of positive integers, got 9"),
    ({"name": "x", "ops": {"RESIZE_BILINEA": {}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}},
     "ops.RESIZE_BILINEA: not a builtin operator (did you mean 'RESIZE_BILINEAR'?"),
    ({"name": "x", "ops": {"ADD": {"dtypes": ["FLOAT"]}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1,
                                                                  "bandwidth_mb_s": 1}},
     "ops.ADD.dtypes: 'FLOAT' is not a TensorType"),
    ({"name": "x", "ops": {"ADD": {"max_verson": 2}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1,
                                                              "bandwidth_mb_s": 1}},
     "ops.ADD.max_verson: unknown constraint (did you mean 'max_version'?)"),
    ({"name": "x", "ops": {"ADD": {}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1}}, "cost.bandwidth_mb_s: missing"),
    ({"name": "x", "ops": {"ADD": {}}, "cost": {"macs_per_cycle": 0, "clock_mhz": 1, "bandwidth_mb_s": 1}},
     "cost.macs_per_cycle: expected a positive number, got 0"),
    ({"name": "x", "ops": {"QUANTIZE": {"dtype_pairs": [["INT8"]]}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1,
                                                                              "bandwidth_mb_s": 1}},
     "ops.QUANTIZE.dtype_pairs: expected a non-empty list of [input type, output type] pairs, got [['INT8']]"),
    ({"name": "x", "ops": {"QUANTIZE": {"dtype_pairs": [["INT8", "UINT9"]]}},
      "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}},
     "ops.QUANTIZE.dtype_pairs: 'UINT9' is not a TensorType (did you mean 'UINT8'?)"),
    ({"name": "x", "ops": {"CONCATENATION": {"max_inputs": 0}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1,
                                                                        "bandwidth_mb_s": 1}},
     "ops.CONCATENATION.max_inputs: expected a positive integer, got 0"),
    ({"name": "x", "ops": {"IF": {"subgraphs": "yes"}}, "cost": {"macs_per_cycle": 1, "clock_mhz": 1,
                                                                "bandwidth_mb_s": 1}},
     "ops.IF.subgraphs: expected true or false, got 'yes'"),
    ({"name": "x", "defaults": {"subgraphs": True}, "ops": {"IF": {}},
      "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}}, "defaults.subgraphs: unknown constraint"),
    ({"name": "x", "variables": "global", "ops": {"ADD": {}},
      "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1}},
     "variables: expected one of 'private', 'shared', got 'global'"),
])
def test_bad_target_files_say_where_and_what(tmp_path, doc, message):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(TargetError) as err:
        load_target(str(p))
    assert str(err.value).startswith(str(p) + ": ")
    assert message in str(err.value)


def test_toml_target_and_bad_json(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text('name = "t"\n[ops.MUL]\nmax_version = 1\n[cost]\nmacs_per_cycle = 1\nclock_mhz = 1\n'
                 'bandwidth_mb_s = 1\n')
    assert load_target(str(p)).ops["MUL"].constraints == {"max_version": 1}
    bad = tmp_path / "b.json"
    bad.write_text("{")
    with pytest.raises(TargetError, match="not valid JSON"):
        load_target(str(bad))
    with pytest.raises(TargetError, match="no target named 'nope'"):
        load_target("nope")


# ------------------------------------------------------------------------------------------------
# edgetpu and tidl strategies


def test_edgetpu_cuts_at_the_first_unsupported_op(tmp_path):
    m = chain_model("MMAMM")
    plan = partition(m, mul_only_target(tmp_path), "edgetpu")
    assert [p.nodes for p in plan.partitions] == [(0, 1)]
    assert plan.placements[2].reason == "ADD: not supported"
    assert plan.placements[3].reason.startswith("More than one subgraph is not supported: depends on node 2 (ADD)")


def test_tidl_walk_keeps_the_input_side_and_repeats_on_what_it_left(tmp_path):
    # M0 M1 A2 M3 M4: up from the output, M4 and M3 are collected; at A2 the subgraph's output is reset
    # to A2's input, so M3 and M4 stay behind and M1, M0 form the subgraph (the TI paper's walk)
    m = chain_model("MMAMM")
    plan = partition(m, mul_only_target(tmp_path), "tidl", max_partitions=1)
    assert [p.nodes for p in plan.partitions] == [(0, 1)]      # the input side
    assert plan.placements[3].reason == ("supported, but the walk reset the subgraph's output at node 2 (ADD), "
                                         "leaving it between that node and the graph output, and "
                                         "max_num_subgraphs=1 passes were made")
    assert plan.placements[3].reason.code == "partition-limit"
    plan = partition(m, mul_only_target(tmp_path), "tidl")         # pass 2 walks what pass 1 left behind
    assert [p.nodes for p in plan.partitions] == [(0, 1), (3, 4)]
    assert plan.partitions[1].runtime_inputs == (GraphView(m).nodes[2].outputs[0],)


def test_tidl_walk_with_an_unsupported_first_node_takes_the_next_stretch(tmp_path):
    # A0 M1 M2: the reset at A0 leaves nothing above it; the subgraph is M1 M2
    plan = partition(chain_model("AMM"), mul_only_target(tmp_path), "tidl", max_partitions=1)
    assert [p.nodes for p in plan.partitions] == [(1, 2)]


def test_tidl_never_makes_a_partition_that_leaves_and_reenters(tmp_path):
    # x → M0 → A1 → M2, and M0 → M2: the reset at A1 puts M0 and M2 in different subgraphs
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    t0, t1, t2 = (b.tensor(f"t{k}", [1, 4]) for k in range(3))
    b.op(B.MUL, [x, x], [t0])
    b.op(B.ADD, [t0, t0], [t1])
    b.op(B.MUL, [t0, t1], [t2])
    b.output(t2)
    plan = partition(b.build(), mul_only_target(tmp_path), "tidl")
    assert [p.nodes for p in plan.partitions] == [(0,), (2,)]


def test_plan_repr_html_and_diff(tmp_path):
    m = chain_model("MMAMM")
    a = partition(m, mul_only_target(tmp_path), "tflite")
    e = partition(m, mul_only_target(tmp_path), "edgetpu")
    text = repr(a)
    assert "4/5 nodes offloaded in 2 partition(s)" in text and "ADD: not supported" in text
    assert "<table>" in a._repr_html_()
    d = a.diff(e)
    assert d and [row[0] for row in d.moved] == [3, 4] and d.partitions == (2, 1)
    assert not a.diff(a)
    assert a.to_dict()["offloaded"] == 4


@pytest.mark.parametrize("strategy", ["tflite", "tidl", "edgetpu"])
@pytest.mark.parametrize("target", ["tidl", "xnnpack", "old-delegate", "edgetpu"])
def test_every_corpus_node_gets_a_placement_and_a_reason(corpus_paths, target, strategy):
    from workbench import load

    for name, path in corpus_paths.items():
        m = load(path)
        plan = partition(m, target, strategy)
        assert len(plan.placements) == len(m.subgraphs[0].operators)
        assert all(p.reason for p in plan.placements)
        seen = [i for p in plan.partitions for i in p.nodes]
        assert len(seen) == len(set(seen))
