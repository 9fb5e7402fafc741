"""DEPTHWISE_CONV_2D (float32): input NHWC [.., C], filter [1, KH, KW, C*M], bias [C*M].

Output channel ``c*M + m`` is input channel ``c`` filtered by its own KHxKW window (M = depth
multiplier, taken from the shapes: the ``depth_multiplier`` option is redundant and ignored by TFLite
since TF 2.0).  Dilation needs version 2.  Padding as CONV_2D (TFLITE_FACTS §3.3).

int8 (version 3, per-tensor or per-channel filter scales along the last filter axis): the int32
sum Σ filter·(input − input_zero_point) over in-image taps, + bias, requantized per output
channel (TFLITE_FACTS §4.5), + output_zero_point, clamped.  :func:`depthwise_int8_rows` is the fast
path (sums and requantization row by row, the rows split over ``num_threads`` threads), :func:`reference_int8` the plain int64 numpy twin.
Rounding, as litert's x86 build runs it (its optimized kernel, measured against every shape, stride,
dilation and depth multiplier swept): the ties of the final rounding shift go up in the first
``vector_channels`` = 8·⌊C·M/8⌋ output channels (the 8-wide vector loop) and away from zero in the
last C·M % 8 (the scalar loop) — in every pixel; so with fewer than 8 output channels every tie goes
away from zero, as in TFLite's reference kernel.

16x8 (int16 input/output, int8 filter): op_version.cc has no 16x8 rule, so such a node is version 1
or 2 (dilation), or the int8 version 3 a converter stamped.  TFLite runs its reference kernel:
int64 sums, an optional int64 bias (int32 is refused, as is a bias slot marked -1), the int64
overload of MultiplyByQuantizedMultiplier (one rounding, ties up), clamp; input/output zero points
must be 0.  The depth multiplier comes from the shapes (litert ignores a different
``depth_multiplier`` option here too, measured).  :func:`depthwise_int16_numba` is the fast path,
:func:`reference_int16` the numpy one.

uint8 (version 1-2) and hybrid (float input/output, int8 filter with per-channel scales; version 6):
see the section "uint8 / hybrid" at the end of this file.  litert's uint8 depthwise rounds every tie
away from zero (unlike its int8 kernel); its hybrid kernel scales the first 4·⌊C·M/4⌋ channels as
(acc·filter_scale)·input_scale and the rest as (acc·input_scale)·filter_scale.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ...perf.jit import njit, run_rows
from ..registry import Kernel, OpData, kernel, opdata
from ..fast import requantize   # moving to the speed layer (issue 15)
from .. import quant
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


@np.errstate(over="ignore", invalid="ignore")           # float inf / nan silently, as TFLite
def reference(x, filt, bias, stride, dilation, pad, out_hw, act_range) -> np.ndarray:
    """Zero-pad, repeat each input channel M times, then add every tap's shifted window x weight."""
    n, h, w, c = x.shape
    _, kh, kw, co = filt.shape
    mult = co // c
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    if n * oh * ow * co == 0:           # an empty output (VALID, input smaller than the window)
        return np.zeros((n, oh, ow, co), np.float32)
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
    depthwise_rows(x, w, bias, out, sh, sw, dh, dw, pt, pl, lo, hi, 0, out.shape[0] * out.shape[1])


@njit(nogil=True)
def depthwise_rows(x, w, bias, out, sh, sw, dh, dw, pt, pl, lo, hi, r0, r1):
    """:func:`depthwise_numba` for output rows r0..r1 only (row r = image r // OH, row r % OH), so
    that threads can share the rows."""
    _, h, wd, c = x.shape
    kh, kw, co = w.shape
    _, oh, ow, _ = out.shape
    mult = co // c
    acc = np.empty(co, np.float32)
    for r in range(r0, r1):
        b = r // oh
        oy = r % oh
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
    acc: object = None             # unused (the fast path keeps one row of int32 sums)
    rounding: str = "up"          # ties of the final rounding shift of the vector channels: "up" (TFLite's
                                  # x86 kernel: NEON vrshl); the scalar channels round "away" (gemmlowp)
    vector_channels: int = 0       # 8·⌊C·M/8⌋: channels below it requantized 8 at a time (ties up), the
                                   # remaining C·M % 8 one by one (ties away from zero) — see prepare_int8

    @property
    def half_up(self) -> bool:
        return self.rounding == "up"

    @property
    def scalar_tail(self):
        """bool [OH, OW·C·M] (None when C·M % 8 == 0): the values TFLite's x86 kernel requantizes one
        by one (ties away from zero) — every output channel ≥ ``vector_channels``, in every column."""
        _, oh, ow, co = self.output_shape
        if self.vector_channels >= co:
            return None
        row = np.tile(np.arange(co) >= self.vector_channels, ow)
        return np.broadcast_to(row, (oh, ow * co))

    @property
    def tail_columns(self):
        """int64: the True positions (ox·C·M + k) of one row of :attr:`scalar_tail`."""
        _, _, ow, co = self.output_shape
        return np.flatnonzero(np.tile(np.arange(co) >= self.vector_channels, ow)).astype(np.int64)


