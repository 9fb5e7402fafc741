"""TRANSPOSE_CONV (and MediaPipe's Convolution2DTransposeBias, which shares its kernel file): the
teaching layer (kernels/transpose_conv.py) and the speed layer (fast/transpose_conv.py) compute the
same bits under both variants, the default interpreter is bit-exact with LiteRT's builtin kernels and
the reference variant with its BUILTIN_REF kernels — float32, int8, 16x8 (int64 bias, int32 bias
with quantized_bias_type=INT32, none), uint8 and hybrid; SAME / VALID, strides, activations.

Where the builds differ (``Variant.transpose_conv_kernel``): litert-x86's TransposeConvV2 requantizes
int8 (and 16x8 with an int32 bias) 8 channels at a time with ties going up and the last O % 8 channels
away from zero, uint8 the flat output 16 values at a time (up) and the last size % 16 away; the
reference kernel rounds every tie away from zero.  float32: the reference kernel scatters every
input value in input order; TransposeConvV2 makes one matrix product first, then col2im.  The
matrix product's own sum order (BLAS here, Eigen in LiteRT) is the one known gap: float cases with
random data match LiteRT's builtin kernel to rounding (shown below), the "exact" ones — whose sums
are exact in float32, so that no order matters — bit for bit.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from helpers.op_layers import OpLayers
from helpers.quantized_cases import assert_same
from helpers.quantized_int16_matrix_cases import tconv, tconv_ties
from helpers.quantized_sweep_regressions_cases import tconv_hybrid
from helpers.quantized_uint8_matrix_cases import PLAIN, transpose_conv_u8
from workbench.interpreter import Interpreter
from workbench.interpreter.explain import explain
from workbench.interpreter.fast import transpose_conv as fast_tc
from workbench.interpreter.kernels import transpose_conv as tc
from workbench.interpreter.kernels._common import FLOAT_MAX
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder, Padding, TransposeConvOptions
from workbench.schema import TensorType as TT

S, V = Padding.SAME, Padding.VALID


def tconv_f32(x_shape, w_shape, out_hw, stride=(1, 1), padding=S, act=Act.NONE, bias=True, exact=False):
    """float32 TRANSPOSE_CONV; ``exact``: multiples of 1/8 in [-2, 2] (every partial sum exact in
    float32), else normal random data (the sums' order shows in the bits)."""
    def build(name):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        data = (lambda shape: (rng.integers(-16, 17, shape) / 8).astype(np.float32)) if exact else \
            (lambda shape: rng.standard_normal(shape).astype(np.float32))
        co = w_shape[0]
        b = ModelBuilder()
        x = b.input("x", x_shape)
        ins = [b.constant("output_shape", np.array([x_shape[0], *out_hw, co], np.int32)),
               b.constant("w", data(w_shape)), x]
        if bias:
            ins.append(b.constant("bias", data((co,))))
        y = b.tensor("y", (x_shape[0], *out_hw, co))
        b.op(B.TRANSPOSE_CONV, ins, [y], TransposeConvOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                                              fused_activation_function=act))
        b.output(y)
        return b, {"x": data(x_shape)}
    return build


def mediapipe(x_shape, w_shape, stride, padding):
    """MediaPipe's Convolution2DTransposeBias: [input, weights, bias], a raw 12-byte options struct."""
    def build(name):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        n, h, w, _ = x_shape
        co, kh, kw, _ = w_shape
        pad_h = max(0, kh - (h - 1) % stride - 1) if padding == S else 0
        pad_w = max(0, kw - (w - 1) % stride - 1) if padding == S else 0
        b = ModelBuilder()
        x = b.input("x", x_shape)
        wt = b.constant("w", rng.standard_normal(w_shape).astype(np.float32))
        bias = b.constant("bias", rng.standard_normal(co).astype(np.float32))
        y = b.tensor("y", (n, stride * (h - 1) + kh - pad_h, stride * (w - 1) + kw - pad_w, co))
        b.op(None, [x, wt, bias], [y], custom_code="Convolution2DTransposeBias",
             custom_options=struct.pack("<iii", int(padding), stride, stride))
        b.output(y)
        return b, {"x": rng.standard_normal(x_shape).astype(np.float32)}
    return build


def seeded(build, name):
    """``build`` with the random data (bias) of case ``name`` of test_quantized_int16_matrix, whose bias
    puts rounding ties on both sides of the rule (that module's test_the_ties_cases_contain_ties)."""
    return lambda _: build(name)


