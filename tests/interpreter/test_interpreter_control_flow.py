"""Multi-subgraph execution: WHILE, IF, CALL_ONCE and resource variables, against ai-edge-litert."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers.control_flow_models import assert_same, if_model, while_growing_model, while_static_model
from helpers.litert_session import run_calls, run_ours
from workbench import dump
from workbench.errors import TensorError
from workbench.interpreter import Interpreter
from workbench.schema import (
    AddOptions,
    ModelBuilder,
)
from workbench.schema import (
    BuiltinOperator as B,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


# ----------------------------------------------------------------------------------------------
# models


X23 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5


# ----------------------------------------------------------------------------------------------
# tests


def test_while_loop_sample_matches_litert_for_several_trip_counts():
    data = (SAMPLES / "while_loop.tflite").read_bytes()
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (1, 4)).astype(np.float32)
    it = Interpreter(model_content=data)
    order = [d["name"] for d in it.get_input_details()]
    assert order == ["serving_default_x:0", "serving_default_n:0"]
    calls = [("invoke", [x, np.array(n, np.int32)]) for n in (0, 1, 3, 7)]
    calls.append(("signature", "serving_default", {"x": x, "n": np.array(5, np.int32)}))
    theirs = run_calls(data, calls)
    ours = run_ours(it, calls)
    assert_same(ours, theirs)
    # the loop really ran: different trip counts give different outputs
    assert not np.allclose(ours[1][0], ours[3][0])


def test_while_whose_loop_variable_grows_matches_litert():
    model = while_growing_model()
    data = dump(model)
    x = np.array([[1.0, -2.0, 3.0]], np.float32)
    calls = [("invoke", [np.array(n, np.int32), x]) for n in (0, 1, 3, 2)]
    theirs = run_calls(data, calls)
    ours = run_ours(Interpreter(model_content=data), calls)
    assert_same(ours, theirs)
    assert ours[2][0].shape == (8, 3) and ours[3][0].shape == (4, 3)
    assert ours[2][1].shape == () and int(ours[2][1]) == 3


def test_while_with_static_shapes_plans_its_outputs_statically():
    data = dump(while_static_model())
    x = np.array([[1.0, 2.0], [-1.0, 0.5]], np.float32)
    calls = [("invoke", [np.array(n, np.int32), x]) for n in (0, 1, 4)]
    theirs = run_calls(data, calls)
    it = Interpreter(model_content=data)
    ours = run_ours(it, calls)
    assert_same(ours, theirs)
    sg = it._sg(0)
    assert not sg.deferred_nodes and not sg.context.dynamic      # body keeps shapes: no dynamic tensors
    np.testing.assert_allclose(ours[2][0], x * (1 + 0.5 + 0.25 + 0.125), rtol=1e-6)


@pytest.mark.parametrize("same_shapes", [True, False])
def test_if_runs_the_branch_the_condition_picks(same_shapes):
    data = dump(if_model(same_shapes))
    calls = [("invoke", [np.array(c), X23]) for c in (True, False, True)]
    theirs = run_calls(data, calls)
    it = Interpreter(model_content=data)
    ours = run_ours(it, calls)
    assert_same(ours, theirs)
    np.testing.assert_allclose(ours[0][0], 2 * (3 * X23))
    if same_shapes:
        np.testing.assert_allclose(ours[1][0], 2 * (X23 + 1))
        assert not it._sg(0).deferred_nodes
    else:
        np.testing.assert_allclose(ours[1][0], 2 * np.concatenate([X23, X23]))
        assert it._sg(0).deferred_nodes == [1]       # the ADD reading the dynamic IF output


def test_resource_variables_persist_across_invokes_like_litert():
    data = (SAMPLES / "resource_variable.tflite").read_bytes()
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    calls = [("invoke", [x])] * 3 + [("reset",)] + [("invoke", [x])] * 2
    calls.append(("signature", "serving_default", {"x": x}))
    theirs = run_calls(data, calls)
    it = Interpreter(model_content=data)
    ours = run_ours(it, calls)
    assert_same(ours, theirs)
    # the variable accumulates: v0 + k*x, output 2 * value; reset_all_variables() leaves resource
    # variables alone (litert's ResetVariableTensors only touches is_variable tensors)
    firsts = [o[0] for o in ours if isinstance(o, list)]
    np.testing.assert_allclose(firsts[1] - firsts[0], 2 * x)
    np.testing.assert_allclose(firsts[3] - firsts[2], 2 * x)
    assert len(it.resources) == 1 and it.resource_ids == {("", "Variable"): 0}


def test_reset_resource_variables_reruns_the_initializer():
    data = (SAMPLES / "resource_variable.tflite").read_bytes()
    x = np.array([[0.5, 1.0, -1.0]], np.float32)
    fresh = Interpreter(model_content=data)
    first = run_ours(fresh, [("invoke", [x])])[0][0]
    it = Interpreter(model_content=data)
    run_ours(it, [("invoke", [x])] * 3)
    assert not np.allclose(it.get_tensor(it.get_output_details()[0]["index"]), first)
    it.reset_all_variables(resource_variables=True)
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), first)


def test_call_once_runs_its_subgraph_only_on_the_first_invoke():
    data = (SAMPLES / "resource_variable.tflite").read_bytes()
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    it.set_tensor(0, np.zeros((1, 3), np.float32))
    first = [(e.subgraph, e.op, e.callers) for e in it.steps()]
    second = [(e.subgraph, e.op, e.callers) for e in it.steps()]
    assert first[:3] == [(1, "VAR_HANDLE", ((0, 0),)), (1, "ASSIGN_VARIABLE", ((0, 0),)), (0, "CALL_ONCE", ())]
    assert [s for s, _, _ in second] == [0] * 7 and second[0][1] == "CALL_ONCE"
    assert it.initialized == {1}


def test_read_before_assign_is_an_error():
    b = ModelBuilder()
    from workbench.schema import VarHandleOptions
    h = b.tensor("h", (), np.int32)
    b.tensors[h] = b.tensors[h].__class__(shape=(), type=13, buffer=0, name="h")   # RESOURCE
    v = b.tensor("v", (1, 2))
    x = b.input("x", (1, 2))
    y = b.tensor("y", (1, 2))
    b.op(B.VAR_HANDLE, [], [h], VarHandleOptions(container="", shared_name="never"))
    b.op(B.READ_VARIABLE, [h], [v])
    b.op(B.ADD, [v, x], [y], AddOptions())
    b.output(y)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    with pytest.raises(TensorError, match="read before anything assigned"):
        it.invoke()


def test_steps_of_a_while_say_which_subgraph_each_node_is_in():
    data = dump(while_static_model())
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    it.set_tensor(0, np.array(2, np.int32))
    it.set_tensor(1, np.ones((2, 2), np.float32))
    events = list(it.steps())
    kinds = [(e.subgraph, e.op) for e in events]
    cond, body = [(1, "LESS")], [(2, "ADD"), (2, "MUL"), (2, "ADD")]
    assert kinds == cond + body + cond + body + cond + [(0, "WHILE")]
    assert all(e.callers == ((0, 0),) for e in events[:-1]) and events[-1].callers == ()
    assert "via 0:0" in repr(events[0])
    np.testing.assert_allclose(events[-1].outputs[3], np.full((2, 2), 1.5, np.float32))
    # invoke() gives the same result without events
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), np.full((2, 2), 1.5))
