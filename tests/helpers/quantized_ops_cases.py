"""The int8 case table of tests/interpreter/quant/test_quantized_ops.py (models built per case name, with
their inputs), shared with the kernel tests (tests/interpreter/kernels/), the fast-path tests and the
explain tests, which run the same cases by name."""

from __future__ import annotations

import math
import zlib

import numpy as np

from helpers import quantized_cases
from helpers.quantized_cases import assert_same
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import (
    AddOptions,
    ConcatenationOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    ModelBuilder,
    MulOptions,
    Padding,
    Pool2DOptions,
    ReducerOptions,
    SoftmaxOptions,
    SubOptions,
)
from workbench.schema import BuiltinOperator as B

S, V = Padding.SAME, Padding.VALID


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def window_out(padding, size, k, s, d=1):
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == Padding.SAME else (size - eff) // s + 1


def qx(rng, shape):
    return rng.integers(-128, 128, shape).astype(np.int8)


def q(scale, zp, dim=0):
    return {"scale": scale, "zero_point": zp, "quantized_dimension": dim}


def out_scale_for(in_s, w_s, k, spread=0.25):
    """A plausible output scale: the accumulator's typical magnitude mapped onto int8."""
    return float(in_s * np.max(w_s) * 127 * 128 * math.sqrt(k) * spread / 127)


def conv_i8(x_shape, w_shape, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, per_channel=True,
            in_zp=-3, out_zp=5, bias=True):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        in_s = 0.02
        o = w_shape[0]
        w_s = rng.uniform(0.002, 0.01, o) if per_channel else np.array([0.006])
        x = b.input("x", x_shape, np.int8, quantization=q(in_s, in_zp))
        w = b.constant("w", rng.integers(-127, 128, w_shape).astype(np.int8),
                       quantization=q(w_s.tolist(), [0] * len(w_s), 0))
        bs = (np.float32(in_s) * w_s.astype(np.float32)).astype(np.float64)
        bias_t = b.constant("bias", rng.integers(-3000, 3000, o).astype(np.int32),
                            quantization=q(bs.tolist(), [0] * len(bs), 0)) if bias else -1
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1], dilation[1])
        k = w_shape[1] * w_shape[2] * w_shape[3]
        y = b.tensor("y", (x_shape[0], oh, ow, o), np.int8, quantization=q(out_scale_for(in_s, w_s, k), out_zp))
        b.op(B.CONV_2D, [x, w, bias_t], [y], Conv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act,
            dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        return b, {"x": qx(rng, x_shape)}
    return build


def depthwise_i8(x_shape, k, mult=1, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, per_channel=True,
                 in_zp=7, out_zp=-9):
    def build(name):
        rng = rng_for(name)
        c = x_shape[3]
        co = c * mult
        b = ModelBuilder()
        in_s = 0.03
        w_s = rng.uniform(0.002, 0.02, co) if per_channel else np.array([0.01])
        x = b.input("x", x_shape, np.int8, quantization=q(in_s, in_zp))
        w = b.constant("w", rng.integers(-127, 128, (1, k[0], k[1], co)).astype(np.int8),
                       quantization=q(w_s.tolist(), [0] * len(w_s), 3))
        bs = (np.float32(in_s) * w_s.astype(np.float32)).astype(np.float64)
        bias_t = b.constant("bias", rng.integers(-2000, 2000, co).astype(np.int32),
                            quantization=q(bs.tolist(), [0] * len(bs), 0))
        oh = window_out(padding, x_shape[1], k[0], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], k[1], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, co), np.int8,
                     quantization=q(out_scale_for(in_s, w_s, k[0] * k[1]), out_zp))
        b.op(B.DEPTHWISE_CONV_2D, [x, w, bias_t], [y], DepthwiseConv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], depth_multiplier=mult,
            fused_activation_function=act, dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        return b, {"x": qx(rng, x_shape)}
    return build


def fc_i8(x_shape, units, act=Act.NONE, keep=False, bias=True, per_channel=False, in_zp=-20, out_zp=3):
    def build(name):
        rng = rng_for(name)
        k = x_shape[-1]
        b = ModelBuilder()
        in_s = 0.05
        w_s = rng.uniform(0.002, 0.01, units) if per_channel else np.array([0.004])
        x = b.input("x", x_shape, np.int8, quantization=q(in_s, in_zp))
        w = b.constant("w", rng.integers(-127, 128, (units, k)).astype(np.int8),
                       quantization=q(w_s.tolist(), [0] * len(w_s), 0))
        ins = [x, w]
        if bias:
            bs = (np.float32(in_s) * w_s.astype(np.float32)).astype(np.float64)
            ins.append(b.constant("bias", rng.integers(-5000, 5000, units).astype(np.int32),
                                  quantization=q(bs.tolist(), [0] * len(bs), 0)))
        out = tuple(x_shape[:-1]) + (units,) if keep else (math.prod(x_shape) // k, units)
        y = b.tensor("y", out, np.int8, quantization=q(out_scale_for(in_s, w_s, k), out_zp))
        b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act, keep_num_dims=keep))
        b.output(y)
        return b, {"x": qx(rng, x_shape)}
    return build