def reference_int8(x, filt, bias, stride, dilation, pad, out_hw, d) -> np.ndarray:
    """(x − zp) zero-padded and repeated M times per channel; int64 sums tap by tap; requantize."""
    n, h, w, c = x.shape
    _, kh, kw, co = filt.shape
    mult = co // c
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    if n * oh * ow * co == 0:           # an empty output
        return np.zeros((n, oh, ow, co), np.int8)
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
    # TFLite's x86 kernel: the first vector_channels channels ties up (vector loop), the rest away (scalar)
    vector = np.arange(co) < d.vector_channels
    up = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.half_up)
    away = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, False)
    v = np.where(vector, up, away) + d.output_zero_point
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(np.int8)


@njit(nogil=True)
def depthwise_int8_rows(x, w, bias, mult, shift, out_zp, lo, hi, half_up, n_vec, out, sh, sw, dh, dw, pt, pl,
                        in_zp, r0, r1):
    """Output rows r0..r1 (row r = image r // OH, output row r % OH) of the int8 depthwise conv.

    Per output row: int32 sums of (x − in_zp)·w over the in-image taps, tap by tap along the whole
    row (channels innermost, contiguous), then the row is requantized at once: + ``bias``,
    MultiplyByQuantizedMultiplier, + ``out_zp``, clamped to [lo, hi].  The ties of the final shift
    go up in the channels k < ``n_vec`` when ``half_up`` (TFLite's 8-wide vector loop), away from
    zero in the others (its scalar loop over the last CO % 8 channels; see prepare_int8).
    """
    _, h, wd, c = x.shape
    kh, kw, co = w.shape
    _, oh, ow, _ = out.shape
    dm = co // c
    left = np.empty(co, np.int64)
    right = np.empty(co, np.int64)
    mask = np.empty(co, np.int64)
    nudge = np.empty(co, np.int64)
    up = np.empty(co, np.bool_)
    for k in range(co):
        up[k] = half_up and k < n_vec
        s = shift[k]
        left[k] = s if s > 0 else 0
        right[k] = -s if s < 0 else 0
        mask[k] = (np.int64(1) << right[k]) - 1
        nudge[k] = mask[k] - (mask[k] >> 1)        # 2^(right-1), or 0 when right == 0
    band = max(1, min(r1 - r0, 8192 // max(1, ow * co)))   # output rows whose sums stay in the cache
    acc = np.empty((band * ow, co), np.int32)
    sums = np.empty(co, np.int32)
    for start in range(r0, r1, band):
        rows = min(band, r1 - start)
        for rr in range(rows):
            b = (start + rr) // oh
            y0 = ((start + rr) % oh) * sh - pt
            for ox in range(ow):
                x0 = ox * sw - pl
                for k in range(co):
                    sums[k] = 0
                for ky in range(kh):
                    iy = y0 + ky * dh
                    if iy < 0 or iy >= h:
                        continue
                    for kx in range(kw):
                        ix = x0 + kx * dw
                        if ix < 0 or ix >= wd:
                            continue
                        if dm == 1:
                            for k in range(co):
                                sums[k] += (np.int32(x[b, iy, ix, k]) - in_zp) * np.int32(w[ky, kx, k])
                        else:
                            for i in range(c):
                                v = np.int32(x[b, iy, ix, i]) - in_zp
                                for m in range(dm):
                                    sums[i * dm + m] += v * np.int32(w[ky, kx, i * dm + m])
                p = rr * ow + ox
                for k in range(co):
                    acc[p, k] = sums[k]
        for p in range(rows * ow):
            r = start + p // ow
            ob, oy, ox = r // oh, r % oh, p % ow
            for k in range(co):
                t = (np.int64(acc[p, k]) + bias[k]) << left[k]
                t = (t * mult[k] + 1073741824) >> 31
                if up[k]:
                    t = (t + nudge[k]) >> right[k]
                else:
                    t = (t >> right[k]) + ((t & mask[k]) > ((mask[k] >> 1) + (t < 0)))
                t += out_zp
                out[ob, oy, ox, k] = min(max(t, lo), hi)


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
    # litert on x86 runs optimized_integer_ops' DepthwiseConvGeneral (NEON through NEON_2_SSE; the 3x3
    # special kernels are aarch64 only) for every shape, stride and dilation.  Its per-channel
    # requantization walks the channels 8 at a time (over all pixels of the accumulator chunk) with a
    # vector rounding shift whose ties go up, then the last C·M % 8 channels one by one with
    # MultiplyByQuantizedMultiplier (ties away).  Which path a value takes depends on its channel only.
    return DepthwiseConv2DInt8Data(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, pt, pl, co // c, (n, oh, ow, co),
                                   activation_name(code), in_s, in_zp, f_scales, out_s, out_zp, eff, mult, shift, lo,
                                   hi, "numba", len(f_scales) > 1, weights,
                                   None if bias is None else bias.astype(np.int64), None, "up", 8 * (co // 8))


# ----------------------------------------------------------------------------------------------
# 16x8: int16 input/output, int8 filter, optional int64 bias (TFLite's reference kernel)


I16 = np.dtype(np.int16)


@opdata
class DepthwiseConv2DInt16Data(DepthwiseGeometry):
    input_scale: float
    input_zero_point: int           # 0 (TFLite refuses others)
    filter_scale: object            # float32 [1] or [C*M]
    output_scale: float
    output_zero_point: int          # 0
    effective_scale: object         # float64 [C*M]
    output_multiplier: object       # int64 [C*M]
    output_shift: object            # int64 [C*M]
    output_activation_min: int
    output_activation_max: int
    impl: str = "numba"
    per_channel: bool = False
    accumulator: str = "int64"      # int64 sums; MultiplyByQuantizedMultiplier's int64 overload (ties up)
    weights: object = None          # int8 [KH, KW, C*M]
    bias: object = None             # int64 [C*M] (zeros without a bias)
    acc: object = None              # scratch: int64 sums [N, OH, OW, C*M]


def depthwise_sums_int64(x, filt, stride, dilation, pad, out_hw) -> np.ndarray:
    """Σ filter·input over in-image taps in int64 numpy (zero border, channel c*M + m reads c)."""
    n, h, w, c = x.shape
    _, kh, kw, co = filt.shape
    mult = co // c
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    if n * oh * ow * co == 0:           # an empty output
        return np.zeros((n, oh, ow, co), np.int64)
    need_h = (oh - 1) * sh + (kh - 1) * dh + 1
    need_w = (ow - 1) * sw + (kw - 1) * dw + 1
    xp = np.zeros((n, max(pt + h, need_h), max(pl + w, need_w), c), np.int64)
    xp[:, pt:pt + h, pl:pl + w, :] = x
    xr = np.repeat(xp, mult, axis=3)
    acc = np.zeros((n, oh, ow, co), np.int64)
    f = filt.astype(np.int64)
    for ky in range(kh):
        for kx in range(kw):
            rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
            cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
            acc += xr[:, rows, cols, :] * f[0, ky, kx, :]
    return acc


def reference_int16(x, filt, bias, d) -> np.ndarray:
    acc = depthwise_sums_int64(x, filt, (d.stride_h, d.stride_w), (d.dilation_h, d.dilation_w),
                               (d.pad_top, d.pad_left), d.output_shape[1:3])
    co = acc.shape[3]
    out = np.empty(acc.shape, np.int16)
    b = np.zeros(co, np.int64) if bias is None else bias.astype(np.int64)
    quant.requantize_int64_rows(acc.reshape(-1, co), b, d.output_multiplier, d.output_shift, 0,
                                d.output_activation_min, d.output_activation_max, out.reshape(-1, co))
    return out


@njit
def depthwise_int16_numba(x, w, out, sh, sw, dh, dw, pt, pl):
    """Direct 16x8 depthwise conv: int64 sums over in-image taps into ``out`` (channels innermost)."""
    n_b, h, wd, c = x.shape
    kh, kw, co = w.shape
    _, oh, ow, _ = out.shape
    mult = co // c
    acc = np.empty(co, np.int64)
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
                    acc[k] = 0
                for ky in range(ky0, ky1):
                    iy = y0 + ky * dh
                    for kx in range(kx0, kx1):
                        ix = x0 + kx * dw
                        if mult == 1:
                            for k in range(co):
                                acc[k] += np.int64(x[b, iy, ix, k]) * np.int64(w[ky, kx, k])
                        else:
                            for i in range(c):
                                v = np.int64(x[b, iy, ix, i])
                                for m in range(mult):
                                    acc[i * mult + m] += v * np.int64(w[ky, kx, i * mult + m])
                for k in range(co):
                    out[b, oy, ox, k] = acc[k]


def prepare_int16(context, node, p):
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (I8,), "filter")
    context.expect_dtype(node, y_t, (I16,), "output")
    if len(node.inputs) > 2 and b_t < 0:
        raise KernelError(f"DEPTHWISE_CONV_2D (node {node.index}): the bias slot is marked optional (-1); TFLite "
                          f"refuses that ('Tensor at index 2 was optional but was expected') — leave the slot out")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.int64,), "bias (TFLite's 16x8 depthwise takes int64 only)")
        _, bzp, _ = quant.quant_params(context, b_t)
        if np.any(bzp != 0):
            raise KernelError(f"DEPTHWISE_CONV_2D (node {node.index}): bias zero point {bzp.tolist()[:4]} is not 0")
    n, h, w, c = check_rank(node, context, x_t, 4)
    one, kh, kw, co = check_rank(node, context, f_t, 4, "filter")
    check_bias(node, context, b_t, co)
    if one != 1 or c == 0 or co % c:
        raise KernelError(f"DEPTHWISE_CONV_2D node {node.index}: filter {[one, kh, kw, co]} does not fit "
                          f"{c} input channels")
    in_s, out_s = quant.symmetric_int16_scales(node, context, x_t, y_t)
    sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
    oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
    f_scales, _, _ = quant.quant_params(context, f_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, co)
    code = p["fused_activation_function"]
    lo, hi = quant.activation_range_quantized(code, out_s, 0, quant.INT16_MIN, quant.INT16_MAX)
    context.set_output(y_t, (n, oh, ow, co), I16)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(co, np.int64)
    return DepthwiseConv2DInt16Data(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, pt, pl, co // c, (n, oh, ow, co),
                                    activation_name(code), in_s, 0, f_scales, out_s, 0, eff, mult, shift, lo, hi,
                                    "numba", len(f_scales) > 1, "int64",
                                    None if filt is None else np.ascontiguousarray(filt.reshape(kh, kw, co)),
                                    None if bias is None else bias.astype(np.int64),
                                    np.empty((n, oh, ow, co), np.int64))


def invoke_int16(context, node, d) -> None:
    tensors = context.tensors
    w = d.weights
    if w is None:
        f = tensors[node.inputs[1]]
        w = f.reshape(f.shape[1:])
    bias = d.bias if d.bias is not None else tensors[node.inputs[2]].astype(np.int64)
    out = tensors[node.outputs[0]]
    depthwise_int16_numba(tensors[node.inputs[0]], w, d.acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                          d.pad_top, d.pad_left)
    co = out.shape[3]
    requantize.requantize_int64_rows_jit(d.acc.reshape(-1, co), bias, d.output_multiplier, d.output_shift, 0,
                                    d.output_activation_min, d.output_activation_max, out.reshape(-1, co))


@kernel(BuiltinOperator.DEPTHWISE_CONV_2D, versions=(1, 2, 3, 6))
class DepthwiseConv2D(Kernel):
    name = "depthwise_conv_2d"

    def prepare(self, context, node):
        p = node.params
        x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
        if context.dtype(x_t) == U8 or (context.dtype(x_t) == F32 and context.dtype(f_t) == I8):
            return prepare_uint8_or_hybrid(context, node, p)
        if context.dtype(x_t) == I8:
            return prepare_int8(context, node, p)
        if context.dtype(x_t) == I16:
            return prepare_int16(context, node, p)
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
        if type(d) is DepthwiseConv2DHybridData:
            return invoke_hybrid(context, node, d)
        if type(d) is DepthwiseConv2DUint8Data:
            return invoke_uint8(context, node, d)
        if type(d) is DepthwiseConv2DInt16Data:
            return invoke_int16(context, node, d)
        if type(d) is DepthwiseConv2DInt8Data:
            w = d.weights
            if w is None:
                f = tensors[node.inputs[1]]
                w = f.reshape(f.shape[1:])
            bias = d.bias if d.bias is not None else tensors[node.inputs[2]].astype(np.int64)
            out = tensors[node.outputs[0]]
            run_rows(depthwise_int8_rows, out.shape[0] * out.shape[1], context.num_threads, tensors[node.inputs[0]], w,
                     bias, d.output_multiplier, d.output_shift, d.output_zero_point, d.output_activation_min,
                     d.output_activation_max, d.half_up, d.vector_channels, out, d.stride_h, d.stride_w, d.dilation_h,
                     d.dilation_w, d.pad_top, d.pad_left, d.input_zero_point,
                     work=out.size * w.shape[0] * w.shape[1])
            return
        w = d.weights
        if w is None:
            f = tensors[node.inputs[1]]
            w = f.reshape(f.shape[1:])
        bias = d.bias if d.bias is not None else tensors[node.inputs[2]]
        out = tensors[node.outputs[0]]
        run_rows(depthwise_rows, out.shape[0] * out.shape[1], context.num_threads, tensors[node.inputs[0]], w, bias,
                 out, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top, d.pad_left,
                 np.float32(d.output_activation_min), np.float32(d.output_activation_max),
                 work=out.size * w.shape[0] * w.shape[1])

    def invoke_reference(self, context, node, d):
        tensors = context.tensors
        b_t = node.input(2)
        if type(d) in (DepthwiseConv2DUint8Data, DepthwiseConv2DHybridData):
            return invoke_reference_uint8_or_hybrid(context, node, d)
        if type(d) is DepthwiseConv2DInt16Data:
            tensors[node.outputs[0]][...] = reference_int16(tensors[node.inputs[0]], tensors[node.inputs[1]],
                                                            tensors[b_t] if b_t >= 0 else None, d)
            return
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


# ----------------------------------------------------------------------------------------------
# uint8 / hybrid
#
# uint8 (version 1; 2 with dilation): acc = Σ (filter − filter_zero_point)·(input −
# input_zero_point) over in-image taps (+ int32 bias), the legacy per-tensor multiplier
# (:func:`workbench.interpreter.quant.legacy_conv_multiplier`), + output_zero_point, clamped.  litert's
# uint8 depthwise kernel rounds every tie away from zero (gemmlowp's RoundingDivideByPOT, with its
# sign fix-up, in the vector loop too): ``rounding = "away"``, unlike int8 (measured).
#
# hybrid (float32 input/output, int8 filter with one scale per output channel; version 6): each
# batch image is quantized asymmetrically, acc = Σ filter·(q − input_offsets[b]) over in-image taps
# (int32), and in float32 the channels are scaled in two orders, as litert's x86 kernel does: the
# first 4·⌊C·M/4⌋ channels (its 4-wide vector loop) as (acc·filter_scale[c])·scaling_factors[b], the
# remaining ones as (acc·scaling_factors[b])·filter_scale[c]; + bias; then max(·, min) and min(·, max)
# of the float activation range.  TFLite reads the depth multiplier from the options here, so it
# must match the shapes.  A per-tensor filter scale (version 4) is not registered: TFLite's prepare
# requires one scale per output channel.

U8 = np.dtype(np.uint8)


def _depthwise_geometry(context, node, p):
    x_t, f_t, b_t = node.input(0), node.input(1), node.input(2)
    n, h, w, c = check_rank(node, context, x_t, 4)
    one, kh, kw, co = check_rank(node, context, f_t, 4, "filter")
    check_bias(node, context, b_t, co)
    if one != 1 or c == 0 or co % c:
        raise KernelError(f"DEPTHWISE_CONV_2D node {node.index}: filter {[one, kh, kw, co]} does not fit "
                          f"{c} input channels")
    sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
    oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
    return n, h, w, c, kh, kw, co, sh, sw, dh, dw, oh, ow, pt, pl


@njit
def depthwise_offsets_numba(x, w, out, sh, sw, dh, dw, pt, pl, in_offsets, w_zp):
    """int32 Σ (x − in_offsets[b])·(w − w_zp) over in-image taps into ``out`` (one input offset per
    batch image: the uint8 zero point, or a hybrid image's own zero point)."""
    n_b, h, wd, c = x.shape
    kh, kw, co = w.shape
    _, oh, ow, _ = out.shape
    mult = co // c
    acc = np.empty(co, np.int32)
    for b in range(n_b):
        off = np.int32(in_offsets[b])
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
                                acc[k] += (np.int32(x[b, iy, ix, k]) - off) * (np.int32(w[ky, kx, k]) - w_zp)
                        else:
                            for i in range(c):
                                v = np.int32(x[b, iy, ix, i]) - off
                                for m in range(mult):
                                    acc[i * mult + m] += v * (np.int32(w[ky, kx, i * mult + m]) - w_zp)
                for k in range(co):
                    out[b, oy, ox, k] = acc[k]


def depthwise_sums_offsets(x, filt, in_offsets, w_zp, d) -> np.ndarray:
    """The plain numpy twin of :func:`depthwise_offsets_numba` (int64, zero border, tap by tap)."""
    n, h, w, c = x.shape
    _, kh, kw, co = filt.shape
    mult = co // c
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = ((d.stride_h, d.stride_w), (d.dilation_h, d.dilation_w),
                                             (d.pad_top, d.pad_left), d.output_shape[1:3])
    if n * oh * ow * co == 0:           # an empty output
        return np.zeros((n, oh, ow, co), np.int64)
    need_h = (oh - 1) * sh + (kh - 1) * dh + 1
    need_w = (ow - 1) * sw + (kw - 1) * dw + 1
    xp = np.zeros((n, max(pt + h, need_h), max(pl + w, need_w), c), np.int64)
    xp[:, pt:pt + h, pl:pl + w, :] = x.astype(np.int64) - np.asarray(in_offsets, np.int64).reshape(-1, 1, 1, 1)
    xr = np.repeat(xp, mult, axis=3)
    f = filt.astype(np.int64) - w_zp
    acc = np.zeros((n, oh, ow, co), np.int64)
    for ky in range(kh):
        for kx in range(kw):
            rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
            cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
            acc += xr[:, rows, cols, :] * f[0, ky, kx, :]
    return acc


@opdata
class DepthwiseConv2DUint8Data(DepthwiseGeometry):
    input_scale: float
    input_zero_point: int
    filter_scale: float
    filter_zero_point: int
    output_scale: float
    output_zero_point: int
    effective_scale: float          # float32(input_scale·filter_scale) / output_scale (legacy recipe)
    output_multiplier: int
    output_shift: int
    output_activation_min: int
    output_activation_max: int
    impl: str = "numba"
    weights: object = None          # uint8 [KH, KW, C*M] (when constant)
    bias: object = None             # int64 [C*M] (zeros when absent)
    acc: object = None              # scratch int32 [N, OH, OW, C*M]
    rounding: str = "away"          # litert's uint8 depthwise: ties away from zero everywhere
    multipliers: object = dataclasses.field(default=None, repr=False)   # int64 [C*M], one value repeated
    shifts: object = dataclasses.field(default=None, repr=False)

    @property
    def half_up(self) -> bool:
        return self.rounding == "up"


def reference_uint8(x, filt, bias, d) -> np.ndarray:
    acc = depthwise_sums_offsets(x, filt, np.full(x.shape[0], d.input_zero_point), d.filter_zero_point, d)
    if bias is not None:
        acc += bias.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.half_up)
    return np.clip(v + d.output_zero_point, d.output_activation_min, d.output_activation_max).astype(np.uint8)


