"""The rules every plan obeys, whatever the target and strategy (tiny models made here + the corpus).

* convex over data AND control edges: no cycle once each partition is one operator (``PlanError``
  names the cycle); the tidl walk follows control edges;
* ops that call subgraphs (IF / WHILE / CALL_ONCE) are refused unless the target runs the called
  subgraphs too (``"subgraphs": true``), which then travel into the partition's sub-model;
* resource variables: ``variables: private`` (default) — every node of a variable goes to one place;
  ``variables: shared`` (XNNPACK) — the delegate uses the interpreter's variables, so they may be split.

Compiled models are compared with the original over several invokes (the models keep state).
"""

from __future__ import annotations

import dataclasses
import functools
import json

import numpy as np
import pytest

from helpers.partition_models import VAR_OPS, add_subgraph, make_target, stateful_model
from workbench import Interpreter, corpus, dump, load
from workbench.partition import GraphView, PlanError, compile, execution_order, partition, strategies
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    IfOptions,
    ModelBuilder,
    TensorType,
    VarHandleOptions,
    op_name,
)

# ------------------------------------------------------------------------------------------------
# models


def if_model():
    """a = x * x; y = IF(flag, a) with then: a * 2 (subgraph 1), else: a - 1 (subgraph 2); z = y + x."""
    b = ModelBuilder()

    def then(b):
        a = b.input("t_a", [1, 4])
        y = b.tensor("t_y", [1, 4])
        b.op(B.MUL, [a, b.constant("two", np.full((1, 4), 2, np.float32))], [y])
        b.output(y)

    def otherwise(b):
        a = b.input("e_a", [1, 4])
        y = b.tensor("e_y", [1, 4])
        b.op(B.SUB, [a, b.constant("one", np.ones((1, 4), np.float32))], [y])
        b.output(y)

    flag = b.input("flag", [1], np.bool_)
    x = b.input("x", [1, 4])
    a = b.tensor("a", [1, 4])
    b.op(B.MUL, [x, x], [a])
    y = b.tensor("y", [1, 4])
    b.op(B.IF, [flag, a], [y], IfOptions(then_subgraph_index=add_subgraph(b, "then", then),
                                          else_subgraph_index=add_subgraph(b, "else", otherwise)))
    z = b.tensor("z", [1, 4])
    b.op(B.ADD, [y, x], [z])
    b.output(z)
    return b.build()


def control_edge_model():
    """The microwakeword pattern in five nodes: a MUL whose output reaches the last MUL both directly
    and through ADD → ASSIGN_VARIABLE ⇒ READ_VARIABLE (a control edge: the read must follow the write).

    0 VAR_HANDLE h; 1 a = x * c; 2 s = a + c; 3 ASSIGN h ← s; 4 r = READ h; 5 y = a * r."""
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    c = b.constant("c", np.full((1, 4), 0.5, np.float32))
    h = b.tensor("h", [], TensorType.RESOURCE)
    b.op(B.VAR_HANDLE, [], [h], VarHandleOptions(container="", shared_name="state"))
    a = b.tensor("a", [1, 4])
    b.op(B.MUL, [x, c], [a])
    s = b.tensor("s", [1, 4])
    b.op(B.ADD, [a, c], [s])
    b.op(B.ASSIGN_VARIABLE, [h, s], [])
    r = b.tensor("r", [1, 4])
    b.op(B.READ_VARIABLE, [h], [r])
    y = b.tensor("y", [1, 4])
    b.op(B.MUL, [a, r], [y])
    b.output(y)
    return b.build()


def run_steps(model, steps) -> list:
    """Outputs after each of ``steps`` (lists of inputs), all on one interpreter."""
    it = Interpreter(model_content=dump(model))
    it.allocate_tensors()
    out = []
    for inputs in steps:
        for d, x in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], x)
        it.invoke()
        out += [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]
    return out


def assert_compiles_to_the_same(plan, steps):
    """compile(plan) round-trips through bytes and gives bit-identical outputs at every step."""
    compiled = load(dump(compile(plan)))
    want, got = run_steps(plan.model, steps), run_steps(compiled, steps)
    assert len(want) == len(got) == len(steps) * len(plan.model.subgraphs[0].outputs)
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    return compiled


