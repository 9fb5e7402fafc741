"""Dynamic shapes: resize_tensor_input re-plans, and outputs whose shape depends on input values."""

from __future__ import annotations

import numpy as np

from helpers.control_flow_models import assert_same
from helpers.dynamic_models import range_fill_model, reshape_runtime_model
from helpers.litert_session import run_calls, run_ours
from workbench import dump
from workbench.interpreter import Interpreter
from workbench.schema import (
    AddOptions,
    Conv2DOptions,
    ModelBuilder,
    Padding,
)
from workbench.schema import (
    BuiltinOperator as B,
)


def conv_model():
    rng = np.random.default_rng(1)
    b = ModelBuilder()
    x = b.input("x", (1, 8, 8, 3), shape_signature=(-1, -1, -1, 3))
    w = b.constant("w", rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32))
    bias = b.constant("bias", rng.uniform(-1, 1, (4,)).astype(np.float32))
    y = b.tensor("y", (1, 4, 4, 4), shape_signature=(-1, -1, -1, 4))
    b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(padding=Padding.SAME, stride_w=2, stride_h=2,
                                                     fused_activation_function=1, dilation_w_factor=1,
                                                     dilation_h_factor=1))
    z = b.tensor("z", (1, 4, 4, 4), shape_signature=(-1, -1, -1, 4))
    b.op(B.ADD, [y, y], [z], AddOptions())
    b.output(z)
    return b.build()


def test_resize_conv_input_replans_and_matches_litert():
    data = dump(conv_model())
    rng = np.random.default_rng(5)
    shapes = [(1, 8, 8, 3), (2, 5, 7, 3), (1, 3, 3, 3), (2, 5, 7, 3)]
    calls = [("invoke", [rng.uniform(-1, 1, s).astype(np.float32)]) for s in shapes]
    theirs = run_calls(data, calls)
    it = Interpreter(model_content=data)
    ours = run_ours(it, calls)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-5)
    assert ours[1][0].shape == (2, 3, 4, 4) and ours[2][0].shape == (1, 2, 2, 4)
    assert it.get_output_details()[0]["shape"].tolist() == [2, 3, 4, 4]
    assert it.get_output_details()[0]["shape_signature"].tolist() == [-1, -1, -1, 4]
    plan = it.arena_plan
    assert any(a.nbytes == 2 * 5 * 7 * 3 * 4 for a in plan.allocations)      # the re-planned input
    assert not it._sg(0).deferred_nodes                                      # resizing is not dynamic


def test_reshape_with_a_run_time_shape_matches_litert():
    data = dump(reshape_runtime_model())
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    shapes = [(3, 4), (3, 4), (4, 3), (12, 1), (-1, 2)]
    calls = [("invoke", [x, np.array(s, np.int32)]) for s in shapes]
    theirs = run_calls(data, calls)
    it = Interpreter(model_content=data)
    ours = run_ours(it, calls)
    assert_same(ours, theirs)
    assert [o[0].shape for o in ours] == [(3, 4), (3, 4), (4, 3), (12, 1), (6, 2)]
    sg = it._sg(0)
    assert sg.deferred_nodes == [0, 1]            # RESHAPE (needs the value) and MUL (reads it)
    reshape_step = sg.plan[0][0]
    assert reshape_step.prepares == 4             # prepared again only when the shape value changed


def test_shape_fill_range_strided_slice_chain_matches_litert():
    data = dump(range_fill_model())
    x = np.linspace(-1, 1, 10, dtype=np.float32)
    calls = [("invoke", [np.array(n, np.int32), x]) for n in (3, 7, 1, 3)]
    theirs = run_calls(data, calls)
    it = Interpreter(model_content=data)
    ours = run_ours(it, calls)
    assert_same(ours, theirs)
    np.testing.assert_array_equal(ours[1][0], np.arange(7))
    np.testing.assert_allclose(ours[1][1], 2.5 + x[:7])
    assert it.get_output_details()[1]["shape"].tolist() == [3]
    # n = 0: empty outputs (litert's get_tensor refuses an empty int32 RANGE output, so no comparison)
    empty = run_ours(it, [("invoke", [np.array(0, np.int32), x])])[0]
    assert empty[0].shape == (0,) and empty[1].shape == (0,)


def test_steps_report_the_opdata_prepared_during_invoke():
    it = Interpreter(model=reshape_runtime_model())
    it.allocate_tensors()
    it.set_tensor(0, np.ones((2, 6), np.float32))
    it.set_tensor(1, np.array([4, 3], np.int32))
    events = list(it.steps())
    assert events[0].op == "RESHAPE" and events[0].data.output_shape == (4, 3)
    assert events[1].outputs[0].shape == (4, 3)
    names = [k for _, k, _, _ in it.prepared()]
    assert names[0] == "reshape (prepared in invoke)" or names[0].startswith("reshape")


def test_dynamic_tensors_take_no_bytes_in_the_plan():
    it = Interpreter(model=reshape_runtime_model())
    it.allocate_tensors()
    planned = {a.tensor for a in it.arena_plan.allocations}
    assert planned == {0, 1}                      # the inputs; r and y are sized while invoking
    assert it._sg(0).context.dynamic == {2, 4}
