"""Per-op checks on tiny models built in code.

Every case is a one- or two-op model (versions set by the workbench's own version rules, as the
converter would).  Each runs three ways and all must agree:
  * our fast kernels vs our numpy references (tight: the same arithmetic, other order);
  * our fast kernels vs ai-edge-litert's builtin kernels (run in a child process);
  * for a few ops, values worked out by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import litert_runner, quantized_cases
from helpers.interpreter_ops_cases import conv, rng_for, window_out
from helpers.quantized_cases import litert_outputs, run_ours
from workbench.schema import (
    ActivationFunctionType as Act,
)
from workbench.schema import (
    AddOptions,
    ConcatenationOptions,
    Conv2DOptions,
    DepthToSpaceOptions,
    DepthwiseConv2DOptions,
    DivOptions,
    FullyConnectedOptions,
    LeakyReluOptions,
    ModelBuilder,
    MulOptions,
    PackOptions,
    Padding,
    Pool2DOptions,
    ReducerOptions,
    ReshapeOptions,
    ResizeBilinearOptions,
    ResizeNearestNeighborOptions,
    ShapeOptions,
    SoftmaxOptions,
    SqueezeOptions,
    StridedSliceOptions,
    SubOptions,
    TensorType,
    TransposeConvOptions,
)
from workbench.schema import (
    BuiltinOperator as B,
)

TOL = 1e-4


# ------------------------------------------------------------------------------------------------
# case builders: each returns (model, {input name: array})


def unary(op, shape=(2, 5, 7), options=None, lo=-4.0, hi=4.0):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", shape)
        y = b.tensor("y", shape)
        b.op(op, [x], [y], options)
        b.output(y)
        return b, {"x": rng.uniform(lo, hi, shape).astype(np.float32)}
    return build


def binary(op, sa, sb, options=None, positive_b=False):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("a", sa)
        bv = rng.uniform(0.5, 2.0, sb) if positive_b else rng.uniform(-2, 2, sb)
        y_in = b.input("b", sb)
        out = tuple(np.broadcast_shapes(sa, sb))
        y = b.tensor("y", out)
        b.op(op, [x, y_in], [y], options)
        b.output(y)
        return b, {"a": rng.uniform(-2, 2, sa).astype(np.float32), "b": bv.astype(np.float32)}
    return build


def depthwise(x_shape, k, mult=1, stride=(1, 1), padding=Padding.SAME, dilation=(1, 1), act=Act.NONE):
    def build(name):
        rng = rng_for(name)
        c = x_shape[3]
        b = ModelBuilder()
        x = b.input("x", x_shape)
        w = b.constant("w", rng.standard_normal((1, k[0], k[1], c * mult)).astype(np.float32))
        bias_t = b.constant("bias", rng.standard_normal(c * mult).astype(np.float32))
        oh = window_out(padding, x_shape[1], k[0], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], k[1], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, c * mult))
        b.op(B.DEPTHWISE_CONV_2D, [x, w, bias_t], [y], DepthwiseConv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], depth_multiplier=mult,
            fused_activation_function=act, dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        return b, {"x": rng.uniform(-1, 1, x_shape).astype(np.float32)}
    return build


def pool(op, x_shape, f, stride, padding, act=Act.NONE):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape)
        oh = window_out(padding, x_shape[1], f[0], stride[0])
        ow = window_out(padding, x_shape[2], f[1], stride[1])
        y = b.tensor("y", (x_shape[0], oh, ow, x_shape[3]))
        b.op(op, [x], [y], Pool2DOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                         filter_height=f[0], filter_width=f[1], fused_activation_function=act))
        b.output(y)
        return b, {"x": rng.uniform(-3, 3, x_shape).astype(np.float32)}
    return build


def fully_connected(x_shape, units, bias=True, keep=False, act=Act.NONE, no_bias_slot=False):
    def build(name):
        rng = rng_for(name)
        k = x_shape[-1]
        b = ModelBuilder()
        x = b.input("x", x_shape)
        w = b.constant("w", rng.standard_normal((units, k)).astype(np.float32))
        ins = [x, w]
        if bias:
            ins.append(b.constant("bias", rng.standard_normal(units).astype(np.float32)))
        elif not no_bias_slot:
            ins.append(-1)
        out = tuple(x_shape[:-1]) + (units,) if keep else (math.prod(x_shape) // k, units)
        y = b.tensor("y", out)
        b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act, keep_num_dims=keep))
        b.output(y)
        return b, {"x": rng.uniform(-1, 1, x_shape).astype(np.float32)}
    return build


def with_const(op, x_shape, const, out_shape, options=None, const_dtype=np.int32, extra=()):
    """op(x, const, *extra consts)."""
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape)
        c = b.constant("c", np.asarray(const, const_dtype))
        more = [b.constant(f"c{i}", np.asarray(v[0], v[1])) for i, v in enumerate(extra)]
        y = b.tensor("y", out_shape)
        b.op(op, [x, c, *more], [y], options)
        b.output(y)
        return b, {"x": rng.uniform(-2, 2, x_shape).astype(np.float32)}
    return build


def strided_slice(x_shape, begin, end, strides, out_shape, **masks):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape)
        ins = [x] + [b.constant(n, np.asarray(v, np.int32)) for n, v in (("begin", begin), ("end", end),
                                                                          ("strides", strides))]
        y = b.tensor("y", out_shape)
        b.op(B.STRIDED_SLICE, ins, [y], StridedSliceOptions(**masks))
        b.output(y)
        return b, {"x": rng.uniform(-2, 2, x_shape).astype(np.float32)}
    return build


def concat(shapes, axis, act=Act.NONE):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        ins = [b.input(f"x{i}", s) for i, s in enumerate(shapes)]
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        y = b.tensor("y", out)
        b.op(B.CONCATENATION, ins, [y], ConcatenationOptions(axis=axis, fused_activation_function=act))
        b.output(y)
        return b, {f"x{i}": rng.uniform(-8, 8, s).astype(np.float32) for i, s in enumerate(shapes)}
    return build


def transpose_conv(x_shape, w_shape, out_hw, stride, padding, bias=True, act=Act.NONE):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape)
        out = (x_shape[0], out_hw[0], out_hw[1], w_shape[0])
        shape_t = b.constant("output_shape", np.asarray(out, np.int32))
        w = b.constant("w", rng.standard_normal(w_shape).astype(np.float32))
        ins = [shape_t, w, x]
        if bias:
            ins.append(b.constant("bias", rng.standard_normal(w_shape[0]).astype(np.float32)))
        y = b.tensor("y", out)
        b.op(B.TRANSPOSE_CONV, ins, [y], TransposeConvOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                                              fused_activation_function=act))
        b.output(y)
        return b, {"x": rng.uniform(-1, 1, x_shape).astype(np.float32)}
    return build


def dequantize_const(kind):
    """DEQUANTIZE of a constant followed by ADD with the input, so the node is folded."""
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        shape = (3, 4)
        x = b.input("x", shape)
        if kind == "float16":
            c = b.constant("q", rng.uniform(-3, 3, shape).astype(np.float16))
        elif kind == "int8":
            c = b.constant("q", rng.integers(-128, 127, shape).astype(np.int8),
                           quantization={"scale": 0.05, "zero_point": 3})
        elif kind == "uint8":
            c = b.constant("q", rng.integers(0, 255, shape).astype(np.uint8),
                           quantization={"scale": 0.02, "zero_point": 128})
        else:  # per-channel int8 along axis 0
            c = b.constant("q", rng.integers(-127, 127, shape).astype(np.int8),
                           quantization={"scale": [0.1, 0.2, 0.05], "zero_point": [0, 0, 0], "quantized_dimension": 0})
        d = b.tensor("d", shape)
        y = b.tensor("y", shape)
        b.op(B.DEQUANTIZE, [c], [d])
        b.op(B.ADD, [x, d], [y], AddOptions())
        b.output(y)
        return b, {"x": rng.uniform(-1, 1, shape).astype(np.float32)}
    return build


def dequantize_input():
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", (2, 6), np.int8, quantization={"scale": 0.125, "zero_point": -4})
        y = b.tensor("y", (2, 6))
        b.op(B.DEQUANTIZE, [x], [y])
        b.output(y)
        return b, {"x": rng.integers(-128, 127, (2, 6)).astype(np.int8)}
    return build


def mobilenet_head():
    """SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE, the shape arithmetic at the end of MobileNet."""
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", (1, 1, 1, 10))
        s = b.tensor("s", (4,), np.int32)
        b.op(B.SHAPE, [x], [s], ShapeOptions(out_type=TensorType.INT32))
        begin, end, step = (b.constant(n, np.asarray(v, np.int32)) for n, v in (("b", [0]), ("e", [1]), ("st", [1])))
        n = b.tensor("n", (), np.int32)
        b.op(B.STRIDED_SLICE, [s, begin, end, step], [n], StridedSliceOptions(shrink_axis_mask=1))
        # a scalar constant (ModelBuilder.constant would make it 1-D)
        minus1 = b.tensor("m1", (), np.int32, buffer=b.add_buffer(np.asarray(-1, "<i4").tobytes()))
        shape = b.tensor("shape", (2,), np.int32)
        b.op(B.PACK, [n, minus1], [shape], PackOptions(values_count=2, axis=0))
        y = b.tensor("y", (1, 10))
        b.op(B.RESHAPE, [x, shape], [y])
        z = b.tensor("z", (1, 10))
        b.op(B.SOFTMAX, [y], [z], SoftmaxOptions(beta=1.0))
        b.output(z)
        return b, {"x": rng.uniform(-3, 3, (1, 1, 1, 10)).astype(np.float32)}
    return build


def resize(op, x_shape, size, options):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape)
        s = b.constant("size", np.asarray(size, np.int32))
        y = b.tensor("y", (x_shape[0], size[0], size[1], x_shape[3]))
        b.op(op, [x, s], [y], options)
        b.output(y)
        return b, {"x": rng.uniform(-2, 2, x_shape).astype(np.float32)}
    return build


def prelu(x_shape, alpha_shape):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape)
        a = b.constant("alpha", rng.uniform(0, 0.5, alpha_shape).astype(np.float32))
        y = b.tensor("y", x_shape)
        b.op(B.PRELU, [x, a], [y])
        b.output(y)
        return b, {"x": rng.uniform(-2, 2, x_shape).astype(np.float32)}
    return build


def reshape_options():
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", (2, 3, 4))
        y = b.tensor("y", (6, 4))
        b.op(B.RESHAPE, [x], [y], ReshapeOptions(new_shape=(-1, 4)))
        b.output(y)
        return b, {"x": rng.uniform(-2, 2, (2, 3, 4)).astype(np.float32)}
    return build


S, V = Padding.SAME, Padding.VALID
CASES = {
    # convolutions
    "conv_1x1": conv((1, 6, 5, 8), (4, 1, 1, 8)),
    "conv_1x1_stride2_relu6": conv((1, 7, 7, 8), (5, 1, 1, 8), stride=(2, 2), act=Act.RELU6),
    "conv_3x3_same": conv((2, 9, 8, 3), (6, 3, 3, 3), act=Act.RELU),
    "conv_3x3_valid_stride2": conv((1, 11, 10, 4), (5, 3, 3, 4), stride=(2, 2), padding=V),
    "conv_same_stride2_even": conv((1, 8, 8, 3), (4, 3, 3, 3), stride=(2, 2)),
    "conv_5x3_stride_2x1": conv((1, 9, 7, 2), (3, 5, 3, 2), stride=(2, 1), act=Act.RELU_N1_TO_1),
    "conv_dilation_2": conv((1, 12, 11, 3), (4, 3, 3, 3), dilation=(2, 2)),
    "conv_dilation_valid": conv((1, 12, 11, 3), (4, 3, 2, 3), dilation=(2, 3), padding=V),
    "conv_no_bias": conv((1, 5, 5, 3), (2, 3, 3, 3), bias=False),
    "conv_grouped_v6": conv((1, 6, 6, 8), (6, 3, 3, 4)),
    # depthwise
    "depthwise_3x3": depthwise((1, 8, 9, 6), (3, 3), act=Act.RELU6),
    "depthwise_stride2": depthwise((1, 9, 9, 5), (3, 3), stride=(2, 2)),
    "depthwise_valid_5x5": depthwise((2, 10, 9, 3), (5, 5), padding=V),
    "depthwise_multiplier_3": depthwise((1, 7, 6, 4), (3, 3), mult=3),
    "depthwise_dilation_2_v2": depthwise((1, 11, 10, 4), (3, 3), dilation=(2, 2)),
    "depthwise_dilation_stride": depthwise((1, 13, 12, 2), (3, 2), stride=(2, 1), dilation=(1, 3), mult=2),
    # pooling
    "max_pool_2x2": pool(B.MAX_POOL_2D, (1, 8, 8, 3), (2, 2), (2, 2), V),
    "max_pool_3x3_same": pool(B.MAX_POOL_2D, (2, 7, 9, 4), (3, 3), (2, 2), S, act=Act.RELU),
    "avg_pool_same_edges": pool(B.AVERAGE_POOL_2D, (1, 7, 6, 3), (3, 3), (2, 2), S),
    "avg_pool_valid": pool(B.AVERAGE_POOL_2D, (1, 8, 8, 2), (4, 4), (4, 4), V, act=Act.RELU6),
    "avg_pool_global": pool(B.AVERAGE_POOL_2D, (1, 7, 7, 8), (7, 7), (1, 1), V),
    # fully connected
    "fc": fully_connected((3, 10), 4, act=Act.RELU),
    "fc_flatten": fully_connected((2, 3, 4), 5),
    "fc_keep_num_dims_v5": fully_connected((2, 3, 4), 5, keep=True),
    "fc_no_bias_v6": fully_connected((2, 6), 3, bias=False, no_bias_slot=True),
    "fc_bias_slot_minus1": fully_connected((2, 6), 3, bias=False),
    # elementwise binary
    "add_broadcast_relu": binary(B.ADD, (2, 3, 4), (4,), AddOptions(fused_activation_function=Act.RELU)),
    "add_same": binary(B.ADD, (2, 3), (2, 3)),
    "sub_broadcast": binary(B.SUB, (1, 3, 1, 4), (2, 1, 5, 1), SubOptions()),
    "sub_rank5_v3": binary(B.SUB, (2, 1, 3, 1, 2), (1, 2, 1, 4, 1), SubOptions()),
    "mul_broadcast_relu6": binary(B.MUL, (2, 4, 3), (1, 3), MulOptions(fused_activation_function=Act.RELU6)),
    "div": binary(B.DIV, (3, 4), (3, 1), DivOptions(), positive_b=True),
    # activations
    "relu": unary(B.RELU),
    "relu6": unary(B.RELU6, lo=-3, hi=9),
    "logistic": unary(B.LOGISTIC, lo=-20, hi=20),
    "tanh": unary(B.TANH),
    "hard_swish": unary(B.HARD_SWISH, lo=-5, hi=5),
    "leaky_relu": unary(B.LEAKY_RELU, options=LeakyReluOptions(alpha=0.2)),
    "softmax_beta": unary(B.SOFTMAX, shape=(3, 6), options=SoftmaxOptions(beta=0.7), lo=-5, hi=5),
    "prelu_channel": prelu((1, 4, 4, 3), (1, 1, 3)),
    "prelu_full": prelu((2, 5), (2, 5)),
    # shape ops
    "concat_axis3": concat([(1, 2, 3, 2), (1, 2, 3, 5)], 3),
    "concat_axis_neg": concat([(2, 3), (2, 1), (2, 2)], -1),
    "reshape_options": reshape_options(),
    "reshape_tensor": with_const(B.RESHAPE, (2, 3, 4), [4, -1], (4, 6)),
    "mobilenet_head": mobilenet_head(),
    "pad": with_const(B.PAD, (1, 3, 4, 2), [[0, 0], [1, 2], [2, 1], [0, 0]], (1, 6, 7, 2)),
    "padv2": with_const(B.PADV2, (2, 3), [[1, 0], [0, 2]], (3, 5), extra=((np.float32(-7.5), np.float32),)),
    "pad_rank5_v4": with_const(B.PAD, (1, 2, 2, 2, 1), [[0, 0], [1, 0], [0, 1], [1, 1], [0, 0]], (1, 3, 3, 4, 1)),
    "mean_hw_keep": with_const(B.MEAN, (2, 5, 4, 3), [1, 2], (2, 1, 1, 3), ReducerOptions(keep_dims=True)),
    "mean_last": with_const(B.MEAN, (2, 5, 4), [-1], (2, 5), ReducerOptions(keep_dims=False)),
    "transpose": with_const(B.TRANSPOSE, (2, 3, 4), [2, 0, 1], (4, 2, 3)),
    "squeeze": unary(B.SQUEEZE, shape=(1, 3, 1, 2), options=SqueezeOptions(squeeze_dims=(0, 2))),
    "depth_to_space": unary(B.DEPTH_TO_SPACE, shape=(1, 2, 3, 8), options=DepthToSpaceOptions(block_size=2)),
    "strided_slice_masks": strided_slice((3, 8, 5), [1, 1, 0], [3, -1, 4], [1, 2, 1], (2, 3, 5),
                                         end_mask=4),
    "strided_slice_negative": strided_slice((6, 7), [-1, 5], [0, 0], [-2, -2], (3, 3), end_mask=0),
    "strided_slice_shrink": strided_slice((4, 5, 3), [2, 0, 1], [3, 5, 2], [1, 1, 1], (5,),
                                          begin_mask=2, shrink_axis_mask=5),
    # resize
    "resize_bilinear": resize(B.RESIZE_BILINEAR, (1, 4, 5, 3), (8, 7), ResizeBilinearOptions()),
    "resize_bilinear_align_corners": resize(B.RESIZE_BILINEAR, (1, 4, 5, 2), (7, 9),
                                            ResizeBilinearOptions(align_corners=True)),
    "resize_bilinear_half_pixel_v3": resize(B.RESIZE_BILINEAR, (2, 5, 4, 2), (10, 8),
                                            ResizeBilinearOptions(half_pixel_centers=True)),
    "resize_bilinear_down": resize(B.RESIZE_BILINEAR, (1, 9, 8, 2), (4, 3),
                                   ResizeBilinearOptions(half_pixel_centers=True)),
    "resize_nearest": resize(B.RESIZE_NEAREST_NEIGHBOR, (1, 4, 5, 3), (8, 7), ResizeNearestNeighborOptions()),
    "resize_nearest_align": resize(B.RESIZE_NEAREST_NEIGHBOR, (1, 4, 5, 3), (7, 6),
                                   ResizeNearestNeighborOptions(align_corners=True)),
    "resize_nearest_half_pixel": resize(B.RESIZE_NEAREST_NEIGHBOR, (1, 5, 4, 2), (3, 9),
                                        ResizeNearestNeighborOptions(half_pixel_centers=True)),
    # transpose conv
    "transpose_conv_same_s2": transpose_conv((1, 4, 5, 3), (2, 3, 3, 3), (8, 10), (2, 2), S),
    "transpose_conv_valid_s2": transpose_conv((1, 4, 4, 2), (3, 3, 3, 2), (9, 9), (2, 2), V),
    "transpose_conv_no_bias_v1": transpose_conv((2, 3, 3, 4), (2, 4, 4, 4), (6, 6), (2, 2), S, bias=False),
    "transpose_conv_relu_v4": transpose_conv((1, 5, 4, 2), (3, 2, 3, 2), (5, 4), (1, 1), S, act=Act.RELU),
    # dequantize
    "dequantize_float16": dequantize_const("float16"),
    "dequantize_int8": dequantize_const("int8"),
    "dequantize_uint8": dequantize_const("uint8"),
    "dequantize_per_channel_v5": dequantize_const("per_channel"),
    "dequantize_int8_input": dequantize_input(),
}


def build_case(name):
    return quantized_cases.build(CASES, name)


def assert_close(ours, theirs, tol=TOL, what=""):
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape, f"{what} output {k}: shape {a.shape} vs {b.shape}"
        if a.size == 0:
            continue
        err = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())
        bound = tol * (float(np.abs(b).max()) + 1.0)
        assert err <= bound, f"{what} output {k}: max error {err:.3g} > {bound:.3g}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_kernels_match_numpy_references(case):
    model, inputs = build_case(case)
    assert_close(run_ours(model, inputs), run_ours(model, inputs, reference=True), 1e-5, case)


# ------------------------------------------------------------------------------------------------
# against ai-edge-litert: all cases run once per session, in parallel child processes


@pytest.fixture(scope="session")
def litert_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_ops"), CASES, build_case, workers=4)


# cases this interpreter runs but TFLite's builtin kernels refuse (the message litert gives)
LITERT_REFUSES = {
    "conv_no_bias": "Tensor at index 2 was optional but was expected",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernels_match_litert(case, litert_results):
    result = litert_results[case]
    if case in LITERT_REFUSES:
        assert not result.ok and LITERT_REFUSES[case] in result.stderr, result.describe()
        return
    model, inputs = build_case(case)
    assert_close(run_ours(model, inputs), litert_outputs(result), TOL, case)


# ------------------------------------------------------------------------------------------------
# values by hand


def test_average_pool_same_counts_only_image_taps():
    b = ModelBuilder()
    x = b.input("x", (1, 2, 2, 1))
    y = b.tensor("y", (1, 1, 1, 1))
    b.op(B.AVERAGE_POOL_2D, [x], [y], Pool2DOptions(padding=S, stride_h=2, stride_w=2, filter_height=3,
                                                    filter_width=3))
    b.output(y)
    # SAME, 2x2 input, 3x3 window, stride 2: total padding 1, all at the end; 4 taps in the image
    out, = run_ours(b.build(), {"x": np.array([1, 2, 3, 6], np.float32).reshape(1, 2, 2, 1)})
    assert out.reshape(-1).tolist() == [3.0]


def test_conv_same_padding_puts_the_odd_pixel_at_the_end():
    b = ModelBuilder()
    x = b.input("x", (1, 1, 4, 1))
    w = b.constant("w", np.array([1, 10, 100], np.float32).reshape(1, 1, 3, 1))
    y = b.tensor("y", (1, 1, 2, 1))
    b.op(B.CONV_2D, [x, w, -1], [y], Conv2DOptions(padding=S, stride_w=2, stride_h=1))
    b.output(y)
    # out 2, total padding (2-1)*2+3-4 = 1 → 0 before, 1 after: windows [x0 x1 x2], [x2 x3 pad]
    out, = run_ours(b.build(), {"x": np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 4, 1)})
    assert out.reshape(-1).tolist() == [1 + 20 + 300, 3 + 40]


def test_densify_expands_a_csr_tensor():
    from helpers.builders import feature_model

    model = feature_model()
    sg = model.subgraphs[0]
    idx = next(i for i, t in enumerate(sg.tensors) if t.name == "sparse")
    from workbench.interpreter.kernels.densify import dense_positions, densify

    t = sg.tensors[idx]
    flat, pos, levels = dense_positions(tuple(t.shape), t.sparsity)
    dense = densify(np.array([1.0, 2.0, 3.0], np.float32), tuple(t.shape), t.sparsity)
    # rows 0,1,3 hold one value each at columns 0, 2, 3 (segments 0,1,2,2,3; indices 0,2,3)
    expected = np.zeros((4, 4), np.float32)
    expected[0, 0], expected[1, 2], expected[3, 3] = 1, 2, 3
    np.testing.assert_array_equal(dense, expected)
    assert levels == ("dim 0: dense 4", "dim 1: csr (3 indices)")


def test_concatenation_refuses_a_fused_activation_like_tflite():
    from workbench.errors import UnsupportedOpError

    builder, inputs = concat([(1, 2), (1, 3)], 1, Act.RELU6)("concat_relu6")
    with pytest.raises(UnsupportedOpError, match="only accepts NONE"):
        run_ours(builder.build(), inputs)


def test_case_versions_are_the_converters():
    model, _ = build_case("depthwise_dilation_2_v2")
    assert model.operator_codes[0].version == 2
    model, _ = build_case("conv_grouped_v6")
    assert model.operator_codes[0].version == 6
    model, _ = build_case("fc_no_bias_v6")
    assert model.operator_codes[0].version == 6
