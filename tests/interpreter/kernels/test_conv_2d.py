"""CONV_2D: the teaching layer (kernels/conv_2d.py, _conv_uint8_hybrid.py, _conv_geometry.py) and the speed
layer (fast/conv_2d.py, fast/conv_hybrid.py) compute the same bits; the default interpreter is bit-exact with
LiteRT's builtin kernels and the reference variant with LiteRT's BUILTIN_REF kernels — float32 (inputs whose
sums are exact in any order), int8 (per channel, per tensor, the VNNI and BLAS paths), uint8, 16x8 (int64
and int32 bias) and hybrid (per tensor, per channel, grouped); SAME and VALID, strides, dilations, groups,
fused activations, filters given at run time.  Then the variants' differences, float sums on arbitrary
inputs, and the kernels called directly."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

from helpers import litert_batch
from helpers.conv_cases import V, conv_case
from helpers.op_layers import OpLayers
from helpers.quantized_cases import assert_same
from workbench import dump
from workbench.interpreter import Interpreter
from workbench.interpreter.fast import conv_2d as fast_conv
from workbench.interpreter.kernels import conv_2d
from workbench.interpreter.kernels._common import out_size, pad_before
from workbench.perf import fgemm as _fgemm
from workbench.perf import vnni as _vnni
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import TensorType as TT

I32 = dict(bias_dtype=np.int32, option=TT.INT32)

CASES = {
    # float32: the 1x1 matrix product, im2col + BLAS, the direct loop (grouped), a filter given at run time
    "f32_1x1_two_images": conv_case("float32", (2, 9, 7, 24), (40, 1, 1, 24)),
    "f32_1x1_stride2": conv_case("float32", (1, 7, 7, 8), (5, 1, 1, 8), stride=(2, 2)),
    "f32_3x3_same_relu": conv_case("float32", (2, 9, 8, 3), (6, 3, 3, 3), act=Act.RELU),
    "f32_3x3_valid_stride2": conv_case("float32", (1, 11, 10, 4), (5, 3, 3, 4), stride=(2, 2), padding=V),
    "f32_5x3_stride_2x1_n1to1": conv_case("float32", (1, 9, 7, 2), (3, 5, 3, 2), stride=(2, 1), act=Act.RELU_N1_TO_1),
    "f32_dilation_relu6": conv_case("float32", (1, 12, 11, 3), (4, 3, 3, 3), dilation=(2, 2), act=Act.RELU6),
    "f32_grouped": conv_case("float32", (1, 6, 6, 8), (6, 3, 3, 4)),
    "f32_window_over_image": conv_case("float32", (1, 3, 3, 2), (4, 5, 5, 2)),
    "f32_filter_input": conv_case("float32", (1, 7, 6, 4), (5, 3, 3, 4), filter_input=True),
    # int8
    "i8_1x1_per_channel": conv_case("int8", (1, 6, 5, 16), (8, 1, 1, 16)),
    "i8_1x1_per_tensor": conv_case("int8", (1, 6, 5, 16), (8, 1, 1, 16), per_channel=False),
    "i8_3x3_same_relu": conv_case("int8", (1, 9, 8, 3), (6, 3, 3, 3), act=Act.RELU),
    "i8_3x3_valid_stride2_two_images": conv_case("int8", (2, 11, 10, 4), (5, 3, 3, 4), stride=(2, 2), padding=V),
    "i8_same_stride2_relu6_zp_min": conv_case("int8", (1, 8, 8, 3), (4, 3, 3, 3), stride=(2, 2), act=Act.RELU6,
                                              in_zp=-128),
    "i8_dilation_per_tensor": conv_case("int8", (1, 12, 11, 3), (4, 3, 3, 3), dilation=(2, 2), per_channel=False),
    "i8_big_k_float64": conv_case("int8", (1, 5, 5, 256), (4, 3, 3, 256), in_zp=100),
    "i8_ties_1x1": conv_case("int8", (2, 8, 8, 16), (12, 1, 1, 16), ties=True),
    "i8_ties_3x3_relu": conv_case("int8", (1, 9, 9, 8), (6, 3, 3, 8), ties=True, act=Act.RELU),
    "i8_ties_vnni_sized": conv_case("int8", (1, 16, 16, 64), (32, 1, 1, 64), ties=True),
    "i8_grouped_ties": conv_case("int8", (2, 8, 8, 16), (12, 1, 1, 8), ties=True),
    "i8_grouped_3x3_relu6": conv_case("int8", (1, 7, 6, 8), (8, 3, 3, 2), act=Act.RELU6),
    "i8_filter_input_ties": conv_case("int8", (2, 8, 8, 4), (6, 1, 1, 4), ties=True, filter_input=True),
    # uint8
    "u8_3x3_same": conv_case("uint8", (2, 7, 6, 5), (6, 3, 3, 5)),
    "u8_1x1": conv_case("uint8", (2, 5, 5, 8), (7, 1, 1, 8)),
    "u8_2x2_valid_stride2": conv_case("uint8", (1, 6, 6, 4), (5, 2, 2, 4), stride=(2, 2), padding=V),
    "u8_dilation_relu": conv_case("uint8", (1, 9, 8, 3), (4, 3, 3, 3), dilation=(2, 2), act=Act.RELU),
    "u8_grouped": conv_case("uint8", (1, 6, 5, 6), (4, 3, 3, 3)),
    "u8_plain_stride_relu6": conv_case("uint8", (2, 7, 6, 5), (6, 3, 3, 5), stride=(2, 1), padding=V, act=Act.RELU6,
                                       ties=False),
    "u8_filter_input": conv_case("uint8", (1, 6, 6, 3), (4, 3, 3, 3), filter_input=True),
    # 16x8
    "i16_int64_3x3_relu": conv_case("int16", (1, 9, 8, 5), (7, 3, 3, 5), act=Act.RELU),
    "i16_int64_stride2_valid_per_tensor": conv_case("int16", (2, 11, 10, 4), (5, 3, 3, 4), stride=(2, 2), padding=V,
                                                    per_channel=False),
    "i16_int64_option": conv_case("int16", (1, 6, 6, 3), (4, 3, 3, 3), option=TT.INT64),
    "i16_int64_grouped_dilated": conv_case("int16", (1, 11, 10, 6), (6, 3, 3, 2), dilation=(2, 3), padding=V),
    "i16_int64_big_k": conv_case("int16", (1, 5, 5, 256), (4, 3, 3, 256)),
    "i16_int64_filter_input": conv_case("int16", (1, 7, 6, 4), (5, 3, 3, 4), filter_input=True),
    "i16_int32_3x3": conv_case("int16", (1, 9, 8, 5), (7, 3, 3, 5), **I32),
    "i16_int32_1x1_two_images": conv_case("int16", (2, 9, 8, 5), (7, 1, 1, 5), **I32),
    "i16_int32_grouped": conv_case("int16", (1, 9, 8, 6), (6, 3, 3, 3), **I32),
    "i16_ties_int32": conv_case("int16", (1, 1, 2648, 2), (3, 1, 1, 2), padding=V, ties=True, **I32),
    "i16_ties_int32_grouped": conv_case("int16", (1, 1, 2648, 2), (4, 1, 1, 1), padding=V, ties=True, **I32),
    "i16_ties_int64": conv_case("int16", (1, 1, 2648, 2), (3, 1, 1, 2), padding=V, ties=True),
    # hybrid
    "h_per_channel_3x3_relu": conv_case("hybrid", (2, 7, 6, 5), (6, 3, 3, 5), act=Act.RELU),
    "h_per_tensor_3x3": conv_case("hybrid", (2, 7, 6, 5), (6, 3, 3, 5), scales="one"),
    "h_equal_scales_is_per_tensor": conv_case("hybrid", (1, 6, 5, 4), (3, 3, 3, 4), scales="equal"),
    "h_per_channel_valid_stride_relu6": conv_case("hybrid", (1, 9, 8, 3), (5, 3, 2, 3), stride=(2, 1), padding=V,
                                                  act=Act.RELU6),
    "h_per_channel_dilation_n1to1": conv_case("hybrid", (1, 9, 8, 3), (4, 3, 3, 3), dilation=(2, 2),
                                              act=Act.RELU_N1_TO_1),
    "h_1x1_per_channel": conv_case("hybrid", (2, 5, 5, 8), (7, 1, 1, 8)),
    "h_1x1_per_tensor": conv_case("hybrid", (2, 5, 5, 8), (8, 1, 1, 8), scales="one"),
    "h_per_channel_ties": conv_case("hybrid", (2, 6, 5, 8), (12, 3, 3, 8), ties=True),
    "h_per_tensor_ties": conv_case("hybrid", (2, 6, 5, 8), (12, 3, 3, 8), scales="one", ties=True),
    "h_grouped_relu_ties": conv_case("hybrid", (2, 6, 5, 8), (12, 3, 3, 2), act=Act.RELU, ties=True),
    "h_grouped_depthwise_7x7": conv_case("hybrid", (1, 9, 9, 12), (12, 7, 7, 1)),
    "h_row_sums_wrap": conv_case("hybrid", (1, 4, 4, 256), (4, 3, 3, 256), weights=127, positive=True),
}
LAYERS = OpLayers(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


# -- where the builds differ ------------------------------------------------------------------------

# ruy's last rounding shift sends ties up, TFLite's reference kernels away from zero: power-of-two scales put
# many sums on exact halves (int8, uint8, 16x8 with an int32 bias; the VNNI path follows the OpData too)
TIES_UP = ["i8_ties_1x1", "i8_ties_vnni_sized", "i8_filter_input_ties", "u8_3x3_same",
           "i16_ties_int32"]
# hybrid per channel: litert's optimized kernel scales by float32(filter_scale · scaling_factor), the reference
# kernel by (· filter_scale) · scaling_factor — another float32 rounding; and with 2304-long filter rows of 127
# the SSE row sums wrap in their int16 lanes, so the zero point's correction is off by zero_point · 2^19
HYBRID_ORDER = ["h_per_channel_3x3_relu", "h_per_channel_ties", "h_1x1_per_channel", "h_row_sums_wrap"]
# the same arithmetic in both builds: grouped convolutions (the reference kernel everywhere), int64-bias 16x8
# (only the reference kernel takes an int64 bias), per-tensor hybrid (HybridConv in both), float32 here
SAME_IN_BOTH = ["i8_grouped_ties", "u8_grouped", "i16_ties_int32_grouped", "i16_ties_int64", "h_per_tensor_ties",
                "h_grouped_relu_ties", "f32_3x3_same_relu", "f32_grouped"]


@pytest.mark.parametrize("case", TIES_UP)
def test_x86_final_shift_sends_ties_up(case):
    assert LAYERS.differing_variants(case) > 0


@pytest.mark.parametrize("case", HYBRID_ORDER)
def test_x86_hybrid_per_channel_scales_in_another_order(case):
    assert LAYERS.differing_variants(case) > 0


@pytest.mark.parametrize("case", SAME_IN_BOTH)
def test_both_builds_agree(case):
    assert LAYERS.differing_variants(case) == 0


def test_the_opdata_records_the_variant_rule():
    def prepared(case, variant):
        model, _ = LAYERS.build(case)
        it = Interpreter(model=model, variant=variant)
        it.allocate_tensors()
        return it.prepared()[0]

    for case, field, x86, ref in (("i8_ties_1x1", "rounding", "up", "away"),
                                  ("u8_3x3_same", "rounding", "up", "away"),
                                  ("i8_grouped_ties", "rounding", "away", "away"),
                                  ("i16_ties_int32", "rounding", "up", "away"),
                                  ("i16_ties_int64", "rounding", "up", "up"),
                                  ("h_per_channel_ties", "recipe", "per-channel", "reference"),
                                  ("h_per_tensor_ties", "recipe", "per-tensor", "per-tensor"),
                                  ("h_grouped_relu_ties", "recipe", "reference", "reference")):
        assert getattr(prepared(case, "litert-x86")[2], field) == x86, case
        assert getattr(prepared(case, "reference")[2], field) == ref, case


def test_fast_path_labels():
    def label(case, variant="litert-x86"):
        model, _ = LAYERS.build(case)
        it = Interpreter(model=model, variant=variant)
        it.allocate_tensors()
        return it.prepared()[0][1]

    native = _fgemm.function() is not None     # the kernel library's own float product, where it runs
    assert label("f32_1x1_two_images") == ("conv_2d/igemm" if native else "conv_2d/matmul")
    assert label("f32_3x3_same_relu") == ("conv_2d/igemm" if native else "conv_2d/im2col+blas")
    assert label("f32_3x3_same_relu", "reference") == "conv_2d"          # BLAS order: litert-x86 only
    assert label("f32_grouped") == label("f32_grouped", "reference") == "conv_2d/numba"
    assert label("i8_1x1_per_channel") == label("i8_1x1_per_channel", "reference") == "conv_2d/matmul(float32, exact)"
    assert label("i8_big_k_float64") == "conv_2d/im2col+blas(float64, exact)"
    assert label("i8_ties_vnni_sized") == ("conv_2d/vnni(int8, exact)" if _vnni.available() else
                                           "conv_2d/matmul(float32, exact)")
    assert label("i8_grouped_ties") == label("i8_filter_input_ties") == "conv_2d/numba"
    assert label("u8_3x3_same") == "conv_2d/im2col+blas(float32, exact)"
    assert label("i16_int32_grouped") == "conv_2d/numba"
    assert label("i16_int64_3x3_relu") == "conv_2d/im2col+blas(float64, exact)"
    assert label("h_per_channel_3x3_relu") == \
        "conv_2d/per-channel, asymmetric: quantize(numba)+im2col+blas(float32, exact)"
    assert label("h_per_channel_3x3_relu", "reference") == \
        "conv_2d/per-channel, asymmetric (reference kernel): quantize(numba)+direct loop(numba)"
    assert label("h_1x1_per_tensor") == "conv_2d/per-tensor, symmetric: quantize(numba)+matmul(float32, exact)"
    assert label("h_grouped_relu_ties") == \
        "conv_2d/grouped, per-channel, asymmetric: quantize(numba)+direct loop(numba)"


# -- no bias: the workbench runs it, LiteRT 2.3 refuses it in both resolvers ----------------------

NO_BIAS = {
    "f32_no_bias": conv_case("float32", (1, 5, 5, 3), (2, 3, 3, 3), bias=False),
    "i8_no_bias_ties": conv_case("int8", (2, 8, 8, 4), (6, 1, 1, 4), ties=True, bias=False),
    "u8_no_bias": conv_case("uint8", (1, 6, 5, 6), (4, 3, 3, 6), bias=False),
    "h_no_bias_per_channel": conv_case("hybrid", (2, 5, 5, 3), (4, 3, 3, 3), bias=False),
    "h_no_bias_grouped": conv_case("hybrid", (1, 5, 5, 4), (4, 3, 3, 2), bias=False),
}
NO_BIAS_LAYERS = OpLayers(NO_BIAS)


@pytest.mark.parametrize("case", sorted(NO_BIAS))
def test_no_bias_teaching_layer_is_the_speed_layer(case):
    NO_BIAS_LAYERS.check_layers(case)


@pytest.mark.parametrize("resolver", ["BUILTIN_WITHOUT_DEFAULT_DELEGATES", "BUILTIN_REF"])
def test_litert_refuses_a_conv_without_bias(resolver):
    """The cases omit the bias as input -1 of three: conv.cc's Prepare takes three inputs for "has a bias"
    and then fails to get it, in both resolvers — so these cases stay out of the LiteRT comparisons."""
    jobs = [(dump(NO_BIAS_LAYERS.build(name)[0]), NO_BIAS_LAYERS.build(name)[1]) for name in sorted(NO_BIAS)]
    for name, (status, message) in zip(sorted(NO_BIAS), litert_batch.run_many(jobs, resolver=resolver)):
        assert status == "error" and "Tensor at index 2 was optional but was expected" in message, (name, message)


# -- float32 on arbitrary inputs: the sums' order matters ------------------------------------------

RANDOM_FLOAT = {
    "f32_random_3x3_relu": conv_case("float32", (2, 9, 8, 3), (6, 3, 3, 3), act=Act.RELU, exact=False),
    "f32_random_1x1_64": conv_case("float32", (1, 6, 5, 64), (4, 1, 1, 64), exact=False),
    "f32_random_grouped": conv_case("float32", (1, 6, 6, 8), (6, 3, 3, 4), exact=False),
    "f32_random_dilation_valid": conv_case("float32", (1, 12, 11, 3), (4, 3, 2, 3), dilation=(2, 3), padding=V,
                                           exact=False),
}
RANDOM = OpLayers(RANDOM_FLOAT)


@pytest.mark.parametrize("case", sorted(RANDOM_FLOAT))
def test_float_reference_variant_sums_in_reference_order(case):
    """The teaching layer adds the taps one by one in reference_ops::Conv's order: bit-exact with
    BUILTIN_REF on any input.  (The builtin kernels' GEMM sums in its own order, like the default speed
    layer's BLAS product: those agree with each other to float32 rounding, as test_interpreter_ops.py checks.)"""
    RANDOM.check_reference_variant(case)
    assert_same(RANDOM.run(case, variant="reference"), RANDOM.run(case, reference=True, variant="reference"),
                f"{case} (speed vs teaching layer, reference variant)")
    ours, theirs = RANDOM.run(case)[0], RANDOM.litert(case)[0]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


# -- the kernels called directly (moved from tests/interpreter/test_interpreter_kernels.py) --------


def geometry(h, w, kh, kw, stride, dilation, padding):
    code = 1 if padding == "SAME" else 2
    oh = out_size(code, h, kh, stride[0], dilation[0])
    ow = out_size(code, w, kw, stride[1], dilation[1])
    pt, _ = pad_before(stride[0], dilation[0], h, kh, oh)
    pl, _ = pad_before(stride[1], dilation[1], w, kw, ow)
    return oh, ow, pt, pl


def nonempty(x_shape, k, stride, dilation, padding) -> bool:
    oh, ow, _, _ = geometry(x_shape[1], x_shape[2], k[0], k[1], stride, dilation, padding)
    return oh > 0 and ow > 0


CONV_CASES = [case for case in itertools.product(
    [(1, 7, 6, 4), (2, 5, 9, 2)],            # input
    [(3, 3), (1, 1), (2, 5)],                # filter
    [(1, 1), (2, 2), (1, 3)],                # stride
    [(1, 1), (2, 1)],                        # dilation
    ["SAME", "VALID"],
    [1, 2],                                  # groups (input channels must divide)
) if case[0][3] % case[5] == 0 and nonempty(*case[:5])]


@pytest.mark.parametrize("x_shape,k,stride,dilation,padding,groups", CONV_CASES)
def test_conv_numba_and_im2col_match_reference(x_shape, k, stride, dilation, padding, groups):
    """The direct loop adds in the teaching layer's order (bit for bit); im2col + BLAS to float32 rounding."""
    n, h, w, c = x_shape
    rng = np.random.default_rng(zlib.crc32(repr((x_shape, k, stride, dilation, padding, groups)).encode()))
    o = 2 * groups
    x = rng.standard_normal(x_shape).astype(np.float32)
    filt = rng.standard_normal((o, k[0], k[1], c // groups)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    oh, ow, pt, pl = geometry(h, w, k[0], k[1], stride, dilation, padding)
    assert oh > 0 and ow > 0
    d = conv_2d.Conv2DData(padding, stride[0], stride[1], dilation[0], dilation[1], k[0], k[1], pt, pl, groups,
                           (n, oh, ow, o), "RELU6", 0.0, 6.0)
    ref = conv_2d.conv_float(x, filt, bias, d)
    out = np.empty_like(ref)
    fast_conv.conv_numba(x, filt, bias, out, stride[0], stride[1], dilation[0], dilation[1], pt, pl,
                         np.float32(0), np.float32(6))
    np.testing.assert_array_equal(out.view(np.uint32), ref.view(np.uint32))
    if groups == 1:   # the im2col + BLAS path, as the kernel runs it
        src = np.zeros(conv_2d.padded_shape(x.shape, k[0], k[1], oh, ow, *stride, *dilation, pt, pl), np.float32)
        src[:, pt:pt + h, pl:pl + w] = x
        cols = np.empty((n * oh * ow, k[0] * k[1] * c), np.float32)
        view = fast_conv.im2col_view(src, oh, ow, k[0], k[1], *stride, *dilation)
        np.copyto(cols.reshape(view.shape), view)
        got = np.clip(cols @ fast_conv.filter_matrix(filt) + bias, 0.0, 6.0).reshape(ref.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)



@pytest.mark.parametrize("variant", ["litert-x86", "reference"])
@pytest.mark.parametrize("case", ["i8_ties_1x1", "u8_3x3_same", "i16_ties_int32", "h_per_channel_ties",
                                  "h_per_tensor_ties", "h_grouped_relu_ties", "h_row_sums_wrap"])
def test_explain_follows_the_variant(case, variant):
    """``explain`` works an output element out by the OpData's rule (rounding, recipe): under either variant it
    gives the kernel's bits."""
    from workbench.interpreter.explain import explain

    model, inputs = LAYERS.build(case)
    it = Interpreter(model=model, variant=variant, keep_intermediates=True)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], inputs[0])
    it.invoke()
    out = it.get_tensor(it.get_output_details()[0]["index"]).reshape(-1)
    for k in np.random.default_rng(0).choice(out.size, min(out.size, 40), replace=False):
        e = explain(it, 0, int(k))
        assert np.asarray(e.by_hand, out.dtype).tobytes() == out[k].tobytes(), (case, variant, int(k), repr(e))
    rule = {"i8_ties_1x1": "ties up", "u8_3x3_same": "ties up", "i16_ties_int32": "ties up",
            "h_per_channel_ties": "row sums", "h_row_sums_wrap": "row sums"}.get(case)
    if rule:        # the reference variant explains the reference kernel's rule instead
        assert (rule in e.recipe) == (variant == "litert-x86"), (variant, e.recipe)
