"""The unrolled 3x3 depthwise kernels of the speed layer (fast/depthwise_conv_2d.py) against the teaching
layer (kernels/depthwise_conv_2d.py), bit for bit, on random small shapes: odd channel counts, stride 2,
dilation, SAME and VALID padding, images smaller than the window; and the choice made at bind."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.op_layers import OpLayers
from helpers.quantized_ops_cases import depthwise_i8
from workbench.interpreter import Interpreter
from workbench.interpreter.fast import depthwise_conv_2d as fast_dw
from workbench.interpreter.kernels import depthwise_conv_2d as dw
from workbench.interpreter.kernels._common import out_size, pad_before
from workbench.schema import ActivationFunctionType as Act

# (N, H, W, C), stride, dilation, padding
SHAPES = [((1, 7, 6, 5), (1, 1), (1, 1), "SAME"), ((2, 9, 8, 3), (2, 2), (1, 1), "SAME"),
          ((1, 8, 9, 17), (2, 1), (1, 1), "VALID"), ((1, 9, 10, 7), (1, 1), (2, 3), "SAME"),
          ((1, 11, 7, 33), (2, 2), (2, 1), "VALID"), ((1, 2, 2, 9), (1, 1), (1, 1), "SAME"),
          ((1, 3, 5, 1), (2, 2), (1, 2), "SAME"), ((1, 12, 12, 16), (1, 2), (1, 1), "SAME")]


def geometry(h, w, stride, dilation, padding):
    code = 1 if padding == "SAME" else 2
    oh, ow = out_size(code, h, 3, stride[0], dilation[0]), out_size(code, w, 3, stride[1], dilation[1])
    return oh, ow, pad_before(stride[0], dilation[0], h, 3, oh)[0], pad_before(stride[1], dilation[1], w, 3, ow)[0]


@pytest.mark.parametrize("shape,stride,dilation,padding", SHAPES)
def test_float_3x3_is_the_teaching_layer_bias_first(shape, stride, dilation, padding):
    n, h, w, c = shape
    rng = np.random.default_rng(c)
    oh, ow, pt, pl = geometry(h, w, stride, dilation, padding)
    x = rng.standard_normal(shape).astype(np.float32)
    filt = rng.standard_normal((1, 3, 3, c)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    d = dw.DepthwiseConv2DData(padding, *stride, *dilation, pt, pl, 1, (n, oh, ow, c), "RELU6", 0.0, 6.0)
    want = dw.depthwise_float(x, filt, bias, d, bias_first=True)
    out = np.full_like(want, np.nan)
    fast_dw.depthwise3x3_rows(x, np.ascontiguousarray(filt[0]), bias, out, *stride, *dilation, pt, pl,
                              np.float32(0.0), np.float32(6.0), 0, n * oh)
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("top_shift", [0, 1])
@pytest.mark.parametrize("shape,stride,dilation,padding", SHAPES)
def test_int8_3x3_is_the_teaching_layer(shape, stride, dilation, padding, top_shift):
    """Shifts up to 0: the narrow requantization (vnni.narrow_requantize); a left shift of 1: the general one."""
    n, h, w, c = shape
    rng = np.random.default_rng(100 + c)
    oh, ow, pt, pl = geometry(h, w, stride, dilation, padding)
    x = rng.integers(-128, 128, shape).astype(np.int8)
    filt = rng.integers(-127, 128, (1, 3, 3, c)).astype(np.int8)
    bias = rng.integers(-5000, 5000, c).astype(np.int32)
    mult = rng.integers(1 << 30, 1 << 31, c).astype(np.int64)
    shift = rng.integers(-9, top_shift + 1, c).astype(np.int64)
    in_zp, out_zp = int(rng.integers(-20, 20)), int(rng.integers(-10, 10))
    d = dw.DepthwiseConv2DInt8Data(
        padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h=dilation[0], dilation_w=dilation[1],
        pad_top=pt, pad_left=pl, depth_multiplier=1, output_shape=(n, oh, ow, c), activation="NONE",
        input_scale=1.0, input_zero_point=in_zp, filter_scale=np.ones(c, np.float32), output_scale=1.0,
        output_zero_point=out_zp, effective_scale=np.ones(c), output_multiplier=mult, output_shift=shift,
        output_activation_min=-128, output_activation_max=127, per_channel=True, vector_channels=c - c % 8)
    want = dw.depthwise_int8(x, filt, bias, d)
    out = np.zeros_like(want)
    fast_dw.depthwise3x3_int8_rows(x, np.ascontiguousarray(filt[0], np.float32), bias.astype(np.int64), mult, shift,
                                   out_zp, -128, 127, True, d.vector_channels, out, *stride, *dilation, pt, pl,
                                   in_zp, 0, n * oh)
    np.testing.assert_array_equal(out, want)


LAYERS = OpLayers({"int8_3x3_c5": depthwise_i8((1, 6, 5, 5), (3, 3), act=Act.RELU6),
                   "int8_3x3_m2": depthwise_i8((1, 6, 5, 3), (3, 3), mult=2),
                   "int8_5x3": depthwise_i8((1, 6, 5, 4), (5, 3))})


@pytest.mark.parametrize("case,kernel", [("int8_3x3_c5", "depthwise3x3_int8_rq"),
                                         ("int8_3x3_m2", "depthwise_int8_rows"),
                                         ("int8_5x3", "depthwise_int8_rows")])
def test_bind_picks_the_3x3_kernel_only_for_3x3_multiplier_1(case, kernel):
    """A depth multiplier of 2 or another filter size falls back to the general loop, and the
    teaching layer computes the same bits either way.  (Where the kernel library's C loop takes a
    multiplier-1 node, these kernels are its fallback: tests/interpreter/fast/test_fast_depthwise_native.py.)"""
    model, feeds = LAYERS.build(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    fn = it._sg(0).plan[0][0]
    if isinstance(fn, fast_dw.Int8Native):
        assert case != "int8_3x3_m2"
        fn = fn.fallback
    assert fn.kernel.__name__ == kernel
    LAYERS.check_layers(case)


def test_int8_3x3_float_sums_are_exact_at_the_extremes():
    """The int8 kernel sums in float32: at the largest products (x − zp = −255, w = −128, nine taps) the
    sums are still exact integers, so the bits are the teaching layer's."""
    c, shape = 19, (1, 5, 5, 19)
    x = np.full(shape, -128, np.int8)
    filt = np.full((1, 3, 3, c), -128, np.int8)
    bias = np.zeros(c, np.int32)
    mult, shift = np.full(c, (1 << 31) - 1, np.int64), np.full(c, -12, np.int64)
    d = dw.DepthwiseConv2DInt8Data(
        padding="SAME", stride_h=1, stride_w=1, dilation_h=1, dilation_w=1, pad_top=1, pad_left=1,
        depth_multiplier=1, output_shape=shape, activation="NONE", input_scale=1.0, input_zero_point=127,
        filter_scale=np.ones(c, np.float32), output_scale=1.0, output_zero_point=0, effective_scale=np.ones(c),
        output_multiplier=mult, output_shift=shift, output_activation_min=-128, output_activation_max=127,
        per_channel=True, vector_channels=16)
    want = dw.depthwise_int8(x, filt, bias, d)
    out = np.zeros_like(want)
    fast_dw.depthwise3x3_int8_rows(x, filt[0].astype(np.float32), bias.astype(np.int64), mult, shift, 0, -128, 127,
                                   True, 16, out, 1, 1, 1, 1, 1, 1, 127, 0, 5)
    np.testing.assert_array_equal(out, want)
    assert len(np.unique(want)) > 1