def steps_x(count: int = 3):
    return [[np.array([[0.5, -1.0, 2.0, -3.5]], np.float32) * (k + 1)] for k in range(count)]


def ops_of(model, subgraph: int = 0) -> list:
    return [op_name(model.operator_codes[o.opcode_index]) for o in model.subgraphs[subgraph].operators]


# ------------------------------------------------------------------------------------------------
# convex over data and control edges


def test_control_edges_of_the_model():
    g = GraphView(control_edge_model())
    assert g.control_edges == ((0, 3), (3, 4))


def test_tidl_walk_follows_control_edges(tmp_path):
    mul = make_target(tmp_path, "mul-only", {"MUL": {}})
    plan = partition(control_edge_model(), mul, "tidl")
    # READ 4 (unsupported) resets the walk: MUL 1 is pass 0, MUL 5 pass 1
    assert [p.nodes for p in plan.partitions] == [(1,), (5,)]
    assert_compiles_to_the_same(plan, steps_x())


def test_tidl_walk_resets_where_an_unreached_node_leads_back_through_a_control_edge(tmp_path, monkeypatch):
    # MUL and READ_VARIABLE supported, variables shared: the walk collects 5 and 4; ASSIGN 3 feeds no
    # output (the walk never reaches it) but must run before READ 4 (a control edge), and MUL 1 feeds it
    # through ADD 2 — so the walk resets at 3, and 1 (with its VAR_HANDLE 0) is another subgraph
    from helpers.naive_partition import naive_tidl

    t = make_target(tmp_path, "mul-read", {"MUL": {}, "READ_VARIABLE": {}, "VAR_HANDLE": {}}, variables="shared")
    plan = partition(control_edge_model(), t, "tidl")
    assert [p.nodes for p in plan.partitions] == [(0, 1), (4, 5)]
    assert_compiles_to_the_same(plan, steps_x())
    monkeypatch.setattr(strategies, "_tidl", functools.partial(naive_tidl, follow_control=False))
    with pytest.raises(PlanError) as err:   # blind to the control edge, the walk would make a cycle
        partition(control_edge_model(), t, "tidl")
    assert str(err.value) == (
        "plan mul-read/tidl is invalid: partition 0 cannot run as one operator — the graph would have a cycle: "
        "node 0 VAR_HANDLE (in partition 0) → node 3 ASSIGN_VARIABLE ⇒ node 4 READ_VARIABLE (in partition 0) "
        "(→ data edge, ⇒ control edge: side-effect ops keep their order); a partition must be convex over data "
        "and control edges")


def test_execution_order_catches_data_cycles_and_orders_the_rest():
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    t = [x]
    for k, op in enumerate((B.MUL, B.ADD, B.MUL, B.ADD)):
        t.append(b.tensor(f"t{k}", [1, 4]))
        b.op(op, [t[-2], t[-2]], [t[-1]])
    b.output(t[-1])
    g = GraphView(b.build())
    with pytest.raises(PlanError, match=r"node 0 MUL \(in partition 0\) → node 1 ADD → node 2 MUL \(in partition 0\)"):
        execution_order(g, [0, None, 0, None])
    assert execution_order(g, [None, 0, 0, None]) == [("n", 0), ("p", 0), ("n", 3)]
    # an extra control edge 3 ⇒ 1 makes a cycle of CPU nodes and partitions too
    with pytest.raises(PlanError, match="⇒ node 1 ADD"):
        execution_order(g, [None, 0, 0, None], extra_edges=[(3, 1)])


def _assert_convex(plan) -> None:
    """Independent of execution_order: no path leaves a partition and comes back (data + control edges)."""
    g = plan.graph
    succ = [set(g.successors(i)) for i in range(g.num_nodes)]
    for a, b in g.control_edges:
        succ[a].add(b)
    for p in plan.partitions:
        inside = set(p.nodes)
        todo = [c for i in inside for c in succ[i] if c not in inside]
        seen = set(todo)
        while todo:
            u = todo.pop()
            for c in succ[u]:
                assert c not in inside, (plan.name, p.index, u, c)
                if c not in seen:
                    seen.add(c)
                    todo.append(c)