CASES = {
    "float32_exact_3x3_stride_2": tconv_f32((1, 4, 5, 3), (4, 3, 3, 3), (8, 10), (2, 2), exact=True),
    "float32_exact_valid_relu_batch_2": tconv_f32((2, 3, 4, 6), (5, 3, 2, 6), (5, 5), padding=V, act=Act.RELU,
                                                  exact=True),
    "float32_exact_no_bias_4x4": tconv_f32((1, 4, 4, 7), (9, 4, 4, 7), (8, 8), (2, 2), bias=False, exact=True),
    "float32_exact_stride_3x1_relu6": tconv_f32((1, 3, 5, 4), (6, 2, 3, 4), (9, 5), (3, 1), act=Act.RELU6,
                                                exact=True),
    "float32_3x3_stride_2": tconv_f32((1, 4, 5, 3), (4, 3, 3, 3), (8, 10), (2, 2)),
    "float32_valid_relu_batch_2": tconv_f32((2, 3, 4, 6), (5, 3, 2, 6), (5, 5), padding=V, act=Act.RELU),
    "float32_32_channels": tconv_f32((1, 5, 5, 32), (8, 3, 3, 32), (10, 10), (2, 2)),
    "float32_no_bias_4x4": tconv_f32((1, 4, 4, 7), (9, 4, 4, 7), (8, 8), (2, 2), bias=False),
    "int8_3x3_stride_2": tconv(np.int8, (1, 5, 6, 3), (11, 3, 3, 3), (10, 12), stride=(2, 2), in_zp=-3, out_zp=4),
    "int8_valid_no_bias": tconv(np.int8, (2, 4, 5, 4), (6, 3, 2, 4), (9, 11), stride=(2, 2), padding=V, bias=False,
                                in_zp=5, out_zp=-7),
    "int8_relu": tconv(np.int8, (1, 5, 6, 3), (9, 3, 3, 3), (10, 12), stride=(2, 2), act=Act.RELU, out_zp=-10),
    "int8_per_tensor_16_channels": tconv(np.int8, (1, 4, 4, 5), (16, 2, 2, 5), (8, 8), stride=(2, 2),
                                         per_channel=False),
    "int8_ties_11_channels": seeded(tconv_ties(np.int8, 11, 0.25), "tconv8_ties_11ch"),
    "int8_ties_19_channels": seeded(tconv_ties(np.int8, 19, 0.375), "tconv8_ties_19ch"),
    "int16_int64_bias_3x3": tconv(np.int16, (1, 5, 6, 3), (11, 3, 3, 3), (10, 12), stride=(2, 2)),
    "int16_int32_bias_3x3": tconv(np.int16, (1, 5, 6, 3), (11, 3, 3, 3), (10, 12), stride=(2, 2),
                                  bias_dtype=np.int32, qbt=TT.INT32),
    "int16_no_bias": tconv(np.int16, (2, 4, 5, 4), (6, 3, 2, 4), (9, 11), stride=(2, 2), padding=V, bias=False),
    "int16_ties_int64_bias": tconv_ties(np.int16, 11, 0.25, bias_dtype=np.int64),
    "int16_ties_int32_bias": tconv_ties(np.int16, 11, 0.25, bias_dtype=np.int32, qbt=TT.INT32),
    "uint8_same_stride_2": transpose_conv_u8((1, 4, 5, 3), 4, (3, 3), (2, 2), S),
    "uint8_valid_tail": transpose_conv_u8((2, 3, 3, 5), 6, (3, 3), (1, 1), V),
    "uint8_no_bias": transpose_conv_u8((1, 4, 4, 2), 3, (2, 2), (2, 2), V, bias=False),
    "uint8_relu6": transpose_conv_u8((2, 5, 3, 3), 4, (3, 2), (2, 1), S, act=Act.RELU6),
    "uint8_plain": transpose_conv_u8((1, 5, 4, 4), 5, (4, 3), (2, 1), S, sc=PLAIN),
    "hybrid_3x3_stride_2_per_channel": tconv_hybrid((2, 3, 4, 5), (6, 3, 3, 5), (6, 8), (2, 2), S),
    "hybrid_4x4_valid_per_tensor_relu": tconv_hybrid((1, 4, 4, 8), (3, 4, 4, 8), (10, 10), (2, 2), V,
                                                     act=Act.RELU, per_channel=False),
    "hybrid_no_bias_16_channels": tconv_hybrid((1, 4, 4, 16), (12, 3, 3, 16), (8, 8), (2, 2), S, bias=False),
    "hybrid_2x2_n1to1_ties": tconv_hybrid((2, 3, 3, 9), (5, 2, 2, 9), (6, 6), (2, 2), V, act=Act.RELU_N1_TO_1,
                                          ties=True),
}
LAYERS = OpLayers(CASES)
# float32 with random data: LiteRT's Eigen GEMM sums in its own order (test_float_gemm_order_is_the_gap)
GEMM_ORDER = {k for k in CASES if k.startswith("float32_") and "exact" not in k}