def quantize_f32(shape=(2, 3, 7), scale=0.0173, zp=-11):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", shape)
        y = b.tensor("y", shape, np.int8, quantization=q(scale, zp))
        b.op(B.QUANTIZE, [x], [y])
        b.output(y)
        xs = rng.uniform(-2.5, 2.5, shape).astype(np.float32)
        # exact ties: (k + 0.5) * scale
        xs.reshape(-1)[:10] = ((np.arange(10) - 5 + 0.5) * np.float32(scale)).astype(np.float32)
        xs.reshape(-1)[-2:] = (np.array([-2.5, 2.5]) * np.float32(scale)).astype(np.float32)   # in the tail
        return b, {"x": xs}
    return build


def requantize(shape=(3, 17), scales=(0.05, 0.0213), zps=(4, -7)):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", shape, np.int8, quantization=q(scales[0], zps[0]))
        y = b.tensor("y", shape, np.int8, quantization=q(scales[1], zps[1]))
        b.op(B.QUANTIZE, [x], [y])
        b.output(y)
        return b, {"x": qx(rng, shape)}
    return build


def dequantize(shape=(4, 9), scale=0.0371, zp=12):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", shape, np.int8, quantization=q(scale, zp))
        y = b.tensor("y", shape)
        b.op(B.DEQUANTIZE, [x], [y])
        b.output(y)
        return b, {"x": qx(rng, shape)}
    return build


def binary_i8(op, sa, sb, options, qa=(0.05, 3), qb=(0.02, -7), qo=(0.06, -1)):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("a", sa, np.int8, quantization=q(*qa))
        y = b.input("b", sb, np.int8, quantization=q(*qb))
        out = tuple(np.broadcast_shapes(sa, sb))
        o = b.tensor("y", out, np.int8, quantization=q(*qo))
        b.op(op, [x, y], [o], options)
        b.output(o)
        return b, {"a": qx(rng, sa), "b": qx(rng, sb)}
    return build


def pool_i8(op, x_shape, f, stride, padding, act=Act.NONE, qp=(0.04, -5)):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape, np.int8, quantization=q(*qp))
        oh = window_out(padding, x_shape[1], f[0], stride[0])
        ow = window_out(padding, x_shape[2], f[1], stride[1])
        y = b.tensor("y", (x_shape[0], oh, ow, x_shape[3]), np.int8, quantization=q(*qp))
        b.op(op, [x], [y], Pool2DOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                         filter_height=f[0], filter_width=f[1], fused_activation_function=act))
        b.output(y)
        return b, {"x": qx(rng, x_shape)}
    return build


def unary_i8(op, shape, qi, qo, options=None):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", shape, np.int8, quantization=q(*qi))
        y = b.tensor("y", shape, np.int8, quantization=q(*qo))
        b.op(op, [x], [y], options)
        b.output(y)
        return b, {"x": qx(rng, shape)}
    return build


def with_const_i8(op, x_shape, const, out_shape, options=None, qp=(0.03, 9), qo=None):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape, np.int8, quantization=q(*qp))
        c = b.constant("c", np.asarray(const, np.int32))
        y = b.tensor("y", out_shape, np.int8, quantization=q(*(qo or qp)))
        b.op(op, [x, c], [y], options)
        b.output(y)
        return b, {"x": qx(rng, x_shape)}
    return build


def concat_i8(shapes, axis, qp=(0.07, 2)):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        ins = [b.input(f"x{i}", s, np.int8, quantization=q(*qp)) for i, s in enumerate(shapes)]
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        y = b.tensor("y", out, np.int8, quantization=q(*qp))
        b.op(B.CONCATENATION, ins, [y], ConcatenationOptions(axis=axis))
        b.output(y)
        return b, {f"x{i}": qx(rng, s) for i, s in enumerate(shapes)}
    return build


