"""The int16 (and int8 tie) case table of tests/interpreter/quant/test_quantized_int16_matrix.py, shared
with the kernel tests (tests/interpreter/kernels/) and the explain tests, which run the same cases."""

from __future__ import annotations

import math
import zlib

import numpy as np

from helpers import quantized_cases
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import (
    BatchMatMulOptions,
    Conv2DOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    ModelBuilder,
    Padding,
    TransposeConvOptions,
)
from workbench.schema import BuiltinOperator as B
from workbench.schema import TensorType as TT

S, V = Padding.SAME, Padding.VALID
I16_MAX = 32767


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, zp, dim=0):
    return {"scale": scale, "zero_point": zp, "quantized_dimension": dim}


def window_out(padding, size, k, s, d=1):
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == Padding.SAME else (size - eff) // s + 1


def rand(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def spread_scale(in_s, w_s, k, in_max=32768.0, target=11000.0):
    """An output scale that maps the typical |sum| (random inputs) to about ``target``: outputs spread
    over the int16 range and the largest ones saturate."""
    typical = in_max / math.sqrt(3) * 127 / math.sqrt(3) * math.sqrt(k)
    return float(in_s * np.max(w_s) * typical / target)


def clamp_scales(act, w_s, k, in_max=32768.0, q_max=32767.0):
    """(input scale, output scale) for RELU6 / RELU_N1_TO_1: the clamp bound lands at ~3/4 of the
    integer range and typical outputs at about half of it, so both the clamp and the values inside it
    are exercised.  None for other activations (the spread scale serves)."""
    bound = {Act.RELU6: 6.0, Act.RELU_N1_TO_1: 1.0}.get(act)
    if bound is None:
        return None
    typical = in_max / math.sqrt(3) * 127 / math.sqrt(3) * math.sqrt(k)
    return bound / 2 / (float(np.max(w_s)) * typical), bound / (0.75 * q_max)


def ties_values(n_extra=600):
    """Every 32nd int16 value and all of [-300, 300): many exact halves for power-of-two scales."""
    return np.concatenate([np.arange(-32768, 32768, 32), np.arange(-n_extra // 2, n_extra // 2)]).astype(np.int16)


def conv16(x_shape, w_shape, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, per_channel=True,
           bias_dtype=np.int64, qbt=None, x=None, w=None, scales=None, bias_range=1 << 20, w_as_input=False):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        o = w_shape[0]
        in_s, w_s, out_s = scales or (0.0005, None, None)
        if w_s is None:
            w_s = rng.uniform(0.002, 0.01, o) if per_channel else np.array([0.006])
        w_s = np.atleast_1d(np.asarray(w_s, np.float64))
        k = w_shape[1] * w_shape[2] * w_shape[3]
        if scales is None and clamp_scales(act, w_s, k):
            in_s, out_s = clamp_scales(act, w_s, k)
        xt = b.input("x", x_shape, np.int16, quantization=q(in_s, 0))
        wv = rand(rng, np.int8, w_shape) if w is None else w
        wv = np.where(wv == -128, -127, wv).astype(np.int8)
        wq = q(w_s.tolist(), [0] * len(w_s), 0)
        wt = b.input("w", w_shape, np.int8, quantization=wq) if w_as_input else b.constant("w", wv, quantization=wq)
        bs = (np.float32(in_s) * np.resize(w_s, o).astype(np.float32)).astype(np.float64)
        bv = rng.integers(-bias_range, bias_range, o) if bias_range else np.zeros(o, np.int64)
        bt = b.constant("bias", bv.astype(bias_dtype), quantization=q(bs.tolist(), [0] * o, 0))
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, o), np.int16,
                     quantization=q(out_s if out_s is not None else spread_scale(in_s, w_s, k), 0))
        opts = dict(padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act,
                    dilation_h_factor=dilation[0], dilation_w_factor=dilation[1])
        if qbt is not None:
            opts["quantized_bias_type"] = qbt
        b.op(B.CONV_2D, [xt, wt, bt], [y], Conv2DOptions(**opts))
        b.output(y)
        inputs = {"x": rand(rng, np.int16, x_shape) if x is None else x}
        if w_as_input:
            inputs["w"] = wv
        return b, inputs
    return build


def ties_input(c):
    v = ties_values()
    return np.tile(v[:, None], (1, c)).reshape(1, 1, v.size, c)


TIES_SCALES = (2.0 ** -10, [2.0 ** -6], 2.0 ** -16 / 0.375)     # effective scale 0.375 (shift -1)
TIES_SCALES_Q = (2.0 ** -10, [2.0 ** -6], 2.0 ** -16 / 0.25)    # effective scale 0.25 (M = 2^30, shift -1)

# 1x1 filters of ones: every output is an input value (or a sum of two), times an exact power of two
ONES_2x2 = np.ones((3, 1, 1, 2), np.int8)
ONES_GROUPED = np.ones((4, 1, 1, 1), np.int8)


def wrap_case(bias_dtype, qbt, groups=1):
    """Sums far beyond int32: 4096 channels of 32767·127 (+ a bias near INT32_MAX)."""
    c = 4096
    x = np.full((1, 1, 4, c), I16_MAX, np.int16)
    x[0, 0, 1] = -32768
    x[0, 0, 2] = np.arange(c) % 2001 - 1000
    w = np.full((2, 1, 1, c // groups), 127, np.int8)
    w[1, 0, 0, ::3] = -127
    return conv16((1, 1, 4, c), (2, 1, 1, c // groups), padding=V, bias_dtype=bias_dtype, qbt=qbt, x=x, w=w,
                  scales=(2.0 ** -10, [2.0 ** -6], 2.0 ** -16 * 2.0 ** 16 * 1.37), bias_range=0)


def depthwise16(x_shape, k, mult=1, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, per_channel=True,
                bias=True, option_mult=None, x=None, w=None, scales=None):
    def build(name):
        rng = rng_for(name)
        c = x_shape[3]
        co = c * mult
        b = ModelBuilder()
        in_s, w_s, out_s = scales or (0.0004, None, None)
        if w_s is None:
            w_s = rng.uniform(0.002, 0.02, co) if per_channel else np.array([0.01])
        w_s = np.atleast_1d(np.asarray(w_s, np.float64))
        if scales is None and clamp_scales(act, w_s, k[0] * k[1]):
            in_s, out_s = clamp_scales(act, w_s, k[0] * k[1])
        xt = b.input("x", x_shape, np.int16, quantization=q(in_s, 0))
        wv = rand(rng, np.int8, (1, k[0], k[1], co)) if w is None else w
        wt = b.constant("w", wv, quantization=q(w_s.tolist(), [0] * len(w_s), 3))
        ins = [xt, wt]
        if bias:
            bs = (np.float32(in_s) * np.resize(w_s, co).astype(np.float32)).astype(np.float64)
            ins.append(b.constant("bias", rng.integers(-1 << 19, 1 << 19, co).astype(np.int64),
                                  quantization=q(bs.tolist(), [0] * co, 0)))
        oh = window_out(padding, x_shape[1], k[0], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], k[1], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, co), np.int16,
                     quantization=q(out_s if out_s is not None else spread_scale(in_s, w_s, k[0] * k[1]), 0))
        b.op(B.DEPTHWISE_CONV_2D, ins, [y], DepthwiseConv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1],
            depth_multiplier=mult if option_mult is None else option_mult, fused_activation_function=act,
            dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        return b, {"x": rand(rng, np.int16, x_shape) if x is None else x}
    return build


def fc16(x_shape, units, act=Act.NONE, keep=False, bias_dtype=np.int64, qbt=None, per_channel=True,
         w_zp=0, x=None, w=None, scales=None, bias_range=1 << 20, w_as_input=False):
    def build(name):
        rng = rng_for(name)
        k = x_shape[-1]
        b = ModelBuilder()
        in_s, w_s, out_s = scales or (0.0005, None, None)
        if w_s is None:
            w_s = rng.uniform(0.002, 0.01, units) if per_channel else np.array([0.0061])
        w_s = np.atleast_1d(np.asarray(w_s, np.float64))
        if scales is None and clamp_scales(act, w_s, k):
            in_s, out_s = clamp_scales(act, w_s, k)
        xt = b.input("x", x_shape, np.int16, quantization=q(in_s, 0))
        wv = rand(rng, np.int8, (units, k)) if w is None else w
        wq = q(w_s.tolist(), [w_zp] * len(w_s), 0)
        wt = b.input("w", (units, k), np.int8, quantization=wq) if w_as_input else b.constant("w", wv, quantization=wq)
        ins = [xt, wt]
        if bias_dtype is not None:
            bs = (np.float32(in_s) * w_s.astype(np.float32)).astype(np.float64)
            bv = rng.integers(-bias_range, bias_range, units) if bias_range else np.zeros(units, np.int64)
            ins.append(b.constant("bias", bv.astype(bias_dtype), quantization=q(bs.tolist(), [0] * len(bs), 0)))
        out = tuple(x_shape[:-1]) + (units,) if keep else (math.prod(x_shape) // k, units)
        y = b.tensor("y", out, np.int16, quantization=q(out_s if out_s is not None else spread_scale(in_s, w_s, k), 0))
        opts = dict(fused_activation_function=act, keep_num_dims=keep)
        if qbt is not None:
            opts["quantized_bias_type"] = qbt
        b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(**opts))
        b.output(y)
        inputs = {"x": rand(rng, np.int16, x_shape) if x is None else x}
        if w_as_input:
            inputs["w"] = wv
        return b, inputs
    return build


def fc_ties(bias_dtype, qbt, eff=0.25, per_channel=True):
    v = ties_values()
    w = np.array([[1], [-1], [3]], np.int8)
    ws = [2.0 ** -6] * 3 if per_channel else [2.0 ** -6]
    return fc16((v.size, 1), 3, bias_dtype=bias_dtype, qbt=qbt, x=v.reshape(-1, 1), w=w,
                scales=(2.0 ** -10, ws, 2.0 ** -16 / eff), bias_range=0)


def fc_overflow():
    """round(acc · eff) beyond int32: TFLite's double→int32 conversion gives INT32_MIN (x86)."""
    x = np.array([[I16_MAX] * 4, [-32768] * 4, [1000] * 4, [20] * 4, [-20] * 4, [0] * 4], np.int16)
    w = np.array([[127] * 4, [-127] * 4], np.int8)
    return fc16((6, 4), 2, x=x, w=w, scales=(2.0 ** -10, [2.0 ** -6, 2.0 ** -6], 2.0 ** -26), bias_range=0)


def tconv(dtype, x_shape, w_shape, out_hw, stride=(1, 1), padding=S, act=Act.NONE, per_channel=True, bias=True,
          bias_dtype=None, qbt=None, in_zp=0, out_zp=0, x=None, w=None, scales=None):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        co = w_shape[0]
        int8 = np.dtype(dtype) == np.int8
        in_s, w_s, out_s = scales or ((0.02 if int8 else 0.0005), None, None)
        if w_s is None:
            w_s = rng.uniform(0.002, 0.01, co) if per_channel else np.array([0.006])
        w_s = np.atleast_1d(np.asarray(w_s, np.float64))
        xt = b.input("x", x_shape, dtype, quantization=q(in_s, in_zp))
        wv = rand(rng, np.int8, w_shape) if w is None else w
        wt = b.constant("w", wv, quantization=q(w_s.tolist(), [0] * len(w_s), 0))
        shape_t = b.constant("output_shape", np.array([x_shape[0], out_hw[0], out_hw[1], co], np.int32))
        ins = [shape_t, wt, xt]
        if bias:
            bdt = bias_dtype or (np.int32 if int8 else np.int64)
            bs = (np.float32(in_s) * np.resize(w_s, co).astype(np.float32)).astype(np.float64)
            bv = rng.integers(-2000, 2000, co) if int8 else rng.integers(-1 << 20, 1 << 20, co)
            ins.append(b.constant("bias", bv.astype(bdt), quantization=q(bs.tolist(), [0] * co, 0)))
        k = w_shape[1] * w_shape[2] * w_shape[3] / (stride[0] * stride[1])
        if out_s is None:
            out_s = spread_scale(in_s, w_s, k, 128.0, 45.0) if int8 else spread_scale(in_s, w_s, k)
        y = b.tensor("y", (x_shape[0], out_hw[0], out_hw[1], co), dtype, quantization=q(out_s, out_zp))
        opts = dict(padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act)
        if qbt is not None:
            opts["quantized_bias_type"] = qbt
        b.op(B.TRANSPOSE_CONV, ins, [y], TransposeConvOptions(**opts))
        b.output(y)
        return b, {"x": rand(rng, dtype, x_shape) if x is None else x}
    return build


def tconv_ties(dtype, co, eff, **kw):
    """1x1 weights of ones on one input channel: output[., c] = x (times an exact power-of-two-ish
    scale), so ties appear in every channel; channels ≥ 8·⌊co/8⌋ are requantized one by one."""
    if np.dtype(dtype) == np.int8:
        v = np.arange(-128, 128).astype(np.int8).reshape(1, 16, 16, 1)
    else:
        v = np.concatenate([np.arange(-32768, 32768, 128), np.arange(-128, 128)]).astype(np.int16).reshape(1, 24, 32, 1)
    return tconv(dtype, v.shape, (co, 1, 1, 1), v.shape[1:3], x=v, w=np.ones((co, 1, 1, 1), np.int8),
                 scales=(2.0 ** -10, [2.0 ** -6] * co, 2.0 ** -16 / eff), **kw)


def bmm(sa, sb, ta, tb, tout, adj_x=False, adj_y=False, qa=(0.05, 3), qb=(0.02, -7), qo=None, const_b=False,
        xa=None, xb=None):
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        a = b.input("a", sa, ta, quantization=q(*qa))
        bv = rand(rng, tb, sb) if xb is None else xb
        bt = b.constant("b", bv, quantization=q(*qb)) if const_b else b.input("b", sb, tb, quantization=q(*qb))
        av = rand(rng, ta, sa) if xa is None else xa
        a2 = np.swapaxes(av, -1, -2) if adj_x else av
        b2 = np.swapaxes(bv, -1, -2) if adj_y else bv
        out_shape = np.matmul(a2.astype(np.float64), b2.astype(np.float64)).shape
        qq = qo
        if qq is None:
            k = a2.shape[-1]
            typical = np.iinfo(ta).max / math.sqrt(3) * np.iinfo(tb).max / math.sqrt(3) * math.sqrt(k)
            target = 45.0 if np.dtype(tout) == np.int8 else 11000.0
            qq = (qa[0] * qb[0] * typical / target, 0 if np.dtype(ta) == np.int16 else 5)
        y = b.tensor("y", out_shape, tout, quantization=q(*qq))
        b.op(B.BATCH_MATMUL, [a, bt], [y], BatchMatMulOptions(adj_x=adj_x, adj_y=adj_y))
        b.output(y)
        inputs = {"a": av} if const_b else {"a": av, "b": bv}
        return b, inputs
    return build


CASES = {
    # CONV_2D: int64 bias → TFLite's reference kernel (int64 sums, MultiplyByQuantizedMultiplier int64)
    "conv16_3x3_same_relu": conv16((1, 9, 8, 5), (7, 3, 3, 5), act=Act.RELU),
    "conv16_stride2_valid_per_tensor": conv16((2, 11, 10, 4), (5, 3, 3, 4), stride=(2, 2), padding=V,
                                              per_channel=False),
    "conv16_dilation_relu6": conv16((1, 12, 11, 3), (4, 3, 3, 3), dilation=(2, 2), act=Act.RELU6),
    "conv16_5x3_stride_2x1_n1to1": conv16((1, 9, 7, 2), (3, 5, 3, 2), stride=(2, 1), act=Act.RELU_N1_TO_1),
    "conv16_option_int64": conv16((1, 6, 6, 3), (4, 3, 3, 3), qbt=TT.INT64),
    "conv16_grouped_int64": conv16((1, 11, 10, 6), (6, 3, 3, 2), dilation=(2, 3), padding=V),
    "conv16_big_k": conv16((1, 5, 5, 256), (4, 3, 3, 256)),
    "conv16_filter_is_an_input": conv16((1, 7, 6, 4), (5, 3, 3, 4), w_as_input=True),
    # int32 bias + quantized_bias_type=INT32 → ruy (int32 sums that wrap, double rounding, ties up)
    "conv16_int32_3x3": conv16((1, 9, 8, 5), (7, 3, 3, 5), bias_dtype=np.int32, qbt=TT.INT32),
    "conv16_int32_1x1": conv16((2, 9, 8, 5), (7, 1, 1, 5), bias_dtype=np.int32, qbt=TT.INT32),
    "conv16_int32_dilated_stride": conv16((1, 13, 12, 5), (6, 3, 3, 5), stride=(2, 1), dilation=(1, 3),
                                          bias_dtype=np.int32, qbt=TT.INT32, act=Act.RELU),
    # grouped + int32 bias → the int32 reference kernel (ties away from zero)
    "conv16_int32_grouped": conv16((1, 9, 8, 6), (6, 3, 3, 3), bias_dtype=np.int32, qbt=TT.INT32,
                                   act=Act.RELU6),
    "conv16_ties_int64": conv16((1, 1, 2648, 2), (3, 1, 1, 2), padding=V, x=ties_input(2), w=ONES_2x2,
                                scales=TIES_SCALES, bias_range=0),
    "conv16_ties_int32": conv16((1, 1, 2648, 2), (3, 1, 1, 2), padding=V, x=ties_input(2), w=ONES_2x2,
                                scales=TIES_SCALES_Q, bias_dtype=np.int32, qbt=TT.INT32, bias_range=0),
    "conv16_ties_int32_grouped": conv16((1, 1, 2648, 2), (4, 1, 1, 1), padding=V, x=ties_input(2),
                                        w=ONES_GROUPED, scales=TIES_SCALES_Q, bias_dtype=np.int32, qbt=TT.INT32,
                                        bias_range=0),
    "conv16_ties_int64_grouped": conv16((1, 1, 2648, 2), (4, 1, 1, 1), padding=V, x=ties_input(2),
                                        w=ONES_GROUPED, scales=TIES_SCALES, bias_range=0),
    "conv16_wrap_int32": wrap_case(np.int32, TT.INT32),
    "conv16_wrap_int32_grouped": wrap_case(np.int32, TT.INT32, groups=2),
    "conv16_no_wrap_int64": wrap_case(np.int64, None),
    # DEPTHWISE_CONV_2D (int64 bias or none; TFLite's reference kernel)
    "dw16_3x3_relu": depthwise16((1, 9, 8, 6), (3, 3), act=Act.RELU),
    "dw16_mult3_stride_dilation": depthwise16((2, 13, 12, 4), (3, 2), mult=3, stride=(2, 1), dilation=(1, 3)),
    "dw16_valid5_per_tensor_relu6": depthwise16((1, 10, 9, 3), (5, 5), mult=2, padding=V, per_channel=False,
                                                act=Act.RELU6),
    "dw16_no_bias": depthwise16((1, 6, 6, 4), (3, 3), bias=False, act=Act.RELU_N1_TO_1),
    "dw16_option_multiplier_ignored": depthwise16((1, 6, 6, 4), (3, 3), mult=2, option_mult=1),
    "dw16_ties": depthwise16((1, 1, 2648, 2), (1, 1), padding=V, bias=False, x=ties_input(2),
                             w=np.ones((1, 1, 1, 2), np.int8), scales=TIES_SCALES),
    # FULLY_CONNECTED: int64 bias (or quantized_bias_type=INT64) → reference, round(acc · scale) in double;
    # int32 bias or none → ruy (int32 sums, double rounding, ties up)
    "fc16_int64_per_channel": fc16((4, 64), 16),
    "fc16_int64_per_tensor_relu": fc16((4, 64), 16, per_channel=False, act=Act.RELU),
    "fc16_int32_per_channel": fc16((4, 64), 16, bias_dtype=np.int32, qbt=TT.INT32),
    "fc16_int32_per_tensor_relu6": fc16((4, 64), 16, bias_dtype=np.int32, per_channel=False, act=Act.RELU6),
    "fc16_no_bias": fc16((5, 40), 9, bias_dtype=None),
    "fc16_no_bias_option_int64": fc16((5, 40), 9, bias_dtype=None, qbt=TT.INT64),
    "fc16_keep_num_dims": fc16((2, 3, 64), 16, keep=True, act=Act.RELU_N1_TO_1),
    "fc16_flatten": fc16((2, 3, 8), 5, bias_dtype=np.int32, qbt=TT.INT32),
    "fc16_weight_zero_point": fc16((4, 32), 6, per_channel=False, w_zp=3, bias_dtype=None),
    "fc16_big": fc16((64, 512), 64),
    "fc16_weights_are_an_input": fc16((3, 48), 7, bias_dtype=np.int32, qbt=TT.INT32, w_as_input=True),
    "fc16_big_int32": fc16((64, 512), 64, bias_dtype=np.int32, qbt=TT.INT32),
    "fc16_ties_double": fc_ties(np.int64, None, 0.25),
    "fc16_ties_double_0375": fc_ties(np.int64, None, 0.375, per_channel=False),
    "fc16_ties_ruy": fc_ties(np.int32, TT.INT32, 0.25),
    "fc16_ties_ruy_0375": fc_ties(None, None, 0.375),
    "fc16_double_beyond_int32": fc_overflow(),
    # TRANSPOSE_CONV int8: int32 sums; channels in blocks of 8 round ties up (NEON), the rest away
    "tconv8_3x3_stride2": tconv(np.int8, (1, 5, 6, 3), (11, 3, 3, 3), (10, 12), stride=(2, 2), in_zp=-3, out_zp=4),
    "tconv8_valid_no_bias": tconv(np.int8, (2, 4, 5, 4), (6, 3, 2, 4), (9, 11), stride=(2, 2), padding=V,
                                  bias=False, in_zp=7),
    "tconv8_relu": tconv(np.int8, (1, 5, 6, 3), (9, 3, 3, 3), (10, 12), stride=(2, 2), act=Act.RELU, out_zp=-10),
    "tconv8_per_tensor_16ch": tconv(np.int8, (1, 4, 4, 5), (16, 2, 2, 5), (8, 8), stride=(2, 2),
                                    per_channel=False, in_zp=-128),
    "tconv8_ties_11ch": tconv_ties(np.int8, 11, 0.25),
    "tconv8_ties_19ch": tconv_ties(np.int8, 19, 0.375),
    # TRANSPOSE_CONV 16x8: quantized_bias_type=INT32 → optimized (as int8); otherwise reference int64
    "tconv16_int64_3x3": tconv(np.int16, (1, 5, 6, 3), (11, 3, 3, 3), (10, 12), stride=(2, 2)),
    "tconv16_int32_3x3": tconv(np.int16, (1, 5, 6, 3), (11, 3, 3, 3), (10, 12), stride=(2, 2),
                               bias_dtype=np.int32, qbt=TT.INT32, act=Act.RELU),
    "tconv16_no_bias": tconv(np.int16, (2, 4, 5, 4), (6, 3, 2, 4), (9, 11), stride=(2, 2), padding=V, bias=False),
    "tconv16_no_bias_option_int32": tconv(np.int16, (1, 5, 6, 3), (11, 3, 3, 3), (10, 12), stride=(2, 2),
                                          bias=False, qbt=TT.INT32),
    "tconv16_ties_int64": tconv_ties(np.int16, 11, 0.25, bias_dtype=np.int64),
    "tconv16_ties_int32": tconv_ties(np.int16, 11, 0.25, bias_dtype=np.int32, qbt=TT.INT32),
    # BATCH_MATMUL
    "bmm8": bmm((2, 7, 33), (2, 33, 9), np.int8, np.int8, np.int8),
    "bmm8_adj_broadcast": bmm((3, 1, 33, 7), (1, 4, 9, 33), np.int8, np.int8, np.int8, adj_x=True, adj_y=True),
    "bmm8_const_rhs": bmm((5, 33), (33, 9), np.int8, np.int8, np.int8, const_b=True),
    "bmm8_rank5": bmm((2, 1, 2, 3, 16), (1, 2, 1, 16, 5), np.int8, np.int8, np.int8),
    "bmm8_rhs_batch_1": bmm((2, 3, 4, 16), (2, 1, 16, 5), np.int8, np.int8, np.int8),
    "bmm8_to_int32": bmm((2, 7, 33), (2, 33, 9), np.int8, np.int8, np.int32, qo=(1.0, 0)),
    "bmm8_ties": bmm((256, 1), (1, 1), np.int8, np.int8, np.int8, qa=(2.0 ** -4, 0), qb=(2.0 ** -4, 0),
                     qo=(2.0 ** -6, 3), xa=np.arange(-128, 128).astype(np.int8).reshape(256, 1),
                     xb=np.ones((1, 1), np.int8)),
    "bmm16": bmm((2, 7, 33), (2, 33, 9), np.int16, np.int16, np.int16, qa=(0.001, 0), qb=(0.002, 0)),
    "bmm16_adj": bmm((2, 33, 7), (1, 9, 33), np.int16, np.int16, np.int16, adj_x=True, adj_y=True,
                     qa=(0.001, 0), qb=(0.002, 0)),
    "bmm16x8": bmm((2, 7, 33), (2, 33, 9), np.int16, np.int8, np.int16, qa=(0.001, 0), qb=(0.002, 0)),
    "bmm16_ties": bmm((2648, 1), (1, 2), np.int16, np.int16, np.int16, qa=(2.0 ** -10, 0), qb=(2.0 ** -6, 0),
                      qo=(2.0 ** -16 / 0.375, 0), xa=ties_values().reshape(-1, 1),
                      xb=np.array([[1, -3]], np.int16)),
}


def build_case(name):
    return quantized_cases.build(CASES, name)
