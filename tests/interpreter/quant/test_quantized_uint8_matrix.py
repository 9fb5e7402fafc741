"""uint8 (asymmetric, per-tensor) CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and TRANSPOSE_CONV, bit-exact.

Tiny one-op models built in code, each run three ways: our fast kernel, our plain int64 numpy
reference, and ai-edge-litert's builtin kernels (in a child process) — 100 % of the elements equal.
The weights have a non-zero zero point (137).  Most cases use scales whose effective multiplier is
exactly 1/16 and inputs near the zero points, so that many accumulators land on rounding ties (half
of them negative, where "ties up" and "ties away from zero" disagree); others use ordinary scales
and full-range inputs (clamps).  What litert runs on x86, measured here: CONV_2D and
FULLY_CONNECTED round ties up (ruy), a grouped CONV_2D and DEPTHWISE_CONV_2D away from zero,
TRANSPOSE_CONV up except the last (size mod 16) output values.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from helpers import litert_runner
from helpers.quantized_cases import assert_same, litert_outputs, run_ours
from helpers.quantized_uint8_matrix_cases import CASES, PLAIN, W_ZP, S, build_case, fc_u8, q
from workbench.errors import ModelError, UnsupportedOpError
from workbench.interpreter import Interpreter, quant
from workbench.schema import (
    ActivationFunctionType as Act,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    Conv2DOptions,
    FullyConnectedOptions,
    ModelBuilder,
)
from workbench.versioning import update_versions


def assert_equal_all(ours, theirs, what):
    assert_same(ours, theirs, what, dtype=np.uint8)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_uint8_kernels_equal_references(case):
    model, inputs = build_case(case)
    assert_equal_all(run_ours(model, inputs), run_ours(model, inputs, reference=True), case)


@pytest.fixture(scope="session")
def litert_u8_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_u8"), CASES, build_case, workers=2)


@pytest.mark.parametrize("case", sorted(CASES))
def test_uint8_kernels_bit_exact_with_litert(case, litert_u8_results):
    model, inputs = build_case(case)
    theirs = litert_outputs(litert_u8_results[case])
    assert_equal_all(run_ours(model, inputs), theirs, case)


def constant(model, t):
    tensor = model.subgraphs[0].tensors[t]
    dtype = {2: np.int32, 3: np.uint8}[int(tensor.type)]
    return np.frombuffer(bytes(model.buffers[tensor.buffer].data), dtype).reshape(tensor.shape)


@pytest.mark.parametrize("case", ["conv_3x3_same", "conv_grouped_2", "depthwise_3x3", "fc_64",
                                  "transpose_conv_same_stride2", "transpose_conv_valid_tail"])
def test_rounding_ties_are_exercised(case, litert_u8_results):
    """The other tie rule gives a different answer on these inputs, so the cases tell the rules apart."""
    from workbench.interpreter.kernels import conv_2d, depthwise_conv_2d, fully_connected, transpose_conv

    model, inputs = build_case(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    node, _, d, _ = it.prepared()[0]
    theirs = litert_u8_results[case].outputs["output_0"]
    if case.startswith("transpose"):       # all ties away, or all up (the tail too): both differ from litert
        for up_values in {0, int(np.prod(d.output_shape))} - {d.up_values}:
            got = transpose_conv.transpose_conv_uint8(inputs["x"], constant(model, node.inputs[1]),
                                                      constant(model, node.inputs[3]),
                                                      dataclasses.replace(d, up_values=up_values))
            assert int((got != theirs).sum()) > 0, up_values
        return
    if case.startswith("fc"):              # ruy's last shift (ties up), switched to ties away from zero
        from workbench.interpreter.variants import LITERT_X86

        away = dataclasses.replace(LITERT_X86, final_shift="away")
        got = fully_connected.fully_connected_uint8(inputs["x"], constant(model, node.inputs[1]),
                                                    constant(model, node.inputs[2]), d, away)
        assert int((got.reshape(theirs.shape) != theirs).sum()) > 0
        return
    other = dataclasses.replace(d, rounding="away" if d.rounding == "up" else "up")
    fn = {"c": conv_2d.conv_uint8, "d": depthwise_conv_2d.depthwise_uint8}[case[0]]
    got = fn(inputs["x"], constant(model, node.inputs[1]), constant(model, node.inputs[2]), other)
    assert int((got.reshape(theirs.shape) != theirs).sum()) > 0


def test_versions_are_the_uint8_ones():
    want = {"conv_3x3_same": 1, "conv_grouped_2": 6, "depthwise_3x3": 1, "depthwise_dilation_multiplier_2": 2,
            "fc": 1, "fc_keep_num_dims_relu6": 5, "fc_no_bias": 6, "transpose_conv_no_bias": 1,
            "transpose_conv_same_stride2": 3, "transpose_conv_relu6": 4}
    for case, version in want.items():
        model, _ = build_case(case)
        assert model.operator_codes[0].version == version, case


def test_uint8_opdata_uses_the_legacy_multiplier():
    model, _ = build_case("conv_plain_stride_relu6")
    it = Interpreter(model=model)
    it.allocate_tensors()
    _, kname, d, _ = it.prepared()[0]
    in_s, in_zp, f_s, out_s, out_zp = PLAIN
    real = float(np.float32(in_s) * np.float32(f_s)) / float(np.float32(out_s))
    assert d.effective_scale == real and (d.output_multiplier, d.output_shift) == quant.quantize_multiplier(real)
    assert d.filter_zero_point == W_ZP and d.input_zero_point == in_zp and d.rounding == "up" and "exact" in kname
    assert (d.output_activation_min, d.output_activation_max) == quant.activation_range_quantized(
        Act.RELU6, out_s, out_zp, 0, 255)
    model, _ = build_case("depthwise_3x3")
    it = Interpreter(model=model)
    it.allocate_tensors()
    assert it.prepared()[0][2].rounding == "away"
    model, _ = build_case("transpose_conv_valid_tail")
    it = Interpreter(model=model)
    it.allocate_tensors()
    assert it.prepared()[0][2].up_values == 2 * 5 * 5 * 6 - (2 * 5 * 5 * 6) % 16


# ------------------------------------------------------------------------------------------------
# refused


def _allocate(builder):
    it = Interpreter(model=update_versions(builder.build()))
    it.allocate_tensors()
    return it


def test_per_channel_uint8_filter_is_refused():
    b = ModelBuilder()
    x = b.input("x", (1, 4, 4, 2), np.uint8, quantization=q(0.5, 128))
    w = b.constant("w", np.full((3, 1, 1, 2), 130, np.uint8), quantization=q([0.1, 0.2, 0.3], [128] * 3))
    y = b.tensor("y", (1, 4, 4, 3), np.uint8, quantization=q(1.0, 128))
    b.op(B.CONV_2D, [x, w, -1], [y], Conv2DOptions(padding=S, stride_h=1, stride_w=1))
    b.output(y)
    with pytest.raises(UnsupportedOpError, match="per-tensor"):
        _allocate(b)


def test_bias_scale_far_from_input_times_filter_is_refused_like_tflite():
    b = ModelBuilder()
    x = b.input("x", (2, 4), np.uint8, quantization=q(0.5, 128))
    w = b.constant("w", np.full((3, 4), 130, np.uint8), quantization=q(0.1, 128))
    bias = b.constant("bias", np.zeros(3, np.int32), quantization=q(0.5, 0))
    y = b.tensor("y", (2, 3), np.uint8, quantization=q(1.0, 128))
    b.op(B.FULLY_CONNECTED, [x, w, bias], [y], FullyConnectedOptions())
    b.output(y)
    with pytest.raises(ModelError, match="bias scale"):
        _allocate(b)


def test_shuffled_weights_version_2_is_not_registered():
    b = ModelBuilder()
    x = b.input("x", (1, 16), np.uint8, quantization=q(0.5, 128))
    w = b.constant("w", np.full((4, 16), 130, np.uint8), quantization=q(0.1, 128))
    y = b.tensor("y", (1, 4), np.int16, quantization=q(1.0, 0))
    ws = b.tensor("workspace", (1, 16), np.uint8)
    b.op(B.FULLY_CONNECTED, [x, w, -1], [y, ws], FullyConnectedOptions(weights_format=1))
    b.output(y)
    model = update_versions(b.build())
    assert model.operator_codes[0].version == 2
    with pytest.raises(UnsupportedOpError, match="version 2 is not registered"):
        Interpreter(model=model).allocate_tensors()


def test_uint8_fc_refuses_tanh():
    builder, _ = fc_u8((2, 8), 3, act=Act.TANH)("tanh")
    with pytest.raises(UnsupportedOpError, match="TANH"):
        _allocate(builder)