@pytest.mark.parametrize("strategy", ["tflite", "tidl", "edgetpu"])
def test_no_strategy_makes_a_cycle_on_the_corpus(corpus_paths, strategy):
    checked = 0
    for name, path in sorted(corpus_paths.items()):
        m = load(path)
        for target in ("tidl", "xnnpack", "old-delegate", "edgetpu"):
            for knobs in ({}, {"max_partitions": 2}, {"min_nodes": 3}):
                plan = partition(m, target, strategy, **knobs)
                _assert_convex(plan)
                checked += len(plan.partitions)
    assert checked > 100


# ------------------------------------------------------------------------------------------------
# ops that call subgraphs


def test_old_delegate_refuses_if_and_call_once_naming_the_subgraphs():
    plan = partition(if_model(), "old-delegate", "tflite")
    assert plan.placements[1].reason == "IF: calls subgraphs 1, 2 which the delegate would not see"
    assert [p.nodes for p in plan.partitions] == [(0,), (2,)]
    plan = partition(stateful_model(), "old-delegate", "tflite")
    assert plan.placements[0].reason == "CALL_ONCE: calls subgraph 1 which the delegate would not see"


@pytest.mark.parametrize("flag", [True, False])
def test_a_target_that_runs_the_branches_takes_if_with_its_subgraphs(tmp_path, flag):
    t = make_target(tmp_path, "cf", {"MUL": {}, "SUB": {}, "ADD": {}, "IF": {"subgraphs": True}})
    plan = partition(if_model(), t, "tflite")
    assert [p.nodes for p in plan.partitions] == [(0, 1, 2)]
    steps = [[np.array([flag]), np.array([[1.0, -2.0, 3.0, 0.25]], np.float32) * k] for k in (1, 2)]
    compiled = assert_compiles_to_the_same(plan, steps)
    assert ops_of(compiled) == ["workbench-offload"]
    from flatbuffers import flexbuffers

    inner = load(bytes(flexbuffers.Loads(bytes(compiled.subgraphs[0].operators[0].custom_options))["model"]))
    assert [ops_of(inner, s) for s in range(3)] == [["MUL", "IF", "ADD"], ["MUL"], ["SUB"]]
    if_op = inner.subgraphs[0].operators[1]
    assert (if_op.builtin_options.then_subgraph_index, if_op.builtin_options.else_subgraph_index) == (1, 2)


def test_a_branch_node_the_target_does_not_take_keeps_if_on_the_cpu(tmp_path):
    t = make_target(tmp_path, "cf", {"MUL": {}, "ADD": {}, "IF": {"subgraphs": True}})
    plan = partition(if_model(), t, "tflite")
    assert plan.placements[1].reason == ("IF: calls subgraph 2, whose node 0 the target does not take "
                                         "(SUB: not supported)")


def test_hey_jarvis_if_goes_along_with_its_subgraphs(corpus_paths, tmp_path):
    m = load(corpus_paths["openwakeword_hey_jarvis"])
    everything = make_target(tmp_path, "everything", {"*": {"subgraphs": True}})
    plan = partition(m, everything, "tflite")
    assert plan.offloaded == len(plan.placements) and len(plan.partitions) == 1
    rng = np.random.default_rng(5)
    d = Interpreter(model=m).get_input_details()[0]
    steps = [[rng.uniform(-1, 1, size=d["shape"]).astype(np.float32)] for _ in range(2)]
    steps.append([np.full(d["shape"], 3.0, np.float32)])
    assert_compiles_to_the_same(plan, steps)
    assert "IF: calls subgraphs 1, 2 which the delegate would not see" in partition(m, "old-delegate").reasons()


# ------------------------------------------------------------------------------------------------
# resource variables, private (default): every node of a variable in one place


def test_call_once_on_the_cpu_keeps_its_variables_there(tmp_path):
    t = make_target(tmp_path, "vars", {"ADD": {}, **VAR_OPS})
    plan = partition(stateful_model(), t, "tflite")
    reasons = [p.reason for p in plan.placements]
    assert reasons[0] == "CALL_ONCE: not supported"
    for i, op in ((1, "VAR_HANDLE"), (2, "READ_VARIABLE"), (4, "ASSIGN_VARIABLE")):
        assert reasons[i] == f"{op}: shares resource variable 'v' with node 0 (CALL_ONCE), which stays on the CPU"
    assert [p.nodes for p in plan.partitions] == [(3,)]
    assert_compiles_to_the_same(plan, steps_x())


