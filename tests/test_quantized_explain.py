"""explain(): one int8 output element worked out by hand equals what the kernel wrote."""

from __future__ import annotations

import numpy as np
import pytest

import test_quantized_ops as ops
from workbench.interpreter import Interpreter
from workbench.interpreter.explain import explain
from workbench.schema import AddOptions, BuiltinOperator as B, ModelBuilder


def add_case(name):
    rng = ops.rng_for(name)
    b = ModelBuilder()
    x = b.input("a", (2, 3, 5), np.int8, quantization=ops.q(0.05, 3))
    y = b.input("b", (5,), np.int8, quantization=ops.q(0.02, -7))
    o = b.tensor("y", (2, 3, 5), np.int8, quantization=ops.q(0.06, -1))
    b.op(B.ADD, [x, y], [o], AddOptions())
    b.output(o)
    return b, {"a": ops.qx(rng, (2, 3, 5)), "b": ops.qx(rng, (5,))}


ops.CASES.setdefault("add_broadcast_for_explain", add_case)


@pytest.mark.parametrize("case", ["conv_3x3_same_relu", "conv_same_stride2_relu6", "depthwise_3x3_relu6",
                                  "depthwise_multiplier_3", "fc_relu", "fc_per_channel", "add_broadcast_for_explain"])
def test_explain_equals_the_kernel_everywhere(case):
    model, inputs = ops.build_case(case)
    it = Interpreter(model=model, keep_intermediates=True)
    it.allocate_tensors()
    by_name = {d["name"]: d for d in it.get_input_details()}
    for name, value in inputs.items():
        it.set_tensor(by_name[name]["index"], value)
    it.invoke()
    out = it.get_tensor(it.get_output_details()[0]["index"])
    for k in range(0, out.size, max(1, out.size // 40)):
        e = explain(it, 0, k)
        assert e.agrees, repr(e)
    e = explain(it, 0, out.size - 1)
    text = repr(e)
    assert "clamp" in text and "by hand" in text and "<table>" in e._repr_html_()
    # the int8 result is within one output step of the float computation (unless clamped)
    o_s = it.get_output_details()[0]["quantization"][0]
    if e.kernel not in (-128, 127) and "RELU" not in case.upper():
        assert abs(e.dequantized - e.float_result) <= o_s * 1.01


def test_explain_on_a_mobilenet_node():
    from test_quantized_models import SHARED_MODELS
    path = SHARED_MODELS / "mobilenet_v1_a025_128_int8.tflite"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    it = Interpreter(model_path=path, keep_intermediates=True)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], np.random.default_rng(0).integers(-128, 128, d["shape"]).astype(np.int8))
    it.invoke()
    for node in (0, 1, 2, 28):
        for k in (0, 7, 999):
            assert explain(it, node, k).agrees
