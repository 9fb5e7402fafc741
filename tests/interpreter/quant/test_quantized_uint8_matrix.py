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
import zlib

import numpy as np
import pytest

import litert_runner
import quantized_cases
from quantized_cases import assert_same, litert_outputs, run_ours
from workbench.errors import ModelError, UnsupportedOpError
from workbench.interpreter import Interpreter, quant
from workbench.schema import (
    ActivationFunctionType as Act, BuiltinOperator as B, Conv2DOptions, DepthwiseConv2DOptions,
    FullyConnectedOptions, ModelBuilder, Padding, TransposeConvOptions,
)
from workbench.versioning import update_versions

S, V = Padding.SAME, Padding.VALID
W_ZP = 137
TIES = (0.5, 131, 0.125, 1.0, 120)          # in_scale, in_zp, filter_scale, out_scale, out_zp: M = 1/16
PLAIN = (0.0213, 117, 0.0071, 0.173, 97)    # an ordinary multiplier, full-range data


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, zp, dim=0):
    return {"scale": np.atleast_1d(scale).tolist(), "zero_point": np.atleast_1d(zp).tolist(),
            "quantized_dimension": dim}


def window_out(padding, size, k, s, d=1):
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == S else (size - eff) // s + 1


def data(rng, shape, zp, sc, spread):
    """uint8 values: near ``zp`` (±spread) for the tie cases, the full range otherwise."""
    if sc is TIES:
        return rng.integers(zp - spread, zp + spread + 1, shape)
    return rng.integers(0, 256, shape)


def bias_tensor(b, rng, n, sc, hasb=True):
    if not hasb:
        return -1
    in_s, _, f_s, _, _ = sc
    span = 100 if sc is TIES else 3000
    return b.constant("bias", rng.integers(-span, span, n).astype(np.int32),
                      quantization=q(float(np.float32(in_s) * np.float32(f_s)), 0))


def conv_u8(x_shape, w_shape, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, sc=TIES):
    def build(name):
        rng = rng_for(name)
        in_s, in_zp, f_s, out_s, out_zp = sc
        b = ModelBuilder()
        x = b.input("x", x_shape, np.uint8, quantization=q(in_s, in_zp))
        w = b.constant("w", data(rng, w_shape, W_ZP, sc, 6).astype(np.uint8), quantization=q(f_s, W_ZP))
        bt = bias_tensor(b, rng, w_shape[0], sc)
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, w_shape[0]), np.uint8, quantization=q(out_s, out_zp))
        b.op(B.CONV_2D, [x, w, bt], [y], Conv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act,
            dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        return b, {"x": data(rng, x_shape, in_zp, sc, 8).astype(np.uint8)}
    return build


def depthwise_u8(x_shape, k, mult=1, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, sc=TIES):
    def build(name):
        rng = rng_for(name)
        in_s, in_zp, f_s, out_s, out_zp = sc
        co = x_shape[3] * mult
        b = ModelBuilder()
        x = b.input("x", x_shape, np.uint8, quantization=q(in_s, in_zp))
        w = b.constant("w", data(rng, (1, k[0], k[1], co), W_ZP, sc, 12).astype(np.uint8),
                       quantization=q(f_s, W_ZP, 3))
        bt = bias_tensor(b, rng, co, sc)
        oh = window_out(padding, x_shape[1], k[0], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], k[1], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, co), np.uint8, quantization=q(out_s, out_zp))
        b.op(B.DEPTHWISE_CONV_2D, [x, w, bt], [y], DepthwiseConv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], depth_multiplier=mult,
            fused_activation_function=act, dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        return b, {"x": data(rng, x_shape, in_zp, sc, 8).astype(np.uint8)}
    return build


def fc_u8(x_shape, units, act=Act.NONE, keep=False, bias=True, sc=TIES):
    def build(name):
        rng = rng_for(name)
        in_s, in_zp, f_s, out_s, out_zp = sc
        k = x_shape[-1]
        b = ModelBuilder()
        x = b.input("x", x_shape, np.uint8, quantization=q(in_s, in_zp))
        w = b.constant("w", data(rng, (units, k), W_ZP, sc, 6).astype(np.uint8), quantization=q(f_s, W_ZP))
        ins = [x, w]
        if bias:
            ins.append(bias_tensor(b, rng, units, sc))
        out = tuple(x_shape[:-1]) + (units,) if keep else (int(np.prod(x_shape)) // k, units)
        y = b.tensor("y", out, np.uint8, quantization=q(out_s, out_zp))
        b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act, keep_num_dims=keep))
        b.output(y)
        return b, {"x": data(rng, x_shape, in_zp, sc, 8).astype(np.uint8)}
    return build


