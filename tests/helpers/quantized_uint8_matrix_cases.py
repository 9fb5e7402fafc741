"""The uint8 case table of tests/interpreter/quant/test_quantized_uint8_matrix.py, by case name.

Shared with the kernel tests (tests/interpreter/kernels/) and the explain tests, which run the same cases.
"""

from __future__ import annotations

import zlib

import numpy as np

from helpers import quantized_cases
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    ModelBuilder,
    Padding,
    TransposeConvOptions,
)

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
