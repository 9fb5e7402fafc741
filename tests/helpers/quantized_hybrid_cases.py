"""The hybrid (float activations, int8 weights) case table of
tests/interpreter/quant/test_quantized_hybrid.py, shared with the kernel tests (tests/interpreter/kernels/)
and the explain tests, which run the same cases."""

from __future__ import annotations

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
)
from workbench.schema import BuiltinOperator as B

S, V = Padding.SAME, Padding.VALID

TIES = np.float32([2.5, -2.5, 0.49999997, -0.49999997, 1.5, -0.5, 3.5, 0.5])


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, zp, dim=0):
    scale = np.atleast_1d(scale).tolist()
    return {"scale": scale, "zero_point": [0] * len(scale) if zp is None else zp, "quantized_dimension": dim}


def window_out(padding, size, k, s, d=1):
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == S else (size - eff) // s + 1


def tie_rows(x2d: np.ndarray, asymmetric: bool) -> None:
    """Make rows 0 (and 1) of ``x2d`` quantize with scale 1 and put rounding ties in the NEON part
    (the first 8·⌊K/8⌋ values) and in the tail."""
    rows, k = x2d.shape
    n_vec = (k // 8) * 8
    layouts = [(-128.0, 127.0), (-28.0, 227.0)] if asymmetric else [(-127.0, 100.0), (-5.0, 127.0)]
    for r, (lo, hi) in enumerate(layouts[:rows]):
        x2d[r] = np.clip(x2d[r], lo, hi)
        if k >= 2:
            x2d[r, 0], x2d[r, 1] = lo, hi
        vec = slice(2, min(n_vec, 10))
        x2d[r, vec] = TIES[: max(0, vec.stop - vec.start)]
        tail = k - n_vec
        if tail:
            x2d[r, n_vec:] = TIES[np.arange(tail) % len(TIES)]


def float_input(rng, shape, asymmetric: bool, scale: float = 3.0) -> np.ndarray:
    x = (rng.uniform(-1.0, 1.0, shape) * scale).astype(np.float32)
    tie_rows(x.reshape(-1, shape[-1]) if len(shape) > 1 else x.reshape(1, -1), asymmetric)
    return x


def fc_h(x_shape, units, asym=False, per_channel=False, act=Act.NONE, keep=False, bias=True, zero=False, k_big=None,
         weights=None):
    def build(name):
        rng = rng_for(name)
        k = x_shape[-1]
        b = ModelBuilder()
        w_s = rng.uniform(0.001, 0.01, units) if per_channel else np.array([0.004])
        x = b.input("x", x_shape)
        w = rng.integers(-127, 128, (units, k)) if weights is None else weights(rng, units, k)
        wt = b.constant("w", w.astype(np.int8), quantization=q(w_s, None, 0))
        ins = [x, wt]
        if bias:
            ins.append(b.constant("bias", rng.uniform(-2, 2, units).astype(np.float32)))
        out = tuple(x_shape[:-1]) + (units,) if keep else (int(np.prod(x_shape)) // k, units)
        y = b.tensor("y", out)
        b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act, keep_num_dims=keep,
                                                                asymmetric_quantize_inputs=asym))
        b.output(y)
        xv = np.zeros(x_shape, np.float32) if zero else float_input(rng, x_shape, asym)
        return b, {"x": xv}
    return build


def conv_h(x_shape, w_shape, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, per_channel=True,
           equal_scales=False):
    def build(name):
        rng = rng_for(name)
        o = w_shape[0]
        b = ModelBuilder()
        if equal_scales:
            w_s = np.full(o, 0.006)
        else:
            w_s = rng.uniform(0.001, 0.01, o) if per_channel else np.array([0.006])
        x = b.input("x", x_shape)
        w = b.constant("w", rng.integers(-127, 128, w_shape).astype(np.int8), quantization=q(w_s, None, 0))
        bias = b.constant("bias", rng.uniform(-1, 1, o).astype(np.float32))
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, o))
        b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act,
            dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, x_shape) * 3).astype(np.float32)
        xv.reshape(x_shape[0], -1)[0, :8] = TIES
        return b, {"x": xv}
    return build


def depthwise_h(x_shape, k, mult=1, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE,
                option_multiplier=None):
    def build(name):
        rng = rng_for(name)
        c = x_shape[3]
        co = c * mult
        b = ModelBuilder()
        w_s = rng.uniform(0.001, 0.02, co)
        x = b.input("x", x_shape)
        w = b.constant("w", rng.integers(-127, 128, (1, k[0], k[1], co)).astype(np.int8), quantization=q(w_s, None, 3))
        bias = b.constant("bias", rng.uniform(-1, 1, co).astype(np.float32))
        oh = window_out(padding, x_shape[1], k[0], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], k[1], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, co))
        b.op(B.DEPTHWISE_CONV_2D, [x, w, bias], [y], DepthwiseConv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1],
            depth_multiplier=mult if option_multiplier is None else option_multiplier,
            fused_activation_function=act, dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, x_shape) * 3).astype(np.float32)
        xv.reshape(x_shape[0], -1)[0, :8] = TIES
        return b, {"x": xv}
    return build


