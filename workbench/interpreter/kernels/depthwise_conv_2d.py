"""DEPTHWISE_CONV_2D (float32): input NHWC [.., C], filter [1, KH, KW, C*M], bias [C*M].

Output channel ``c*M + m`` is input channel ``c`` filtered by its own KHxKW window (M = depth
multiplier, taken from the shapes: the ``depth_multiplier`` option is redundant and ignored by TFLite
since TF 2.0).  Dilation needs version 2.  Padding as CONV_2D (TFLITE_FACTS §3.3).
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .._jit import njit
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, PADDING_NAMES, activation_name, activation_range, check_rank, window


@opdata
class DepthwiseConv2DData(OpData):
    padding: str
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_top: int
    pad_left: int
    depth_multiplier: int
    output_shape: tuple
    activation: str
    output_activation_min: float
    output_activation_max: float
    impl: str
    weights: object = None     # float32 [KH, KW, C*M] (when constant)
    bias: object = None        # float32 [C*M]


def reference(x, filt, bias, stride, dilation, pad, out_hw, act_range) -> np.ndarray:
    """Zero-pad, repeat each input channel M times, then add every tap's shifted window x weight."""
    n, h, w, c = x.shape
    _, kh, kw, co = filt.shape
    mult = co // c
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    need_h = (oh - 1) * sh + (kh - 1) * dh + 1
    need_w = (ow - 1) * sw + (kw - 1) * dw + 1
    xp = np.zeros((n, max(pt + h, need_h), max(pl + w, need_w), c), np.float32)
    xp[:, pt:pt + h, pl:pl + w, :] = x
    xr = np.repeat(xp, mult, axis=3)       # channel c*M + m holds input channel c
    out = np.zeros((n, oh, ow, co), np.float32)
    for ky in range(kh):
        for kx in range(kw):
            rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
            cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
            out += xr[:, rows, cols, :] * filt[0, ky, kx, :]
    if bias is not None:
        out += bias
    lo, hi = act_range
    return np.clip(out, lo, hi).astype(np.float32)


@njit
def depthwise_numba(x, w, bias, out, sh, sw, dh, dw, pt, pl, lo, hi):
    """Direct depthwise conv; the channel loop is innermost (contiguous, vectorizable)."""
    n_b, h, wd, c = x.shape
    kh, kw, co = w.shape
    _, oh, ow, _ = out.shape
    mult = co // c
    acc = np.empty(co, np.float32)
    for b in range(n_b):
        for oy in range(oh):
            y0 = oy * sh - pt
            ky0 = 0
            while ky0 < kh and y0 + ky0 * dh < 0:
                ky0 += 1
            ky1 = kh
            while ky1 > ky0 and y0 + (ky1 - 1) * dh >= h:
                ky1 -= 1
            for ox in range(ow):
                x0 = ox * sw - pl
                kx0 = 0
                while kx0 < kw and x0 + kx0 * dw < 0:
                    kx0 += 1
                kx1 = kw
                while kx1 > kx0 and x0 + (kx1 - 1) * dw >= wd:
                    kx1 -= 1
                for k in range(co):
                    acc[k] = bias[k]
                for ky in range(ky0, ky1):
                    iy = y0 + ky * dh
                    for kx in range(kx0, kx1):
                        ix = x0 + kx * dw
                        if mult == 1:
                            for k in range(co):
                                acc[k] += x[b, iy, ix, k] * w[ky, kx, k]
                        else:
                            for i in range(c):
                                v = x[b, iy, ix, i]
                                for m in range(mult):
                                    acc[i * mult + m] += v * w[ky, kx, i * mult + m]
                for k in range(co):
                    v = acc[k]
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    out[b, oy, ox, k] = v


@kernel(BuiltinOperator.DEPTHWISE_CONV_2D, versions=range(1, 3))
class DepthwiseConv2D(Kernel):
    name = "depthwise_conv_2d"

    def prepare(self, context, node):
        p = node.params
        x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
        context.expect_dtype(node, x_t, (F32,), "input")
        context.expect_dtype(node, f_t, (F32,), "filter")
        if b_t >= 0:
            context.expect_dtype(node, b_t, (F32,), "bias")
        n, h, w, c = check_rank(node, context, x_t, 4)
        one, kh, kw, co = check_rank(node, context, f_t, 4, "filter")
        if one != 1 or c == 0 or co % c:
            raise ValueError(f"DEPTHWISE_CONV_2D node {node.index}: filter {[one, kh, kw, co]} does not fit "
                             f"{c} input channels")
        sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
        oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
        context.set_output(y_t, (n, oh, ow, co), F32)
        lo, hi = activation_range(p["fused_activation_function"])
        filt = context.value(f_t)
        weights = np.ascontiguousarray(filt.reshape(kh, kw, co), np.float32) if filt is not None else None
        bias_v = context.value(b_t) if b_t >= 0 else np.zeros(co, np.float32)
        return DepthwiseConv2DData(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, pt, pl, co // c, (n, oh, ow, co),
                                   activation_name(p["fused_activation_function"]), lo, hi, "numba", weights,
                                   None if bias_v is None else np.ascontiguousarray(bias_v, np.float32))

    def invoke(self, context, node, d):
        tensors = context.tensors
        w = d.weights
        if w is None:
            f = tensors[node.inputs[1]]
            w = f.reshape(f.shape[1:])
        bias = d.bias if d.bias is not None else tensors[node.inputs[2]]
        depthwise_numba(tensors[node.inputs[0]], w, bias, tensors[node.outputs[0]], d.stride_h, d.stride_w,
                        d.dilation_h, d.dilation_w, d.pad_top, d.pad_left, np.float32(d.output_activation_min),
                        np.float32(d.output_activation_max))

    def invoke_reference(self, context, node, d):
        tensors = context.tensors
        b_t = node.input(2)
        tensors[node.outputs[0]][...] = reference(
            tensors[node.inputs[0]], tensors[node.inputs[1]], tensors[b_t] if b_t >= 0 else None,
            (d.stride_h, d.stride_w), (d.dilation_h, d.dilation_w), (d.pad_top, d.pad_left), d.output_shape[1:3],
            (d.output_activation_min, d.output_activation_max))
