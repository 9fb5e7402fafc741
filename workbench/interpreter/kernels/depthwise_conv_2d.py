"""DEPTHWISE_CONV_2D (float32): input NHWC [.., C], filter [1, KH, KW, C*M], bias [C*M].

Output channel ``c*M + m`` is input channel ``c`` filtered by its own KHxKW window (M = depth
multiplier, taken from the shapes: the ``depth_multiplier`` option is redundant and ignored by TFLite
since TF 2.0).  Dilation needs version 2.  Padding as CONV_2D (TFLITE_FACTS §3.3).

int8 (version 3, per-tensor or per-channel filter scales along the last filter axis): the int32
sum Σ filter·(input − input_zero_point) over in-image taps, + bias, requantized per output
channel (TFLITE_FACTS §4.5), + output_zero_point, clamped.  :func:`depthwise_int8_numba` is the fast
path, :func:`reference_int8` the plain int64 numpy twin.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .._jit import njit
from ..registry import Kernel, OpData, kernel, opdata
from .. import quant
from ._elementwise import KernelError
from ._common import F32, PADDING_NAMES, activation_name, activation_range, check_bias, check_rank, window

I8 = np.dtype(np.int8)


@opdata
class DepthwiseGeometry(OpData):
    """What every DEPTHWISE_CONV_2D kernel prepares, float or int8."""

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


@opdata
class DepthwiseConv2DData(DepthwiseGeometry):
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


@opdata
class DepthwiseConv2DInt8Data(DepthwiseGeometry):
    input_scale: float
    input_zero_point: int
    filter_scale: object           # float32 [1] or [C*M]
    output_scale: float
    output_zero_point: int
    effective_scale: object        # float64 [C*M]
    output_multiplier: object      # int64 [C*M]
    output_shift: object           # int64 [C*M]
    output_activation_min: int
    output_activation_max: int
    impl: str = "numba"
    per_channel: bool = False
    weights: object = None         # int16 [KH, KW, C*M]
    bias: object = None            # int64 [C*M]
    acc: object = None             # scratch: int32 sums [N, OH, OW, C*M]
    scalar_tail: object = None     # bool [OH, OW*C*M]: values TFLite's x86 kernel requantizes one by one
                                   # (rounding ties away from zero) after its 16/8/4-wide NEON loops
    rounding: str = "up"          # ties of the final rounding shift: "up" (what TFLite runs on x86:
                                  # ruy / NEON vrshl) or "away" (reference kernels, gemmlowp)

    @property
    def half_up(self) -> bool:
        return self.rounding == "up"


def fix_scalar_tail(acc, bias, out, d) -> None:
    """Requantize the values TFLite handles one by one (ties away from zero) — see prepare_int8."""
    n, oh, ow, co = out.shape
    mask = d.scalar_tail.reshape(oh, ow, co)
    a = acc[:, mask].astype(np.int64) + np.broadcast_to(bias, (oh, ow, co))[mask]
    m = np.broadcast_to(d.output_multiplier, (oh, ow, co))[mask]
    s = np.broadcast_to(d.output_shift, (oh, ow, co))[mask]
    v = quant.multiply_by_quantized_multiplier_array(a, m, s, False) + d.output_zero_point
    out[:, mask] = np.clip(v, d.output_activation_min, d.output_activation_max)


def reference_int8(x, filt, bias, stride, dilation, pad, out_hw, d) -> np.ndarray:
    """(x − zp) zero-padded and repeated M times per channel; int64 sums tap by tap; requantize."""
    n, h, w, c = x.shape
    _, kh, kw, co = filt.shape
    mult = co // c
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    need_h = (oh - 1) * sh + (kh - 1) * dh + 1
    need_w = (ow - 1) * sw + (kw - 1) * dw + 1
    xp = np.zeros((n, max(pt + h, need_h), max(pl + w, need_w), c), np.int64)
    xp[:, pt:pt + h, pl:pl + w, :] = x.astype(np.int64) - d.input_zero_point
    xr = np.repeat(xp, mult, axis=3)
    acc = np.zeros((n, oh, ow, co), np.int64)
    f = filt.astype(np.int64)
    for ky in range(kh):
        for kx in range(kw):
            rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
            cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
            acc += xr[:, rows, cols, :] * f[0, ky, kx, :]
    if bias is not None:
        acc += bias.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.half_up) + d.output_zero_point
    out = np.clip(v, d.output_activation_min, d.output_activation_max).astype(np.int8)
    if d.scalar_tail is not None:
        fix_scalar_tail((acc - bias.astype(np.int64)) if bias is not None else acc, bias if bias is not None else 0,
                        out, d)
    return out


@njit
def depthwise_int8_numba(x, w, out, sh, sw, dh, dw, pt, pl, in_zp):
    """Direct int8 depthwise conv: int32 sums over in-image taps into ``out`` (channels innermost)."""
    n_b, h, wd, c = x.shape
    kh, kw, co = w.shape
    _, oh, ow, _ = out.shape
    mult = co // c
    acc = np.empty(co, np.int32)
    for b in range(n_b):
        for oy in range(oh):
            y0 = oy * sh - pt
            for ox in range(ow):
                x0 = ox * sw - pl
                for k in range(co):
                    acc[k] = 0
                for ky in range(kh):
                    iy = y0 + ky * dh
                    if iy < 0 or iy >= h:
                        continue
                    for kx in range(kw):
                        ix = x0 + kx * dw
                        if ix < 0 or ix >= wd:
                            continue
                        if mult == 1:
                            for k in range(co):
                                acc[k] += (np.int32(x[b, iy, ix, k]) - in_zp) * np.int32(w[ky, kx, k])
                        else:
                            for i in range(c):
                                v = np.int32(x[b, iy, ix, i]) - in_zp
                                for m in range(mult):
                                    acc[i * mult + m] += v * np.int32(w[ky, kx, i * mult + m])
                for k in range(co):
                    out[b, oy, ox, k] = acc[k]


def prepare_int8(context, node, p):
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (I8,), "filter")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.int32,), "bias")
    n, h, w, c = check_rank(node, context, x_t, 4)
    one, kh, kw, co = check_rank(node, context, f_t, 4, "filter")
    check_bias(node, context, b_t, co)
    if one != 1 or c == 0 or co % c:
        raise KernelError(f"DEPTHWISE_CONV_2D node {node.index}: filter {[one, kh, kw, co]} does not fit "
                         f"{c} input channels")
    sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
    oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
    in_s, in_zp = quant.tensor_scale_zp(context, x_t)
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    f_scales, _, _ = quant.quant_params(context, f_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, co)
    code = p["fused_activation_function"]
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp)
    context.set_output(y_t, (n, oh, ow, co), I8)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(co, np.int32)
    weights = None if filt is None else np.ascontiguousarray(filt.reshape(kh, kw, co), np.int16)
    # litert on x86 (DepthwiseConvGeneral compiled through NEON_2_SSE) requantizes each output row in
    # chunks of at most 2048 // co pixels: 16/8/4 values at a time with a rounding shift whose ties
    # go up, then the last (values % 4) one by one with MultiplyByQuantizedMultiplier (ties away).
    # With dilation the observed behaviour is the reference kernel's (ties away) everywhere.
    rounding = "away" if (dh != 1 or dw != 1) else "up"
    tail = np.zeros((oh, ow * co), bool)
    per_chunk = max(1, 2048 // co)
    for start in range(0, ow, per_chunk):
        npix = min(ow, start + per_chunk) - start
        r = (npix * co) % 4
        if r:
            end = (start + npix) * co
            tail[:, end - r:end] = True
    return DepthwiseConv2DInt8Data(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, pt, pl, co // c, (n, oh, ow, co),
                                   activation_name(code), in_s, in_zp, f_scales, out_s, out_zp, eff, mult, shift, lo,
                                   hi, "numba", len(f_scales) > 1, weights,
                                   None if bias is None else bias.astype(np.int64), np.empty((n, oh, ow, co), np.int32),
                                   tail if (rounding == "up" and tail.any()) else None, rounding)


@kernel(BuiltinOperator.DEPTHWISE_CONV_2D, versions=range(1, 4))
class DepthwiseConv2D(Kernel):
    name = "depthwise_conv_2d"

    def prepare(self, context, node):
        p = node.params
        x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
        if context.dtype(x_t) == I8:
            return prepare_int8(context, node, p)
        context.expect_dtype(node, x_t, (F32,), "input")
        context.expect_dtype(node, f_t, (F32,), "filter")
        if b_t >= 0:
            context.expect_dtype(node, b_t, (F32,), "bias")
        n, h, w, c = check_rank(node, context, x_t, 4)
        one, kh, kw, co = check_rank(node, context, f_t, 4, "filter")
        check_bias(node, context, b_t, co)
        if one != 1 or c == 0 or co % c:
            raise KernelError(f"DEPTHWISE_CONV_2D node {node.index}: filter {[one, kh, kw, co]} does not fit "
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
        if type(d) is DepthwiseConv2DInt8Data:
            w = d.weights
            if w is None:
                f = tensors[node.inputs[1]]
                w = f.reshape(f.shape[1:])
            bias = d.bias if d.bias is not None else tensors[node.inputs[2]].astype(np.int64)
            out = tensors[node.outputs[0]]
            acc = d.acc if d.acc is not None else np.empty(out.shape, np.int32)
            depthwise_int8_numba(tensors[node.inputs[0]], w, acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                                 d.pad_top, d.pad_left, d.input_zero_point)
            co = out.shape[3]
            quant.requantize_rows_jit(acc.reshape(-1, co), bias, d.output_multiplier, d.output_shift,
                                      d.output_zero_point, d.output_activation_min, d.output_activation_max,
                                      out.reshape(-1, co), d.half_up)
            if d.scalar_tail is not None:
                fix_scalar_tail(acc, bias, out, d)
            return
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
        if type(d) is DepthwiseConv2DInt8Data:
            tensors[node.outputs[0]][...] = reference_int8(
                tensors[node.inputs[0]], tensors[node.inputs[1]], tensors[b_t] if b_t >= 0 else None,
                (d.stride_h, d.stride_w), (d.dilation_h, d.dilation_w), (d.pad_top, d.pad_left),
                d.output_shape[1:3], d)
            return
        tensors[node.outputs[0]][...] = reference(
            tensors[node.inputs[0]], tensors[node.inputs[1]], tensors[b_t] if b_t >= 0 else None,
            (d.stride_h, d.stride_w), (d.dilation_h, d.dilation_w), (d.pad_top, d.pad_left), d.output_shape[1:3],
            (d.output_activation_min, d.output_activation_max))
