"""The Interpreter's public surface: litert's API, the resolver and lifecycle, steps, profile."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from helpers.builders import add_fc_model
from workbench import dump
from workbench.errors import RegistrationError, TensorError, UnsupportedOpError, WorkbenchError
from workbench.interpreter import BuiltinOpResolver, Interpreter, Kernel, OpData, OpResolver, kernel, opdata
from workbench.interpreter import tracing as tracing_module
from workbench.interpreter.kernels.softmax import Softmax
from workbench.schema import (
    AddOptions,
    DepthwiseConv2DOptions,
    ModelBuilder,
    SignatureDef,
    TensorMap,
)
from workbench.schema import (
    BuiltinOperator as B,
)

DETAIL_KEYS = {"name", "index", "shape", "shape_signature", "dtype", "quantization", "quantization_parameters",
               "sparsity_parameters"}


def add_fc_expected(x):
    model = add_fc_model()
    w = np.frombuffer(bytes(model.buffers[2].data), "<f4").reshape(3, 4)
    c = np.array([0.5, -0.25, 1.0, 2.0], np.float32)
    return (x + c) @ w.T + np.array([0.1, 0.2, 0.3], np.float32)


def relu_chain(n=4, shape=(2, 3)):
    b = ModelBuilder()
    t = b.input("x", shape)
    for i in range(n):
        y = b.tensor(f"r{i}", shape)
        b.op(B.RELU if i % 2 == 0 else B.TANH, [t], [y])
        t = y
    b.output(t)
    return b.build()


def test_invoke_computes_add_then_fully_connected():
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    x = np.array([[1.0, 2.0, -3.0, 0.5]], np.float32)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), add_fc_expected(x), rtol=1e-6)


def test_model_path_and_model_content_load_the_same(tmp_path):
    data = dump(add_fc_model())
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    for it in (Interpreter(model_path=str(path)), Interpreter(model_content=data)):
        it.allocate_tensors()
        it.set_tensor(0, np.ones((1, 4), np.float32))
        it.invoke()
        np.testing.assert_allclose(it.get_tensor(5), add_fc_expected(np.ones((1, 4), np.float32)), rtol=1e-6)
    with pytest.raises(ValueError):
        Interpreter()


def test_details_match_litert(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(dump(add_fc_model()))
    code = ("import json, sys, numpy as np\n"
            "from ai_edge_litert.interpreter import Interpreter\n"
            "it = Interpreter(model_path=sys.argv[1])\n"
            "def j(d): return {k: (v.tolist() if isinstance(v, np.ndarray) else (np.dtype(v).name if k == 'dtype' else "
            "({kk: (vv.tolist() if isinstance(vv, np.ndarray) else vv) for kk, vv in v.items()} if isinstance(v, dict) "
            "else v))) for k, v in d.items()}\n"
            "print(json.dumps({'in': [j(d) for d in it.get_input_details()],"
            " 'out': [j(d) for d in it.get_output_details()]}))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    it = Interpreter(model_path=str(path))

    def j(d):
        out = {}
        for k, v in d.items():
            if isinstance(v, np.ndarray):
                v = v.tolist()
            elif k == "dtype":
                v = np.dtype(v).name
            elif isinstance(v, dict):
                v = {kk: (vv.tolist() if isinstance(vv, np.ndarray) else vv) for kk, vv in v.items()}
            elif isinstance(v, tuple):
                v = list(v)
            out[k] = v
        return out

    ours = {"in": [j(d) for d in it.get_input_details()], "out": [j(d) for d in it.get_output_details()]}
    assert set(ours["in"][0]) == DETAIL_KEYS
    assert ours == theirs


def test_set_tensor_wrong_dtype_says_expected_and_got():
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    with pytest.raises(ValueError) as info:
        it.set_tensor(0, np.zeros((1, 4), np.float64))
    assert isinstance(info.value, TensorError) and isinstance(info.value, WorkbenchError)
    assert "expected float32 [1, 4], got float64 [1, 4]" in str(info.value)


def test_set_tensor_wrong_shape_points_to_resize():
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    with pytest.raises(TensorError, match=r"expected float32 \[1, 4\], got float32 \[2, 4\].*resize_tensor_input"):
        it.set_tensor(0, np.zeros((2, 4), np.float32))
    with pytest.raises(TensorError, match="constant"):
        it.set_tensor(1, np.zeros((1, 4), np.float32))
    with pytest.raises(TensorError, match="does not exist"):
        it.set_tensor(99, np.zeros((1, 4), np.float32))


def test_resize_tensor_input_then_allocate_changes_every_shape():
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    it.resize_tensor_input(0, [3, 4], strict=True)          # dim 0 is -1 in shape_signature
    with pytest.raises(WorkbenchError, match="allocate_tensors"):
        it.invoke()
    it.allocate_tensors()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    it.set_tensor(0, x)
    it.invoke()
    out = it.get_tensor(5)
    assert out.shape == (3, 3)
    np.testing.assert_allclose(out, add_fc_expected(x), rtol=1e-5)
    assert it.get_output_details()[0]["shape"].tolist() == [3, 3]
    assert it.get_input_details()[0]["shape_signature"].tolist() == [-1, 4]
    with pytest.raises(TensorError, match="only its -1 dimensions"):
        it.resize_tensor_input(0, [3, 5], strict=True)
    with pytest.raises(TensorError, match="not an input"):
        it.resize_tensor_input(5, [3, 3])


def test_tensor_returns_a_live_view():
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    out = it.tensor(5)
    it.set_tensor(0, np.ones((1, 4), np.float32))
    it.invoke()
    first = out().copy()
    it.set_tensor(0, np.zeros((1, 4), np.float32))
    it.invoke()
    assert not np.array_equal(first, out())
    np.testing.assert_allclose(out(), add_fc_expected(np.zeros((1, 4), np.float32)), rtol=1e-6)


def signature_model():
    m = add_fc_model()
    sig = SignatureDef(inputs=(TensorMap(name="x", tensor_index=0),), outputs=(TensorMap(name="y", tensor_index=5),),
                       signature_key="serving_default", subgraph_index=0)
    return dataclasses.replace(m, signature_defs=(sig,))


def test_signature_list_and_runner():
    it = Interpreter(model=signature_model())
    assert it.get_signature_list() == {"serving_default": {"inputs": ["x"], "outputs": ["y"]}}
    runner = it.get_signature_runner()
    assert set(runner.get_input_details()["x"]) == DETAIL_KEYS
    x = np.array([[1, 2, 3, 4], [0, 0, 0, 0]], np.float32)     # batch 2: the runner resizes
    out = runner(x=x)
    assert set(out) == {"y"}
    np.testing.assert_allclose(out["y"], add_fc_expected(x), rtol=1e-5)
    with pytest.raises(TensorError):
        runner(z=x)
    with pytest.raises(ValueError, match="no signature"):
        it.get_signature_runner("other")
    with pytest.raises(ValueError, match="exactly one"):
        Interpreter(model=add_fc_model()).get_signature_runner()


def test_reset_all_variables_zeroes_variable_tensors():
    b = ModelBuilder()
    x = b.input("x", (2,))
    state = b.tensor("state", (2,), is_variable=True)
    y = b.tensor("y", (2,))
    b.op(B.ADD, [x, state], [y], AddOptions())
    b.output(y)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    it.set_tensor(state, np.array([5, 6], np.float32))
    it.set_tensor(x, np.array([1, 1], np.float32))
    it.invoke()
    assert it.get_tensor(y).tolist() == [6, 7]
    it.reset_all_variables()
    it.invoke()
    assert it.get_tensor(y).tolist() == [1, 1]


def test_steps_yield_one_event_per_node_with_its_opdata():
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    x = np.array([[1.0, 2.0, -3.0, 0.5]], np.float32)
    it.set_tensor(0, x)
    events = list(it.steps())
    assert [(e.node, e.op, e.version) for e in events] == [(0, "ADD", 1), (1, "FULLY_CONNECTED", 1)]
    assert events[1].kernel in ("fully_connected/dot(avx512)", "fully_connected/blas")     # library or not
    assert isinstance(events[1].data, OpData) and events[1].data.units == 3
    assert "FullyConnectedData(" in repr(events[1].data)
    np.testing.assert_allclose(events[0].outputs[0], x + np.array([0.5, -0.25, 1.0, 2.0], np.float32))
    np.testing.assert_array_equal(events[1].inputs[0], events[0].outputs[0])
    np.testing.assert_allclose(events[1].outputs[0], add_fc_expected(x), rtol=1e-6)
    assert all(e.elapsed_ms >= 0 for e in events)
    assert "ADD v1" in repr(events[0])


def test_invoke_builds_no_events(monkeypatch):
    """Tracing costs nothing when off: invoke never touches the event machinery."""
    def boom(*a, **k):
        raise AssertionError("invoke made a StepEvent")

    monkeypatch.setattr(tracing_module, "StepEvent", boom)
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    it.invoke()
    with pytest.raises(AssertionError):
        list(it.steps())


def test_intermediates_need_keep_intermediates():
    model = relu_chain(6)
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    it = Interpreter(model=model)
    it.allocate_tensors()
    it.set_tensor(0, x)
    it.invoke()
    assert it.arena_plan.shared, "a chain of 6 ops should reuse memory"
    shared = sorted(it.arena_plan.shared - {0, 6})
    with pytest.raises(TensorError, match="keep_intermediates=True"):
        it.get_tensor(shared[0])
    kept = Interpreter(model=model, keep_intermediates=True)
    kept.allocate_tensors()
    kept.set_tensor(0, x)
    kept.invoke()
    assert not kept.arena_plan.shared
    expected = x
    for i in range(1, 7):
        expected = np.maximum(expected, 0) if i % 2 == 1 else np.tanh(expected)
        np.testing.assert_allclose(kept.get_tensor(i), expected, rtol=1e-6)
    np.testing.assert_allclose(it.get_tensor(6), expected, rtol=1e-6)


def test_profile_tables():
    it = Interpreter(model=relu_chain(4))
    it.allocate_tensors()
    prof = it.profile(runs=3)
    assert len(prof.nodes) == 4 and prof.runs == 3
    assert {r.op for r in prof.by_op} == {"RELU", "TANH"}
    assert sum(r.count for r in prof.by_op) == 4
    assert prof.by_op[-1].cdf_percent == pytest.approx(100.0)
    assert prof.nodes[-1].cdf_percent == pytest.approx(100.0)
    text = repr(prof)
    assert "Summary by node type" in text and "cdf%" in text
    assert "<table>" in prof._repr_html_()


def test_invoke_node_runs_one_node_on_given_inputs():
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    y, = it.invoke_node(1, {2: np.ones((1, 4), np.float32)})
    w = np.frombuffer(bytes(add_fc_model().buffers[2].data), "<f4").reshape(3, 4)
    np.testing.assert_allclose(y, np.ones((1, 4)) @ w.T + [0.1, 0.2, 0.3], rtol=1e-6)


# ------------------------------------------------------------------------------------------------
# resolver and lifecycle


def depthwise_model(version):
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2))
    w = b.constant("w", np.ones((1, 3, 3, 2), np.float32))
    y = b.tensor("y", (1, 4, 4, 2))
    b.op(B.DEPTHWISE_CONV_2D, [x, w, -1], [y], DepthwiseConv2DOptions(stride_w=1, stride_h=1), version=version)
    b.output(y)
    return b.build()


def test_unregistered_version_fails_at_allocate_naming_the_range():
    it = Interpreter(model=depthwise_model(4))      # v4 is per-tensor hybrid depthwise: litert refuses it too
    with pytest.raises(UnsupportedOpError) as info:
        it.allocate_tensors()
    assert "DEPTHWISE_CONV_2D version 4 is not registered (this resolver has versions 1-3, 6)" in str(info.value)
    with pytest.raises(WorkbenchError):
        it.invoke()                                  # never runs silently


def test_an_empty_resolver_knows_no_op():
    it = Interpreter(model=depthwise_model(1), op_resolver=OpResolver())
    with pytest.raises(UnsupportedOpError, match="DEPTHWISE_CONV_2D is not registered"):
        it.allocate_tensors()


def test_resolver_refuses_duplicates():
    r = OpResolver()
    r.add_builtin(B.SOFTMAX, Softmax, 1, 2)
    with pytest.raises(RegistrationError, match="SOFTMAX version 2 is already registered"):
        r.add_builtin(B.SOFTMAX, Softmax, 2, 3)
    r.add_custom("Mine", Softmax)
    with pytest.raises(RegistrationError):
        r.add_custom("Mine", Softmax)
    assert r.versions(B.SOFTMAX) == (1, 2)
    with pytest.raises(RegistrationError, match="already registered"):
        @kernel(B.SOFTMAX, versions=range(1, 4))
        class AnotherSoftmax(Kernel):
            pass


def test_builtin_resolver_registers_what_the_kernels_implement():
    ops = BuiltinOpResolver().ops()
    assert ops["CONV_2D"] == "1-3, 5-6, 8"         # v2/v5 hybrid, v3 int8, v6 grouped, v8 16x8; no v4 (16x8
                                                   # without int64 bias rules), no v7 (int4 weights)
    assert ops["DEPTHWISE_CONV_2D"] == "1-3, 6"    # v3 int8, v6 per-channel hybrid (v4 is refused by litert)
    assert ops["FULLY_CONNECTED"] == "1, 3-9, 11-12"   # v3 hybrid, v4 int8, v7 int16 weights, v8 sparse,
                                                       # v11 16x8, v12 hybrid per-channel; no v2 (shuffled)
    assert ops["Convolution2DTransposeBias"] == "1"


def test_a_custom_kernel_in_a_few_lines():
    @opdata
    class ScaleData(OpData):
        factor: float

    class Scale(Kernel):                       # y = factor * x, factor from the custom options' first byte
        name = "scale"

        def prepare(self, context, node):
            x = node.inputs[0]
            context.set_output(node.outputs[0], context.shape(x), context.dtype(x))
            return ScaleData(float(node.custom.raw[0]))

        def invoke(self, context, node, data):
            t = context.tensors
            np.multiply(t[node.inputs[0]], data.factor, out=t[node.outputs[0]])

    b = ModelBuilder()
    x = b.input("x", (3,))
    y = b.tensor("y", (3,))
    b.op(B.CUSTOM, [x], [y], custom_code="Scale", custom_options=b"\x03")
    b.output(y)
    model = b.build()
    with pytest.raises(UnsupportedOpError, match="custom op 'Scale' is not registered"):
        Interpreter(model=model).allocate_tensors()
    resolver = BuiltinOpResolver()
    resolver.add_custom("Scale", Scale)
    it = Interpreter(model=model, op_resolver=resolver)
    it.allocate_tensors()
    it.set_tensor(x, np.array([1, 2, 3], np.float32))
    it.invoke()
    assert it.get_tensor(y).tolist() == [3, 6, 9]
    event, = it.steps()
    assert event.kernel == "scale" and event.data.factor == 3.0


def test_constant_subgraphs_are_folded_at_allocate():
    b = ModelBuilder()
    x = b.input("x", (2, 2))
    h = b.constant("h", np.array([[1, 2], [3, 4]], np.float16))
    d = b.tensor("d", (2, 2))
    y = b.tensor("y", (2, 2))
    b.op(B.DEQUANTIZE, [h], [d], version=3)
    b.op(B.ADD, [x, d], [y], AddOptions())
    b.output(y)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    assert it.folded_nodes == [0]
    assert [e.op for e in it.steps()] == ["ADD"]
    assert [(n.op_name, folded) for n, _, _, folded in it.prepared()] == [("DEQUANTIZE", True), ("ADD", False)]


def test_workbench_debug_warns_about_non_finite_outputs(monkeypatch):
    from workbench import config

    b = ModelBuilder()
    x = b.input("x", (2,))
    y = b.tensor("y", (2,))
    b.op(B.DIV, [x, x], [y])
    b.output(y)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    it.set_tensor(x, np.array([0, 1], np.float32))
    monkeypatch.setattr(config, "DEBUG", 1)
    with (pytest.warns(RuntimeWarning, match="node 0 \\(DIV\\): output 'y' has 1 non-finite"),
          np.errstate(invalid="ignore")):
        it.invoke()


def test_a_kernel_must_declare_its_outputs():
    class Lazy(Kernel):
        def prepare(self, context, node):
            return None

        def invoke(self, context, node, data):
            pass

    b = ModelBuilder()
    x = b.input("x", (3,))
    y = b.tensor("y", (3,))
    b.op(B.CUSTOM, [x], [y], custom_code="Lazy")
    b.output(y)
    resolver = OpResolver()
    resolver.add_custom("Lazy", Lazy)
    with pytest.raises(WorkbenchError, match="did not set the shape of output 'y'"):
        Interpreter(model=b.build(), op_resolver=resolver).allocate_tensors()