def test_call_once_with_its_init_subgraph_takes_the_variable_along(tmp_path):
    t = make_target(tmp_path, "vars", {"ADD": {}, **VAR_OPS, "CALL_ONCE": {"subgraphs": True}})
    plan = partition(stateful_model(), t, "tflite")
    assert [p.nodes for p in plan.partitions] == [(0, 1, 2, 3, 4)]
    compiled = assert_compiles_to_the_same(plan, steps_x(4))   # the state lives in the partition
    assert ops_of(compiled) == ["workbench-offload"]


@pytest.mark.parametrize("strategy", ["tflite", "tidl", "edgetpu"])
def test_a_variable_split_by_the_strategy_stays_on_the_cpu(tmp_path, strategy):
    t = make_target(tmp_path, "vars", {"ADD": {}, **VAR_OPS, "CALL_ONCE": {"subgraphs": True}})
    plan = partition(stateful_model(split=True), t, strategy)
    for i in (0, 1, 2, 6):     # CALL_ONCE, VAR_HANDLE, READ, ASSIGN
        p = plan.placements[i]
        assert p.partition is None and "shares resource variable 'v' with node" in p.reason, (i, p.reason)
    split = [p.reason for p in plan.placements if "cannot place them together" in p.reason]
    assert split and all(f"the {strategy} strategy cannot place them together, so the variable stays on the CPU"
                         in r for r in split)
    assert {i for p in plan.partitions for i in p.nodes} <= {3, 5}
    assert_compiles_to_the_same(plan, steps_x())


def test_the_tflite_reasons_of_a_split_variable(tmp_path):
    t = make_target(tmp_path, "vars", {"ADD": {}, **VAR_OPS, "CALL_ONCE": {"subgraphs": True}})
    plan = partition(stateful_model(split=True), t, "tflite")
    # greedy clustering put 0-3 in one partition and 5-6 in another: variable 'v' was split
    assert plan.placements[6].reason == (
        "ASSIGN_VARIABLE: shares resource variable 'v' with node 0 (CALL_ONCE) outside the partition; the tflite "
        "strategy cannot place them together, so the variable stays on the CPU")
    assert [p.nodes for p in plan.partitions] == [(3,), (5,)]


def test_resource_links_follow_called_subgraphs():
    g = GraphView(stateful_model(split=True))
    links = g.resource_links()
    key = ("var", "", "v")
    assert links.nodes == {key: (0, 1, 2, 6)} and links.names[key] == "v"
    assert links.keys[0] == (key,) and 3 not in links.keys
    assert GraphView(if_model()).resource_links().nodes == {}


# ------------------------------------------------------------------------------------------------
# resource variables, shared (XNNPACK): the delegate works on the interpreter's variables


def test_shared_variables_may_be_split_and_still_compile_to_the_same(tmp_path):
    t = make_target(tmp_path, "shared", {"ADD": {}, **VAR_OPS}, variables="shared")
    plan = partition(stateful_model(split=True), t, "tflite")
    assert plan.placements[0].reason == "CALL_ONCE: not supported"
    assert [p.nodes for p in plan.partitions] == [(1, 2, 3), (5, 6)]
    h = plan.graph.nodes[1].outputs[0]
    assert h in plan.partitions[0].outputs and h in plan.partitions[1].runtime_inputs   # the handle crosses
    assert_compiles_to_the_same(plan, steps_x(4))


def test_shared_var_handle_goes_only_with_a_reader_or_writer(tmp_path):
    t = make_target(tmp_path, "shared", {"ADD": {}, "VAR_HANDLE": {}}, variables="shared")
    plan = partition(stateful_model(), t, "tflite")
    assert plan.placements[1].reason == ("VAR_HANDLE: no READ_VARIABLE / ASSIGN_VARIABLE of 'v' is taken, so its "
                                         "handle stays on the CPU")
    assert [p.nodes for p in plan.partitions] == [(3,)]