def bmm_h(a_shape, b_shape, adj_x=False, adj_y=False, asym=False, per_channel=False):
    def build(name):
        rng = rng_for(name)
        n = b_shape[-2] if adj_y else b_shape[-1]
        w_s = rng.uniform(0.001, 0.01, n) if per_channel else np.array([0.004])
        b = ModelBuilder()
        x = b.input("x", a_shape)
        w = b.constant("w", rng.integers(-127, 128, b_shape).astype(np.int8),
                       quantization=q(w_s, None, len(b_shape) - (2 if adj_y else 1)))
        aa = np.zeros(a_shape)
        bb = np.zeros(b_shape)
        out = np.matmul(np.swapaxes(aa, -1, -2) if adj_x else aa, np.swapaxes(bb, -1, -2) if adj_y else bb).shape
        y = b.tensor("y", out)
        b.op(B.BATCH_MATMUL, [x, w], [y], BatchMatMulOptions(adj_x=adj_x, adj_y=adj_y,
                                                             asymmetric_quantize_inputs=asym))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, a_shape) * 3).astype(np.float32)
        rows = np.swapaxes(xv, -1, -2) if adj_x else xv
        tie = rows.reshape(-1, rows.shape[-1]).copy()
        tie_rows(tie, asym)
        rows[...] = tie.reshape(rows.shape)
        return b, {"x": xv}
    return build


def all_positive_weights(rng, units, k):
    w = np.full((units, k), 127)
    w[1] = -127
    w[2:] = rng.integers(-127, 128, (units - 2, k))
    return w


CASES = {
    "fc_symmetric": fc_h((4, 37), 12),
    "fc_symmetric_relu": fc_h((3, 24), 7, act=Act.RELU),
    "fc_asymmetric": fc_h((4, 37), 12, asym=True),
    "fc_asymmetric_relu6": fc_h((5, 19), 6, asym=True, act=Act.RELU6),
    "fc_per_channel": fc_h((4, 40), 10, per_channel=True),
    "fc_per_channel_asymmetric_n1to1": fc_h((3, 21), 5, asym=True, per_channel=True, act=Act.RELU_N1_TO_1),
    "fc_keep_num_dims": fc_h((2, 3, 16), 5, asym=True, keep=True),
    "fc_flatten_no_bias": fc_h((2, 3, 8), 4, bias=False),
    "fc_short_rows": fc_h((6, 5), 3, asym=True),
    "fc_zero_input_gives_bias": fc_h((2, 9), 4, act=Act.RELU, zero=True),
    "fc_big_k_row_sums_wrap": fc_h((2, 4096 + 8 + 3), 4, asym=True, weights=all_positive_weights),
    "conv_per_channel_3x3_relu": conv_h((2, 7, 6, 5), (6, 3, 3, 5), act=Act.RELU),
    "conv_per_tensor_3x3": conv_h((2, 7, 6, 5), (6, 3, 3, 5), per_channel=False),
    "conv_equal_channel_scales_is_per_tensor": conv_h((1, 6, 5, 4), (3, 3, 3, 4), equal_scales=True),
    "conv_per_channel_valid_stride_relu6": conv_h((1, 9, 8, 3), (5, 3, 2, 3), stride=(2, 1), padding=V, act=Act.RELU6),
    "conv_per_channel_dilation_n1to1": conv_h((1, 9, 8, 3), (4, 3, 3, 3), dilation=(2, 2), act=Act.RELU_N1_TO_1),
    "conv_per_tensor_dilation": conv_h((1, 9, 8, 3), (4, 3, 3, 3), dilation=(2, 2), per_channel=False),
    "conv_1x1_per_channel": conv_h((2, 5, 5, 8), (7, 1, 1, 8)),
    "conv_1x1_per_tensor": conv_h((2, 5, 5, 8), (8, 1, 1, 8), per_channel=False),
    "depthwise_3x3_relu": depthwise_h((2, 7, 6, 5), (3, 3), act=Act.RELU),
    "depthwise_multiplier_3_valid": depthwise_h((1, 9, 8, 3), (3, 2), mult=3, stride=(2, 1), padding=V,
                                                act=Act.RELU6),
    "depthwise_dilation_multiplier_2": depthwise_h((1, 9, 8, 6), (3, 3), mult=2, dilation=(2, 2)),
    "depthwise_stride2_n1to1": depthwise_h((2, 6, 6, 9), (3, 3), stride=(2, 2), act=Act.RELU_N1_TO_1),
    "bmm_symmetric": bmm_h((3, 17), (17, 5)),
    "bmm_asymmetric": bmm_h((3, 17), (17, 5), asym=True),
    "bmm_batched_per_channel": bmm_h((2, 3, 17), (17, 6), asym=True, per_channel=True),
    "bmm_batched_rhs": bmm_h((2, 4, 9), (2, 9, 6), asym=True),
    "bmm_adj_x_adj_y_per_channel": bmm_h((2, 9, 4), (2, 6, 9), adj_x=True, adj_y=True, asym=True, per_channel=True),
    "bmm_adj_x_symmetric": bmm_h((2, 9, 4), (9, 6), adj_x=True, per_channel=True),
    "bmm_folded_rhs_batch": bmm_h((2, 3, 4, 9), (1, 9, 5), asym=True),
    "bmm_rank2_lhs_batched_rhs": bmm_h((4, 9), (3, 9, 5), asym=True, per_channel=True),
}


def build_case(name):
    return quantized_cases.build(CASES, name)