MEDIAPIPE = {"mediapipe_same_stride_2": mediapipe((1, 4, 5, 3), (4, 3, 3, 3), 2, S),
             "mediapipe_valid_stride_3": mediapipe((2, 3, 3, 5), (6, 4, 4, 5), 3, V)}
MEDIAPIPE_LAYERS = OpLayers(MEDIAPIPE)


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(set(CASES) - GEMM_ORDER))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


@pytest.mark.parametrize("case", sorted(GEMM_ORDER))
def test_float_gemm_order_is_the_gap(case):
    """Random float data: the same values as LiteRT's builtin kernel, not always the same bits — the
    matrix product sums its I terms in BLAS's order, LiteRT's in Eigen's; the rest (col2im in input
    order, then the bias) is TransposeConvV2's, so the difference stays within a few ulp."""
    ours, theirs = LAYERS.run(case)[0], LAYERS.litert(case)[0]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    # LiteRT's reference kernel is the teaching layer's scatter: bit for bit (the reference-variant test)


@pytest.mark.parametrize("case, what", [
    ("int8_ties_11_channels", "int8: channels 0-7 round ties up on x86, 8-10 away"),
    ("int8_ties_19_channels", "int8: channels 0-15 up, 16-18 away"),
    ("int16_ties_int32_bias", "16x8 with an int32 bias takes int8's recipe"),
    ("uint8_valid_tail", "uint8: the flat output 16 values at a time up, the last size % 16 away"),
    ("float32_3x3_stride_2", "float32: a matrix product and col2im, or the scatter in input order"),
])
def test_the_builds_differ(case, what):
    assert LAYERS.differing_variants(case) > 0, what


def test_the_builds_agree_on_the_int64_recipe_and_hybrid():
    # 16x8 with an int64 bias (or none) runs the reference kernel in both builds, hybrid too; exact floats
    # leave no order to differ in
    for case in ("int16_ties_int64_bias", "int16_no_bias", "hybrid_2x2_n1to1_ties", "hybrid_no_bias_16_channels",
                 "float32_exact_3x3_stride_2"):
        assert LAYERS.differing_variants(case) == 0, case


def prepared(case, variant="litert-x86", layers=LAYERS):
    it = Interpreter(model=layers.build(case)[0], variant=variant)
    it.allocate_tensors()
    return it, it.prepared()[0][2]


def test_rounding_blocks_follow_the_variant():
    assert (prepared("int8_ties_11_channels")[1].up_channels, prepared("int8_ties_19_channels")[1].up_channels) == \
        (8, 16)
    assert prepared("int8_per_tensor_16_channels")[1].up_channels == 16
    _, d = prepared("int16_ties_int64_bias")
    assert d.recipe == "int64" and d.up_channels == 0
    assert prepared("uint8_valid_tail")[1].up_values == 2 * 5 * 5 * 6 - (2 * 5 * 5 * 6) % 16
    for case in ("int8_ties_19_channels", "int16_ties_int32_bias"):
        assert prepared(case, "reference")[1].up_channels == 0
    assert prepared("uint8_valid_tail", "reference")[1].up_values == 0


@pytest.mark.parametrize("case", sorted(MEDIAPIPE))
def test_mediapipe_teaching_layer_is_the_speed_layer_and_transpose_conv(case):
    MEDIAPIPE_LAYERS.check_layers(case)
    it, d = prepared(case, layers=MEDIAPIPE_LAYERS)
    assert it.prepared()[0][1] == "convolution_2d_transpose_bias/blas+col2im"
    model, (x,) = MEDIAPIPE_LAYERS.build(case)
    filt, bias = it.get_tensor(1), it.get_tensor(2)
    for kernel in ("scatter", "gemm+col2im"):       # the same arithmetic as TRANSPOSE_CONV's
        want = tc.transpose_conv_float(x, filt, bias, d, kernel)
        got = MEDIAPIPE_LAYERS.run(case, reference=True, variant="litert-x86" if kernel != "scatter" else "reference")
        assert_same(got, [want], f"{case} {kernel}")