def test_the_xnnpack_target_shares_variables_and_compiles_the_wake_word_models(corpus_paths):
    for name in sorted(corpus.STATEFUL):
        m = load(corpus_paths[name])
        plan = partition(m, "xnnpack", "tflite")
        assert plan.placements[0].reason == "CALL_ONCE: not supported"
        assert all(p.on_target for p in plan.placements if p.op in ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"))
        d = Interpreter(model=m).get_input_details()[0]
        rng = np.random.default_rng(11)
        steps = [[rng.integers(-128, 127, size=d["shape"], endpoint=True, dtype=np.int8)] for _ in range(4)]
        assert_compiles_to_the_same(plan, steps)


def test_a_private_copy_of_the_xnnpack_target_keeps_the_wake_word_variables_on_the_cpu(corpus_paths, tmp_path):
    from workbench.partition.target import TARGETS_DIR

    doc = json.loads((TARGETS_DIR / "xnnpack.json").read_text())
    doc["variables"] = "private"
    p = tmp_path / "xnnpack-private.json"
    p.write_text(json.dumps(doc))
    m = load(corpus_paths["microwakeword_alexa"])
    plan = partition(m, str(p), "tflite")
    var_nodes = [pl for pl in plan.placements if pl.op in ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE")]
    assert var_nodes and all("with node 0 (CALL_ONCE), which stays on the CPU" in pl.reason for pl in var_nodes)
    assert len(plan.partitions) == 4


# ------------------------------------------------------------------------------------------------
# the delegate interface follows the same rules


def test_the_simulated_delegate_runs_shared_variables_across_partitions(tmp_path):
    from workbench.delegate import SimulatedAccelerator

    t = make_target(tmp_path, "shared", {"ADD": {}, **VAR_OPS}, variables="shared")
    m = stateful_model(split=True)
    d = SimulatedAccelerator(t)
    it = d.interpreter(m)
    it.allocate_tensors()
    want = run_steps(m, steps_x(3))
    for k, (x,) in enumerate(steps_x(3)):
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        assert np.array_equal(it.get_tensor(it.get_output_details()[0]["index"]), want[k])
    assert d.invocations == 3 and len(d.stats) == 2


def test_old_delegate_plans_of_the_stateful_corpus_compile_to_the_same(corpus_paths):
    for name in sorted(corpus.STATEFUL):
        m = load(corpus_paths[name])
        plan = partition(m, "old-delegate", "tflite")
        names = {p.op for p in plan.placements if p.on_target}
        assert not names & {"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"}, name
        d = Interpreter(model=m).get_input_details()[0]
        rng = np.random.default_rng(2)
        assert_compiles_to_the_same(plan, [[rng.integers(-128, 127, size=d["shape"], endpoint=True,
                                                         dtype=np.int8)] for _ in range(3)])


def test_compile_rechecks_a_plan_made_by_hand(tmp_path):
    mul = make_target(tmp_path, "mul-only", {"MUL": {}})
    plan = partition(control_edge_model(), mul, "tidl")
    from workbench.partition.strategies import _make_partition

    bad = _make_partition(plan.graph, plan.target, 0, (1, 5))
    forged = dataclasses.replace(plan, partitions=(bad,))
    with pytest.raises(PlanError, match="⇒ node 4 READ_VARIABLE"):
        compile(forged)


def test_subgraphs_calling_each_other_are_refused_not_followed_forever(tmp_path):
    """Subgraph 1 calls 2 and 2 calls 1 (TFLite refuses such recursion at run time): the check stops."""
    b = ModelBuilder()

    def calling(other):
        def build(b):
            c = b.input("c", [1], np.bool_)
            x = b.input("x", [1, 4])
            y = b.tensor("y", [1, 4])
            b.op(B.IF, [c, x], [y], IfOptions(then_subgraph_index=other, else_subgraph_index=other))
            b.output(y)
        return build

    c = b.input("c", [1], np.bool_)
    x = b.input("x", [1, 4])
    assert add_subgraph(b, "one", calling(2)) == 1 and add_subgraph(b, "two", calling(1)) == 2
    y = b.tensor("y", [1, 4])
    b.op(B.IF, [c, x], [y], IfOptions(then_subgraph_index=1, else_subgraph_index=2))
    b.output(y)
    everything = make_target(tmp_path, "everything", {"*": {"subgraphs": True}})
    plan = partition(b.build(), everything, "tflite")
    assert plan.placements[0].reason.startswith("IF: calls subgraph 1, whose node 0 the target does not take (IF: "
                                                "calls subgraph 2, whose node 0")
    assert "which calls back where the call came from" in plan.placements[0].reason