def prepare_uint8(context, node, p):
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (U8,), "filter")
    context.expect_dtype(node, y_t, (U8,), "output")
    n, h, w, c, kh, kw, co, sh, sw, dh, dw, oh, ow, pt, pl = _depthwise_geometry(context, node, p)
    in_s, in_zp, f_s, f_zp, out_s, out_zp, real, m, s = quant.uint8_matrix_scales(node, context, x_t, f_t, b_t, y_t)
    code = p["fused_activation_function"]
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp, 0, 255)
    context.set_output(y_t, (n, oh, ow, co), U8)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(co, np.int32)
    return DepthwiseConv2DUint8Data(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, pt, pl, co // c, (n, oh, ow, co),
                                    activation_name(code), in_s, in_zp, f_s, f_zp, out_s, out_zp, real, m, s, lo,
                                    hi, "numba", None if filt is None else np.ascontiguousarray(filt.reshape(kh, kw, co)),
                                    None if bias is None else bias.astype(np.int64),
                                    np.empty((n, oh, ow, co), np.int32), "away", np.full(co, m, np.int64),
                                    np.full(co, s, np.int64))


def invoke_uint8(context, node, d) -> None:
    tensors = context.tensors
    x = tensors[node.inputs[0]]
    w = d.weights
    if w is None:
        f = tensors[node.inputs[1]]
        w = f.reshape(f.shape[1:])
    bias = d.bias if d.bias is not None else tensors[node.inputs[2]].astype(np.int64)
    out = tensors[node.outputs[0]]
    depthwise_offsets_numba(x, w, d.acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top, d.pad_left,
                            np.full(x.shape[0], d.input_zero_point, np.int32), d.filter_zero_point)
    co = out.shape[3]
    requantize.requantize_rows_jit(d.acc.reshape(-1, co), bias, d.multipliers, d.shifts, d.output_zero_point,
                              d.output_activation_min, d.output_activation_max, out.reshape(-1, co), d.half_up)


