"""The sweep-regression case table of tests/interpreter/quant/test_quantized_sweep_regressions.py.

Shared with the kernel and explain tests, which run the same cases.
"""

from __future__ import annotations

import zlib

import numpy as np

from helpers import quantized_cases
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import Conv2DOptions, L2NormOptions, ModelBuilder, Padding, TransposeConvOptions

S, V = Padding.SAME, Padding.VALID
TIES = np.float32([2.5, -2.5, 0.49999997, -0.49999997, 1.5, -0.5, 3.5, 0.5])


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, dim=0):
    scale = np.atleast_1d(scale).tolist()
    return {"scale": scale, "zero_point": [0] * len(scale), "quantized_dimension": dim}


def tconv_hybrid(x_shape, w_shape, out_hw, stride, padding, bias=True, act=Act.NONE, per_channel=True, ties=False):
    def build(name):
        rng = rng_for(name)
        co = w_shape[0]
        b = ModelBuilder()
        x = b.input("x", x_shape)
        out = (x_shape[0], out_hw[0], out_hw[1], co)
        shape_t = b.constant("output_shape", np.asarray(out, np.int32))
        w_s = rng.uniform(0.001, 0.01, co) if per_channel else np.array([0.006])
        w = b.constant("w", rng.integers(-127, 128, w_shape).astype(np.int8), quantization=q(w_s))
        ins = [shape_t, w, x]
        if bias:
            ins.append(b.constant("bias", rng.uniform(-1, 1, co).astype(np.float32)))
        y = b.tensor("y", out)
        b.op(B.TRANSPOSE_CONV, ins, [y], TransposeConvOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                                              fused_activation_function=act))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, x_shape) * 3).astype(np.float32)
        if ties:   # image 0 spans exactly [-128, 127]: scale 1, zero point 0, ties in the vector part and the tail
            row = xv.reshape(x_shape[0], -1)[0]
            row[:] = np.clip(row * 40, -128, 127)
            row[0], row[1] = -128.0, 127.0
            row[2:10] = TIES
            row[-3:] = TIES[:3]
        return b, {"x": xv}
    return build


def window_out(padding, size, k, s, d=1):
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == S else (size - eff) // s + 1


def conv_grouped_hybrid(x_shape, w_shape, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, scales="random",
                        ties=False):
    def build(name):
        rng = rng_for(name)
        o = w_shape[0]
        b = ModelBuilder()
        w_s = {"random": lambda: rng.uniform(0.001, 0.01, o), "one": lambda: np.array([0.006]),
               "equal": lambda: np.full(o, 0.006)}[scales]()
        x = b.input("x", x_shape)
        w = b.constant("w", rng.integers(-127, 128, w_shape).astype(np.int8), quantization=q(w_s))
        bias = b.constant("bias", rng.uniform(-1, 1, o).astype(np.float32))
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, o))
        b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act,
            dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, x_shape) * 3).astype(np.float32)
        if ties:
            row = xv.reshape(x_shape[0], -1)[0]
            row[:] = np.clip(row * 40, -128, 127)
            row[0], row[1] = -128.0, 127.0
            row[2:10] = TIES
        return b, {"x": xv}
    return build


def conv_grouped_int8(x_shape, w_shape, scales, stride=(1, 1), padding=S, act=Act.NONE):
    """scales: (input scale, input zero point, filter scales [O], output scale, output zero point)."""
    def build(name):
        rng = rng_for(name)
        o = w_shape[0]
        in_s, in_zp, w_s, out_s, out_zp = scales(rng, o)
        b = ModelBuilder()
        x = b.input("x", x_shape, dtype=np.int8, quantization={"scale": [in_s], "zero_point": [in_zp]})
        w = b.constant("w", rng.integers(-127, 128, w_shape).astype(np.int8), quantization=q(w_s))
        bias_scale = (in_s * np.asarray(w_s)).tolist()
        bias = b.constant("bias", rng.integers(-3000, 3000, o).astype(np.int32),
                          quantization={"scale": bias_scale, "zero_point": [0] * o, "quantized_dimension": 0})
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1])
        y = b.tensor("y", (x_shape[0], oh, ow, o), dtype=np.int8,
                     quantization={"scale": [out_s], "zero_point": [out_zp]})
        b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                                         fused_activation_function=act))
        b.output(y)
        return b, {"x": rng.integers(-128, 128, x_shape).astype(np.int8)}
    return build


