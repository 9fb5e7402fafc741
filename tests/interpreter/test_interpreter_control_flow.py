"""Multi-subgraph execution: WHILE, IF, CALL_ONCE and resource variables, against ai-edge-litert."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from litert_session import run_calls, run_ours
from workbench import dump
from workbench.errors import TensorError
from workbench.interpreter import Interpreter
from workbench.schema import (
    AddOptions, BuiltinOperator as B, ConcatenationOptions, IfOptions, ModelBuilder, MulOptions, WhileOptions,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def add_subgraph(b: ModelBuilder, name: str, build) -> int:
    """Build another subgraph with the same builder (shared buffers and operator codes)."""
    saved = (b.tensors, b.operators, b.inputs, b.outputs)
    b.tensors, b.operators, b.inputs, b.outputs = [], [], [], []
    build(b)
    b.subgraphs.append(b.subgraph(name))
    b.tensors, b.operators, b.inputs, b.outputs = saved
    return len(b.subgraphs)          # subgraph 0 is the main one


def scalar(b: ModelBuilder, name: str, value, dtype) -> int:
    """A 0-d constant (ModelBuilder.constant makes 0-d arrays 1-d, via np.ascontiguousarray)."""
    return b.tensor(name, (), dtype, buffer=b.add_buffer(np.asarray(value, dtype).tobytes()))


def assert_same(ours, theirs, rtol=1e-5, atol=1e-6):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if b is None:
            assert a is None
            continue
        if isinstance(b, dict):
            assert set(a) == set(b)
            a, b = [a[k] for k in sorted(b)], [b[k] for k in sorted(b)]
        for x, y in zip(a, b):
            assert np.shape(x) == np.shape(y) and np.asarray(x).dtype == np.asarray(y).dtype
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------------------------
# models


def while_growing_model():
    """while i < n: i += 1; x = concat(x, 0.5 * x) — the loop variable x doubles its rows."""
    b = ModelBuilder()

    def cond(b):
        i = b.input("c_i", (), np.int32)
        n = b.input("c_n", (), np.int32)
        x = b.input("c_x", (1, 3), shape_signature=(-1, 3))
        lt = b.tensor("c_less", (), np.bool_)
        b.op(B.LESS, [i, n], [lt])
        b.output(lt)
        del x

    def body(b):
        i = b.input("b_i", (), np.int32)
        n = b.input("b_n", (), np.int32)
        x = b.input("b_x", (1, 3), shape_signature=(-1, 3))
        one = scalar(b, "b_one", 1, np.int32)
        half = scalar(b, "b_half", 0.5, np.float32)
        i1 = b.tensor("b_i1", (), np.int32)
        hx = b.tensor("b_hx", (1, 3), shape_signature=(-1, 3))
        y = b.tensor("b_y", (2, 3), shape_signature=(-1, 3))
        b.op(B.ADD, [i, one], [i1], AddOptions())
        b.op(B.MUL, [x, half], [hx], MulOptions())
        b.op(B.CONCATENATION, [x, hx], [y], ConcatenationOptions(axis=0))
        b.output(i1, n, y)

    c_idx = add_subgraph(b, "cond", cond)
    b_idx = add_subgraph(b, "body", body)
    n = b.input("n", (), np.int32)
    x = b.input("x", (1, 3))
    i0 = scalar(b, "i0", 0, np.int32)
    outs = [b.tensor("i_out", (), np.int32), b.tensor("n_out", (), np.int32),
            b.tensor("y", (1, 3), shape_signature=(-1, 3))]
    b.op(B.WHILE, [i0, n, x], outs, WhileOptions(cond_subgraph_index=c_idx, body_subgraph_index=b_idx))
    b.output(outs[2], outs[0])
    return b.build()


def while_static_model():
    """while i < n: i += 1; acc = acc * 0.5 + x  (shapes never change: outputs planned statically)."""
    b = ModelBuilder()

    def cond(b):
        i = b.input("c_i", (), np.int32)
        n = b.input("c_n", (), np.int32)
        b.input("c_x", (2, 2))
        b.input("c_acc", (2, 2))
        lt = b.tensor("c_less", (), np.bool_)
        b.op(B.LESS, [i, n], [lt])
        b.output(lt)

    def body(b):
        i = b.input("b_i", (), np.int32)
        n = b.input("b_n", (), np.int32)
        x = b.input("b_x", (2, 2))
        acc = b.input("b_acc", (2, 2))
        one = scalar(b, "b_one", 1, np.int32)
        half = scalar(b, "b_half", 0.5, np.float32)
        i1 = b.tensor("b_i1", (), np.int32)
        h = b.tensor("b_h", (2, 2))
        acc1 = b.tensor("b_acc1", (2, 2))
        b.op(B.ADD, [i, one], [i1], AddOptions())
        b.op(B.MUL, [acc, half], [h], MulOptions())
        b.op(B.ADD, [h, x], [acc1], AddOptions())
        b.output(i1, n, x, acc1)

    c_idx = add_subgraph(b, "cond", cond)
    b_idx = add_subgraph(b, "body", body)
    n = b.input("n", (), np.int32)
    x = b.input("x", (2, 2))
    i0 = scalar(b, "i0", 0, np.int32)
    acc0 = b.constant("acc0", np.zeros((2, 2), np.float32))
    outs = [b.tensor("i_out", (), np.int32), b.tensor("n_out", (), np.int32), b.tensor("x_out", (2, 2)),
            b.tensor("acc", (2, 2))]
    b.op(B.WHILE, [i0, n, x, acc0], outs, WhileOptions(cond_subgraph_index=c_idx, body_subgraph_index=b_idx))
    b.output(outs[3])
    return b.build()


def if_model(same_shapes: bool = True):
    """y = c ? x * 3 : x + 1   (or, with same_shapes=False, the else branch returns concat(x, x))."""
    b = ModelBuilder()

    def then(b):
        x = b.input("t_x", (2, 3))
        k = scalar(b, "t_three", 3.0, np.float32)
        y = b.tensor("t_y", (2, 3))
        b.op(B.MUL, [x, k], [y], MulOptions())
        b.output(y)

    def other(b):
        x = b.input("e_x", (2, 3))
        if same_shapes:
            k = scalar(b, "e_one", 1.0, np.float32)
            y = b.tensor("e_y", (2, 3))
            b.op(B.ADD, [x, k], [y], AddOptions())
        else:
            y = b.tensor("e_y", (4, 3), shape_signature=(-1, 3))
            b.op(B.CONCATENATION, [x, x], [y], ConcatenationOptions(axis=0))
        b.output(y)

    t_idx = add_subgraph(b, "then", then)
    e_idx = add_subgraph(b, "else", other)
    c = b.input("c", (), np.bool_)
    x = b.input("x", (2, 3))
    y = b.tensor("y", (2, 3), shape_signature=(-1, 3))
    b.op(B.IF, [c, x], [y], IfOptions(then_subgraph_index=t_idx, else_subgraph_index=e_idx))
    z = b.tensor("z", (2, 3), shape_signature=(-1, 3))
    b.op(B.ADD, [y, y], [z], AddOptions())        # reads the IF output: prepared in invoke when dynamic
    b.output(z)
    return b.build()


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