@opdata
class DepthwiseConv2DHybridData(DepthwiseGeometry):
    filter_scale: object            # float32 [C*M]
    output_activation_min: float
    output_activation_max: float
    vector_channels: int            # 4·⌊C·M/4⌋: channels scaled as (acc·filter_scale)·scaling_factor
    impl: str = "quantize(numba)+numba"
    weights: object = None          # int8 [KH, KW, C*M]
    bias: object = None             # float32 [C*M] (zeros when absent)
    input_quantized: object = None  # scratch int8 [N, H, W, C]: the last input, quantized image by image
    scaling_factors: object = None  # scratch float32 [N]
    input_offsets: object = None    # scratch int32 [N]: each image's zero point
    acc: object = None              # scratch int32 [N, OH, OW, C*M]


def hybrid_depthwise_output(acc, scaling_factors, d) -> np.ndarray:
    """Float tail of hybrid DEPTHWISE_CONV_2D: int sums [N, OH, OW, C*M] → float32 (see the section comment)."""
    accf = np.asarray(acc).astype(np.float32)
    fs = np.asarray(d.filter_scale, np.float32)
    s = np.asarray(scaling_factors, np.float32).reshape(-1, 1, 1, 1)
    nv = d.vector_channels
    out = np.empty(accf.shape, np.float32)
    out[..., :nv] = ((accf[..., :nv] * fs[:nv]).astype(np.float32) * s).astype(np.float32)
    out[..., nv:] = ((accf[..., nv:] * s).astype(np.float32) * fs[nv:]).astype(np.float32)
    out = (out + d.bias).astype(np.float32)
    return quant.std_min(quant.std_max(out, d.output_activation_min), d.output_activation_max)