def power_of_two_scales(rng, o):      # effective scale 2^-7 or 2^-8: many exact ties
    return 0.5, 3, rng.choice([1 / 64, 1 / 128], o).tolist(), 1.0, -5


def random_scales(rng, o):
    return 0.02, -7, rng.uniform(0.002, 0.01, o).tolist(), 0.05, 4


def l2norm_float(shape, scale=3.0):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        x = b.input("x", shape)
        y = b.tensor("y", shape)
        b.op(B.L2_NORMALIZATION, [x], [y], L2NormOptions())
        b.output(y)
        xv = (rng.uniform(-1, 1, shape) * scale).astype(np.float32)
        xv.reshape(-1, shape[-1])[0] = 0.0            # a zero row: the 1e-6 floor
        return b, {"x": xv}
    return build


CASES = {
    "tconv_hybrid_3x3_s2_same_per_channel": tconv_hybrid((2, 3, 4, 5), (6, 3, 3, 5), (6, 8), (2, 2), S),
    "tconv_hybrid_4x4_s2_valid_per_tensor_relu": tconv_hybrid((1, 4, 4, 8), (3, 4, 4, 8), (10, 10), (2, 2), V,
                                                              act=Act.RELU, per_channel=False),
    "tconv_hybrid_3x3_no_bias_16_channels": tconv_hybrid((1, 4, 4, 16), (12, 3, 3, 16), (8, 8), (2, 2), S,
                                                         bias=False),
    "tconv_hybrid_output_padding_relu6_ties": tconv_hybrid((1, 5, 5, 3), (4, 3, 3, 3), (10, 10), (2, 2), S,
                                                           act=Act.RELU6, ties=True),
    "tconv_hybrid_conv1d_like_stride_1x2": tconv_hybrid((1, 1, 16, 16), (8, 1, 3, 16), (1, 32), (1, 2), S),
    "tconv_hybrid_2x2_s2_n1to1_ties": tconv_hybrid((2, 3, 3, 9), (5, 2, 2, 9), (6, 6), (2, 2), V,
                                                   act=Act.RELU_N1_TO_1, ties=True),
    "conv_grouped_hybrid_depthwise_7x7": conv_grouped_hybrid((1, 9, 9, 12), (12, 7, 7, 1)),
    "conv_grouped_int8_1x1_ties_away": conv_grouped_int8((2, 8, 8, 16), (12, 1, 1, 8), power_of_two_scales),
    "conv_grouped_int8_3x3_4_groups_relu6": conv_grouped_int8((1, 7, 6, 8), (8, 3, 3, 2), random_scales,
                                                              stride=(2, 1), act=Act.RELU6),
    "l2norm_float_rows_of_5": l2norm_float((64, 5)),
    "l2norm_float_rows_of_37": l2norm_float((4, 4, 37)),
    "l2norm_float_rows_of_64_tiny": l2norm_float((8, 3, 64), scale=1e-7),
    "conv_grouped_int8_3x3_random_scales": conv_grouped_int8((1, 9, 9, 12), (6, 3, 3, 4), random_scales, padding=V),
    "conv_grouped_hybrid_4_groups_relu_ties": conv_grouped_hybrid((2, 6, 5, 8), (12, 3, 3, 2), act=Act.RELU,
                                                                  ties=True),
    "conv_grouped_hybrid_valid_stride_dilation_relu6": conv_grouped_hybrid((1, 11, 10, 6), (9, 3, 3, 2),
                                                                           stride=(2, 1), padding=V, dilation=(1, 2),
                                                                           act=Act.RELU6),
}


def build_case(name):
    return quantized_cases.build(CASES, name)