def hard_swish_all_values(qi, qo):
    """Every int8 value, then -47..-33 again: with these scales x = -40 is where a NEON-style rounding
    (ties up) and the reference rounding (ties away) disagree; litert gives the reference result."""
    def build(name):
        b = ModelBuilder()
        x = b.input("x", (1, 256 + 15), np.int8, quantization=q(*qi))
        y = b.tensor("y", (1, 256 + 15), np.int8, quantization=q(*qo))
        b.op(B.HARD_SWISH, [x], [y])
        b.output(y)
        return b, {"x": np.concatenate([np.arange(-128, 128), np.arange(-47, -32)]).astype(np.int8).reshape(1, -1)}
    return build


SM = (1.0 / 256.0, -128)


def resize_i8(x_shape, size, **opts):
    def build(name):
        from workbench.schema import ResizeBilinearOptions
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", x_shape, np.int8, quantization=q(0.05, 3))
        sz = b.constant("size", np.asarray(size, np.int32))
        y = b.tensor("y", (x_shape[0], size[0], size[1], x_shape[3]), np.int8, quantization=q(0.05, 3))
        b.op(B.RESIZE_BILINEAR, [x, sz], [y], ResizeBilinearOptions(**opts))
        b.output(y)
        return b, {"x": qx(rng, x_shape)}
    return build