@njit
def hybrid_depthwise_output_jit(acc, sf, fs, bias, n_vec, lo, hi, out):
    """:func:`hybrid_depthwise_output` in one compiled loop (float32 throughout, same order)."""
    n_b, oh, ow, co = acc.shape
    for b in range(n_b):
        s = sf[b]
        for y in range(oh):
            for x in range(ow):
                for c in range(co):
                    a = np.float32(acc[b, y, x, c])
                    if c < n_vec:
                        v = (a * fs[c]) * s
                    else:
                        v = (a * s) * fs[c]
                    v = v + bias[c]
                    if v < lo:
                        v = lo
                    if hi < v:
                        v = hi
                    out[b, y, x, c] = v


def reference_hybrid(x, filt, d) -> np.ndarray:
    n = x.shape[0]
    q, sf, zp = quant.asymmetric_quantize_rows(np.asarray(x, np.float32).reshape(n, -1))
    acc = depthwise_sums_offsets(q.reshape(x.shape), filt, zp, 0, d)
    return hybrid_depthwise_output(acc, sf, d)


def prepare_hybrid(context, node, p):
    f_t, b_t, y_t = node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, y_t, (F32,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    n, h, w, c, kh, kw, co, sh, sw, dh, dw, oh, ow, pt, pl = _depthwise_geometry(context, node, p)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(co, np.float32)
    if filt is None or bias is None:
        raise UnsupportedOpError(f"DEPTHWISE_CONV_2D (node {node.index}): hybrid filter and bias must be constant "
                                 f"tensors")
    if context.packed_bits(f_t):
        raise UnsupportedOpError(f"DEPTHWISE_CONV_2D (node {node.index}): a float input with an "
                                 f"int{context.packed_bits(f_t)} filter '{context.name(f_t)}' (hybrid); litert 2.3 "
                                 f"refuses it too ('Type FLOAT32 with filter type INT4 not currently supported')")
    fs, _ = quant.hybrid_filter_scales(node, context, f_t, co, 3, "filter")
    if len(fs) != co:
        raise UnsupportedOpError(f"DEPTHWISE_CONV_2D (node {node.index}): a hybrid filter needs one scale per output "
                                 f"channel ({co}); TFLite's prepare refuses a per-tensor scale")
    if p.get("depth_multiplier", 0) != co // c:
        raise UnsupportedOpError(f"DEPTHWISE_CONV_2D (node {node.index}): depth_multiplier option is "
                                 f"{p.get('depth_multiplier', 0)} but the shapes say {co // c}; TFLite's hybrid "
                                 f"kernel reads the option, so it must match")
    code = p["fused_activation_function"]
    lo, hi = activation_range(code)
    context.set_output(y_t, (n, oh, ow, co), F32)
    return DepthwiseConv2DHybridData(
        PADDING_NAMES[p["padding"]], sh, sw, dh, dw, pt, pl, co // c, (n, oh, ow, co), activation_name(code), fs,
        lo, hi, (co // 4) * 4,
        (f"int{context.packed_bits(f_t)} weights (unpacked to int8), " if context.packed_bits(f_t) else "")
        + "quantize(numba)+numba", np.ascontiguousarray(filt.reshape(kh, kw, co)),
        np.ascontiguousarray(bias, np.float32), np.zeros((n, h, w, c), np.int8), np.ones(n, np.float32),
        np.zeros(n, np.int32), np.empty((n, oh, ow, co), np.int32))


def invoke_hybrid(context, node, d) -> None:
    tensors = context.tensors
    x = tensors[node.inputs[0]]
    n = x.shape[0]
    requantize.quantize_rows_jit(x.reshape(n, -1), True, d.input_quantized.reshape(n, -1), d.scaling_factors,
                            d.input_offsets)
    depthwise_offsets_numba(d.input_quantized, d.weights, d.acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                            d.pad_top, d.pad_left, d.input_offsets, 0)
    hybrid_depthwise_output_jit(d.acc, d.scaling_factors, d.filter_scale, d.bias, d.vector_channels,
                                np.float32(d.output_activation_min), np.float32(d.output_activation_max),
                                tensors[node.outputs[0]])


def prepare_uint8_or_hybrid(context, node, p):
    """The dtype branch of prepare: a uint8 input, or a float input with an int8 filter (hybrid)."""
    if context.dtype(node.input(0)) == U8:
        return prepare_uint8(context, node, p)
    return prepare_hybrid(context, node, p)


def invoke_reference_uint8_or_hybrid(context, node, d) -> None:
    tensors = context.tensors
    b_t = node.input(2)
    if type(d) is DepthwiseConv2DUint8Data:
        y = reference_uint8(tensors[node.inputs[0]], tensors[node.inputs[1]], tensors[b_t] if b_t >= 0 else None, d)
    else:
        y = reference_hybrid(tensors[node.inputs[0]], tensors[node.inputs[1]], d)
    tensors[node.outputs[0]][...] = y