def transpose_conv_u8(x_shape, co, k, stride, padding, act=Act.NONE, bias=True, sc=TIES):
    def build(name):
        rng = rng_for(name)
        in_s, in_zp, f_s, out_s, out_zp = sc
        n, h, w_, ci = x_shape
        if padding == S:
            oh, ow = h * stride[0], w_ * stride[1]
        else:
            oh, ow = (h - 1) * stride[0] + k[0], (w_ - 1) * stride[1] + k[1]
        b = ModelBuilder()
        shape = b.constant("output_shape", np.array([n, oh, ow, co], np.int32))
        w = b.constant("w", data(rng, (co, k[0], k[1], ci), W_ZP, sc, 6).astype(np.uint8), quantization=q(f_s, W_ZP))
        x = b.input("x", x_shape, np.uint8, quantization=q(in_s, in_zp))
        ins = [shape, w, x] + ([bias_tensor(b, rng, co, sc)] if bias else [])
        y = b.tensor("y", (n, oh, ow, co), np.uint8, quantization=q(out_s, out_zp))
        b.op(B.TRANSPOSE_CONV, ins, [y], TransposeConvOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                                              fused_activation_function=act))
        b.output(y)
        return b, {"x": data(rng, x_shape, in_zp, sc, 8).astype(np.uint8)}
    return build


CASES = {
    "conv_3x3_same": conv_u8((2, 7, 6, 5), (6, 3, 3, 5)),
    "conv_3x3_same_relu": conv_u8((1, 8, 7, 4), (5, 3, 3, 4), act=Act.RELU),
    "conv_dilation_2": conv_u8((1, 9, 8, 3), (4, 3, 3, 3), dilation=(2, 2)),
    "conv_1x1": conv_u8((2, 5, 5, 8), (7, 1, 1, 8)),
    "conv_2x2_valid_stride2": conv_u8((1, 6, 6, 4), (5, 2, 2, 4), stride=(2, 2), padding=V),
    "conv_grouped_2": conv_u8((1, 6, 5, 6), (4, 3, 3, 3)),
    "conv_plain_stride_relu6": conv_u8((2, 7, 6, 5), (6, 3, 3, 5), stride=(2, 1), padding=V, act=Act.RELU6, sc=PLAIN),
    "conv_plain_n1to1": conv_u8((1, 6, 6, 3), (4, 3, 3, 3), act=Act.RELU_N1_TO_1, sc=PLAIN),
    "depthwise_3x3": depthwise_u8((2, 7, 6, 5), (3, 3)),
    "depthwise_multiplier_3_valid": depthwise_u8((1, 9, 8, 3), (3, 2), mult=3, stride=(2, 1), padding=V),
    "depthwise_dilation_multiplier_2": depthwise_u8((1, 9, 8, 6), (3, 3), mult=2, dilation=(2, 2)),
    "depthwise_wide_16_channels": depthwise_u8((1, 6, 40, 16), (3, 3)),
    "depthwise_plain_relu": depthwise_u8((2, 7, 7, 8), (3, 3), stride=(2, 2), act=Act.RELU, sc=PLAIN),
    "fc": fc_u8((5, 37), 12),
    "fc_64": fc_u8((7, 64), 16),
    "fc_keep_num_dims_relu6": fc_u8((4, 3, 10), 9, act=Act.RELU6, keep=True),
    "fc_no_bias": fc_u8((4, 16), 6, bias=False),
    "fc_plain_relu": fc_u8((3, 50), 10, act=Act.RELU, sc=PLAIN),
    "transpose_conv_same_stride2": transpose_conv_u8((1, 4, 5, 3), 4, (3, 3), (2, 2), S),
    "transpose_conv_valid_tail": transpose_conv_u8((2, 3, 3, 5), 6, (3, 3), (1, 1), V),
    "transpose_conv_no_bias": transpose_conv_u8((1, 4, 4, 2), 3, (2, 2), (2, 2), V, bias=False),
    "transpose_conv_relu6": transpose_conv_u8((2, 5, 3, 3), 4, (3, 2), (2, 1), S, act=Act.RELU6),
    "transpose_conv_plain": transpose_conv_u8((1, 5, 4, 4), 5, (4, 3), (2, 1), S, sc=PLAIN),
}


def build_case(name):
    return quantized_cases.build(CASES, name)


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