CASES = {
    "add_same_shape": binary_i8(B.ADD, (2, 3, 8), (2, 3, 8), AddOptions()),
    "add_broadcast_relu": binary_i8(B.ADD, (2, 3, 8), (8,), AddOptions(fused_activation_function=Act.RELU)),
    "add_equal_scales": binary_i8(B.ADD, (1, 5, 5, 16), (1, 5, 5, 16), AddOptions(), qa=(0.1, 0), qb=(0.1, 0),
                                  qo=(0.1, 0)),
    "sub_broadcast": binary_i8(B.SUB, (1, 3, 1, 4), (2, 1, 5, 1), SubOptions()),
    "sub_relu6": binary_i8(B.SUB, (4, 8), (4, 8), SubOptions(fused_activation_function=Act.RELU6), qo=(0.03, -20)),
    "mul_same": binary_i8(B.MUL, (3, 16), (3, 16), MulOptions(), qo=(0.0011, 4)),
    "mul_broadcast_relu": binary_i8(B.MUL, (2, 4, 3), (1, 3), MulOptions(fused_activation_function=Act.RELU),
                                    qo=(0.0009, -30)),
    "max_pool_2x2": pool_i8(B.MAX_POOL_2D, (1, 8, 8, 3), (2, 2), (2, 2), V),
    "max_pool_3x3_same_relu": pool_i8(B.MAX_POOL_2D, (2, 7, 9, 4), (3, 3), (2, 2), S, act=Act.RELU),
    "avg_pool_same_edges": pool_i8(B.AVERAGE_POOL_2D, (1, 7, 6, 16), (3, 3), (2, 2), S),
    "avg_pool_valid_relu6": pool_i8(B.AVERAGE_POOL_2D, (1, 8, 8, 2), (4, 4), (4, 4), V, act=Act.RELU6),
    "avg_pool_global": pool_i8(B.AVERAGE_POOL_2D, (1, 7, 7, 24), (7, 7), (1, 1), V),
    "softmax_2d": unary_i8(B.SOFTMAX, (3, 10), (0.1, 5), SM, SoftmaxOptions(beta=1.0)),
    "softmax_beta_4d": unary_i8(B.SOFTMAX, (1, 2, 3, 37), (0.05, -3), SM, SoftmaxOptions(beta=0.7)),
    "logistic": unary_i8(B.LOGISTIC, (4, 64), (0.06, 10), SM),
    "logistic_coarse": unary_i8(B.LOGISTIC, (2, 128), (0.2, -50), SM),
    "tanh": unary_i8(B.TANH, (4, 64), (0.03, -4), (1.0 / 128.0, 0)),
    "hard_swish": unary_i8(B.HARD_SWISH, (3, 37), (0.05, -10), (0.03, -40)),
    "hard_swish_big_range": unary_i8(B.HARD_SWISH, (2, 64), (0.2, 20), (0.1, -100)),
    "hard_swish_small_range": unary_i8(B.HARD_SWISH, (5, 16), (0.01, 0), (0.006, -60)),
    "hard_swish_all_values": hard_swish_all_values((0.05, -10), (0.03, -40)),
    "hard_swish_all_values_2": hard_swish_all_values((0.05, -10), (0.006, -60)),
    "relu": unary_i8(B.RELU, (3, 40), (0.05, -10), (0.03, -128)),
    "relu6": unary_i8(B.RELU6, (3, 40), (0.05, -10), (0.03, -128)),
    "concat_axis3": concat_i8([(1, 2, 3, 2), (1, 2, 3, 5)], 3),
    "concat_axis1": concat_i8([(2, 3), (2, 1), (2, 2)], 1),
    "resize_bilinear_up": resize_i8((1, 4, 5, 3), (8, 7)),
    "resize_bilinear_align_corners": resize_i8((1, 4, 5, 2), (7, 9), align_corners=True),
    "resize_bilinear_half_pixel": resize_i8((2, 5, 4, 2), (10, 8), half_pixel_centers=True),
    "resize_bilinear_down_half_pixel": resize_i8((1, 9, 8, 2), (4, 3), half_pixel_centers=True),
    "reshape": with_const_i8(B.RESHAPE, (2, 3, 4), [4, -1], (4, 6)),
    "pad": with_const_i8(B.PAD, (1, 3, 4, 2), [[0, 0], [1, 2], [2, 1], [0, 0]], (1, 6, 7, 2)),
    "mean_hw_keep": with_const_i8(B.MEAN, (2, 5, 4, 24), [1, 2], (2, 1, 1, 24), ReducerOptions(keep_dims=True),
                                  qo=(0.02, -3)),
    "mean_hw_no_keep": with_const_i8(B.MEAN, (1, 3, 3, 40), [1, 2], (1, 40), ReducerOptions(keep_dims=False),
                                     qp=(0.0235294, -128), qo=(0.0114438, -128)),
    "mean_last_axis": with_const_i8(B.MEAN, (2, 5, 12), [-1], (2, 5), ReducerOptions(keep_dims=False),
                                    qo=(0.02, -3)),
    "mean_hw_keep_same_q": with_const_i8(B.MEAN, (1, 6, 6, 40), [1, 2], (1, 1, 1, 40),
                                         ReducerOptions(keep_dims=True)),

    "conv_1x1_per_channel": conv_i8((1, 6, 5, 16), (8, 1, 1, 16)),
    "conv_1x1_per_tensor": conv_i8((1, 6, 5, 16), (8, 1, 1, 16), per_channel=False),
    "conv_3x3_same_relu": conv_i8((1, 9, 8, 3), (6, 3, 3, 3), act=Act.RELU),
    "conv_3x3_valid_stride2": conv_i8((2, 11, 10, 4), (5, 3, 3, 4), stride=(2, 2), padding=V),
    "conv_same_stride2_relu6": conv_i8((1, 8, 8, 3), (4, 3, 3, 3), stride=(2, 2), act=Act.RELU6, in_zp=-128),
    "conv_5x3_stride_2x1_n1to1": conv_i8((1, 9, 7, 2), (3, 5, 3, 2), stride=(2, 1), act=Act.RELU_N1_TO_1),
    "conv_dilation_2": conv_i8((1, 12, 11, 3), (4, 3, 3, 3), dilation=(2, 2), per_channel=False),
    "conv_big_k_float64": conv_i8((1, 5, 5, 256), (4, 3, 3, 256), in_zp=100),
    "depthwise_3x3_relu6": depthwise_i8((1, 8, 9, 6), (3, 3), act=Act.RELU6),
    "depthwise_stride2_per_tensor": depthwise_i8((1, 9, 9, 5), (3, 3), stride=(2, 2), per_channel=False),
    "depthwise_valid_5x5": depthwise_i8((2, 10, 9, 3), (5, 5), padding=V),
    "depthwise_multiplier_3": depthwise_i8((1, 7, 6, 4), (3, 3), mult=3),
    "depthwise_dilation_stride": depthwise_i8((1, 13, 12, 2), (3, 2), stride=(2, 1), dilation=(1, 3), mult=2),
    "fc_relu": fc_i8((3, 10), 4, act=Act.RELU),
    "fc_flatten": fc_i8((2, 3, 8), 5),
    "fc_keep_num_dims": fc_i8((2, 3, 8), 5, keep=True),
    "fc_no_bias": fc_i8((2, 16), 3, bias=False),
    "fc_per_channel": fc_i8((2, 32), 6, per_channel=True),
    "quantize_float_to_int8": quantize_f32(),
    "quantize_requantize": requantize(),
    "quantize_requantize_up": requantize(scales=(0.01, 0.003), zps=(-128, 20)),
    "dequantize_int8": dequantize(),
    "dequantize_int8_long": dequantize(shape=(5, 203), scale=0.0123, zp=-77),
    "quantize_float_to_int8_long": quantize_f32(shape=(3, 331), scale=0.0917, zp=3),
}


def build_case(name):
    return quantized_cases.build(CASES, name)


def assert_equal_all(ours, theirs, what):
    assert_same(ours, theirs, what, float_bits=False)