def test_labels_name_the_fast_paths():
    want = {"float32_3x3_stride_2": "blas+col2im", "int8_3x3_stride_2": "blas(float32, exact)+col2im",
            "int16_int64_bias_3x3": "blas(float32, exact)+col2im", "uint8_plain": "blas(float32, exact)+col2im",
            "hybrid_no_bias_16_channels": "numba scatter (float32, tap by tap)"}
    for case, label in want.items():
        it, _ = prepared(case)
        assert it.prepared()[0][1] == f"transpose_conv/{label}", case
        it = Interpreter(model=LAYERS.build(case)[0], reference=True)
        it.allocate_tensors()
        assert it.prepared()[0][1] == "transpose_conv/reference", case


# ----------------------------------------------------------------------------------------------
# the numba col2im called directly (formerly tests/interpreter/test_interpreter_kernels.py)


@pytest.mark.parametrize("x_shape,k,stride,pad", [((1, 4, 5, 3), (3, 3), (2, 2), (1, 1)),
                                                  ((2, 3, 3, 2), (4, 4), (2, 2), (1, 1)),
                                                  ((1, 5, 4, 3), (2, 3), (1, 2), (0, 1)),
                                                  ((1, 3, 3, 4), (3, 3), (3, 3), (0, 0))])
def test_col2im_numba_is_the_teaching_layer(x_shape, k, stride, pad):
    n, h, w, ci = x_shape
    rng = np.random.default_rng(11)
    co = 3
    x = rng.standard_normal(x_shape).astype(np.float32)
    filt = rng.standard_normal((co, k[0], k[1], ci)).astype(np.float32)
    bias = rng.standard_normal(co).astype(np.float32)
    out_shape = (n, (h - 1) * stride[0] + k[0] - 2 * pad[0], (w - 1) * stride[1] + k[1] - 2 * pad[1], co)
    d = tc.TransposeConvData("SAME", *stride, *k, *pad, out_shape, "NONE", -FLOAT_MAX, FLOAT_MAX)
    want = tc.transpose_conv_float(x, filt, bias, d, "gemm+col2im")
    cols = x.reshape(-1, ci) @ tc.filter_matrix(filt)
    out = np.empty(out_shape, np.float32)
    fast_tc.col2im_numba(cols, out, h, w, k[0], k[1], stride[0], stride[1], pad[0], pad[1], bias,
                         np.float32(-FLOAT_MAX), np.float32(FLOAT_MAX))
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))
    np.testing.assert_allclose(out, tc.transpose_conv_float(x, filt, bias, d), rtol=1e-5, atol=1e-5)


def test_empty_input_gives_the_bias():
    """No input pixel, nothing to scatter: the bias alone (no slice wraps around)."""
    d = tc.TransposeConvData("VALID", 2, 2, 2, 2, 0, 0, (1, 2, 4, 3), "NONE", -FLOAT_MAX, FLOAT_MAX)
    for kernel in ("scatter", "gemm+col2im"):
        out = tc.transpose_conv_float(np.ones((1, 0, 2, 2), np.float32), np.ones((3, 2, 2, 2), np.float32),
                                      np.arange(3, dtype=np.float32), d, kernel)
        np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3, dtype=np.float32), (1, 2, 4, 3)))


@pytest.mark.parametrize("variant", ["litert-x86", "reference"])
@pytest.mark.parametrize("case", ["int8_ties_11_channels", "int16_ties_int32_bias", "int16_int64_bias_3x3",
                                  "uint8_valid_tail", "hybrid_2x2_n1to1_ties"])
def test_explain_agrees_with_the_kernel_under_both_variants(case, variant):
    model, (x,) = LAYERS.build(case)
    it = Interpreter(model=model, variant=variant)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    size = it.get_tensor(it.get_output_details()[0]["index"]).size
    for k in range(0, size, max(1, size // 97)):
        e = explain(it, 0, k)
        assert e.agrees, repr(e)
