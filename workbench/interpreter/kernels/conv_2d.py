"""CONV_2D (float32): input NHWC, filter OHWI, optional bias [O] → output NHWC.

Padding and output size follow TFLite's ``padding.h`` (TFLITE_FACTS §3.3).  When the filter has
fewer input channels than the input, the convolution is grouped (version 6): groups =
input channels / filter channels, and output channel ``o`` reads group ``o // (O / groups)``.

int8 (version 3; per-tensor or per-channel filter scales): TFLITE_FACTS §4.5.  The int32 sum
Σ filter·(input − input_zero_point) (+ bias) is requantized per output channel with
``output_multiplier[c]`` / ``output_shift[c]``, moved by ``output_zero_point`` and clamped.  Ties of
the last rounding shift go up (ruy), except in grouped convolutions (version 6), which litert runs
through its reference kernel: ties away from zero there (measured; ``rounding`` in the OpData).  The fast
path computes the sums with a float BLAS product that is provably exact (see
:func:`workbench.interpreter.quant.exact_float_dtype`), then requantizes in a numba loop; on a CPU
with AVX-512 VNNI, products of at least ``_vnni.MIN_MACS`` multiply-adds use the int8 dot-product
instruction instead, on a packed copy of the int8 filter (:mod:`workbench.perf.vnni`;
im2col, sums and requantization in one pass, split over ``num_threads`` threads);
:func:`reference_int8` does the same in plain int64 numpy, tap by tap.

Three ways to compute the same thing (float32):
  * :func:`reference`  one matrix product per filter tap, obvious and slow-ish;
  * ``matmul`` / ``im2col+blas``  (fast path) a 1x1 convolution is a matrix product; a KxK one
    becomes one after copying every window into a row of a prepared "im2col" matrix;
  * :func:`conv_numba`  a direct loop nest compiled by numba (used for grouped convolutions).

16x8 (int16 input and output, int8 filter; version 8 — or whatever version a file stores, as in the
converter's 16x8 files that keep the int8 version 3: TFLite picks the arithmetic from the tensor
types).  TFLite's rules (conv.cc Prepare): input and output zero points 0, filter zero points 0, a
bias is required, int64 or int32; the option ``quantized_bias_type`` (INT32/INT64) must match it.
Which kernel runs decides the rounding (all measured against litert on x86):
  * int64 bias → the reference kernel: int64 sums, the int64 overload of
    MultiplyByQuantizedMultiplier (multiplier rounded to 16 bits, one rounding, ties up);
  * int32 bias with ``quantized_bias_type=INT32`` → ruy (grouped: the int32 reference kernel): int32
    sums that wrap around on overflow, the double rounding of int8, last-shift ties up (ruy) or away
    from zero (grouped);
  * int32 bias with the option unset → TFLite reads the bias as int64 (past its end): undefined
    output, so the workbench refuses the model.
Fast path: im2col + an exact float BLAS product (:func:`workbench.interpreter.quant.exact_matmul_dtype`;
float64 is exact for int16 × int8 sums) or a numba loop (grouped), then the recipe in numba;
:func:`reference_int16` is the plain int64 numpy version.

uint8 (version 1; grouped 6) and hybrid (float input/output, int8 filter; version 2, per-channel 5):
see the section "uint8 / hybrid" at the end of this file.  litert on x86 rounds uint8 ties up (ruy)
but away from zero for grouped uint8 convolutions (its reference kernel); hybrid convolutions follow
its float32 order of operations bit for bit (per-image quantization, NEON-style rounding of the first
8·⌊K/8⌋ values, SSE row sums), documented there and in :mod:`workbench.interpreter.quant`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ...perf.jit import njit, run_rows
from ..registry import Kernel, OpData, kernel, opdata
from ..fast import requantize   # moving to the speed layer (issue 15)
from ...perf import vnni as _vnni
from .. import quant
from ._common import (F32, PADDING_NAMES, activation_name, activation_range, apply_activation, check_bias,
                      check_rank, window)

I8 = np.dtype(np.int8)


@opdata
class ConvGeometry(OpData):
    """What every CONV_2D kernel prepares, float or int8: window, padding, groups, output shape."""

    padding: str
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    groups: int
    output_shape: tuple
    activation: str


@opdata
class Conv2DData(ConvGeometry):
    output_activation_min: float
    output_activation_max: float
    impl: str                   # "matmul" | "im2col+blas" | "numba"
    weights: object = None      # filter as a [KH*KW*I, O] matrix (im2col / matmul), when constant
    bias: object = None         # float32 [O] (zeros when the node has no bias)
    padded: object = None       # (in ``scratch``) the input with its zero border
    cols: object = None         # (in ``scratch``) the im2col matrix [N*OH*OW, KH*KW*I]
    scratch: object = None      # im2col: layout of cols (and padded) in context.scratch, shared by all nodes
    weight_bound: float | None = None   # max|w| · (KH*KW*I) for constant weights (overflow guard)


def weight_bound(weights) -> float:
    """max|w| times the length of a dot product: with max|x| it bounds every partial sum."""
    return float(max(weights.max(), -weights.min())) * weights.shape[0] if weights.size else 0.0


def padded_shape(x_shape, f_h, f_w, oh, ow, sh, sw, dh, dw, pt, pl) -> tuple:
    n, h, w, c = x_shape
    need_h = (oh - 1) * sh + (f_h - 1) * dh + 1
    need_w = (ow - 1) * sw + (f_w - 1) * dw + 1
    return n, max(pt + h, need_h), max(pl + w, need_w), c


@np.errstate(over="ignore", invalid="ignore")           # float inf / nan silently, as TFLite
def reference(x, filt, bias, stride, dilation, pad, out_hw, act_range) -> np.ndarray:
    """The slow, obvious conv: zero-pad, then for every filter tap add (window slice) @ W_tap^T."""
    n, h, w, c = x.shape
    o, kh, kw, ci = filt.shape
    groups = c // ci
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    if n * oh * ow * o == 0:            # an empty output (VALID, input smaller than the window)
        return np.zeros((n, oh, ow, o), np.float32)
    xp = np.zeros(padded_shape(x.shape, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl), np.float32)
    xp[:, pt:pt + h, pl:pl + w, :] = x
    out = np.zeros((n, oh, ow, o), np.float32)
    per_group = o // groups
    for g in range(groups):
        oc = slice(g * per_group, (g + 1) * per_group)
        icg = slice(g * ci, (g + 1) * ci)
        for ky in range(kh):
            for kx in range(kw):
                rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
                cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
                out[..., oc] += xp[:, rows, cols, icg] @ filt[oc, ky, kx, :].T
    if bias is not None:
        out += bias
    lo, hi = act_range
    return np.clip(out, lo, hi).astype(np.float32)


@njit
def conv_numba(x, w, bias, out, sh, sw, dh, dw, pt, pl, lo, hi):
    """Direct convolution (any groups/dilation); taps outside the image are skipped.  Each output
    sums its taps in TFLite's reference order (filter row, column, input channel) into one float32
    accumulator, then adds the bias and clamps, as litert's reference kernel (which runs grouped
    convolutions) does, so the bits agree."""
    n_b, h, wd, c = x.shape
    o, kh, kw, ci = w.shape
    _, oh, ow, _ = out.shape
    groups = c // ci
    per_group = o // groups
    acc = np.empty(o, np.float32)
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for oc in range(o):
                    acc[oc] = np.float32(0.0)
                for ky in range(kh):
                    iy = oy * sh - pt + ky * dh
                    if iy < 0 or iy >= h:
                        continue
                    for kx in range(kw):
                        ix = ox * sw - pl + kx * dw
                        if ix < 0 or ix >= wd:
                            continue
                        for oc in range(o):
                            base = (oc // per_group) * ci
                            t = acc[oc]
                            for i in range(ci):
                                t += x[b, iy, ix, base + i] * w[oc, ky, kx, i]
                            acc[oc] = t
                for oc in range(o):
                    v = acc[oc] + bias[oc]
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    out[b, oy, ox, oc] = v


def filter_matrix(filt: np.ndarray) -> np.ndarray:
    """OHWI filter → [KH*KW*I, O] matrix for (im2col rows) @ matrix.

    The transposed *view* of the [O, KH*KW*I] filter, not a copy: BLAS reads a transposed operand
    as it is, so the weights stay in the model file's (memory-mapped) buffer.
    """
    return np.asarray(filt, np.float32).reshape(filt.shape[0], -1).T


GUARD_CHUNK = 4096      # the guard's "rows": pieces of this many input values


@njit(nogil=True)
def float_guard_rows(flat, limit, flags, r0, r1):
    """``flags[0]`` = 1 when a value of pieces r0..r1 of ``flat`` (pieces of ``GUARD_CHUNK`` values)
    is not below ``limit`` in magnitude (or is NaN).

    With ``limit`` = 1e38 / (max|w| · dot length), no product or partial sum of the node can
    overflow float32 unless a flag is raised; when one could, BLAS's order and fused multiply-adds
    may turn litert's inf + (-inf) = NaN into ±FLT_MAX (or the other way round), so the caller
    runs the per-tap reference, whose order litert agrees with."""
    for r in range(r0, r1):
        piece = flat[r * GUARD_CHUNK:(r + 1) * GUARD_CHUNK]
        bad = False
        for j in range(piece.size):
            bad |= not abs(piece[j]) < limit       # no early exit inside a piece: the loop vectorises
        if bad:
            flags[0] = 1
            return


def guard_limit(bound: float) -> np.float32:
    """The guard's float32 limit for weights of ``bound`` (max|w| · dot length): 1e38 / bound rounded
    down, so that float32 comparisons are never laxer than the exact ones."""
    limit = 1e38 / bound if bound > 0 else np.inf
    if not limit <= float(np.finfo(np.float32).max):    # every finite float32 passes, inf and NaN do not
        return np.float32(np.inf)
    lf = np.float32(limit)     # float32 against float32: twice as many lanes as against a float64 limit
    return np.nextafter(lf, np.float32(0)) if float(lf) > limit else lf


@njit(nogil=True)
def im2col_rows(x, cols6, sh, sw, dh, dw, pt, pl, r0, r1):
    """The im2col matrix's rows for output image rows r0..r1 (row r = image r // OH, output row
    r % OH): ``cols6[b, oy, ox, ky, kx, :]`` is the input pixel under tap (ky, kx) of output
    (oy, ox), or zeros where the tap falls in the padding — no padded copy of the input."""
    _, h, w, c = x.shape
    _, oh, ow, kh, kw, _ = cols6.shape
    for r in range(r0, r1):
        b, oy = r // oh, r % oh
        for ox in range(ow):
            for ky in range(kh):
                iy = oy * sh - pt + ky * dh
                for kx in range(kw):
                    ix = ox * sw - pl + kx * dw
                    if 0 <= iy < h and 0 <= ix < w:
                        for i in range(c):
                            cols6[b, oy, ox, ky, kx, i] = x[b, iy, ix, i]
                    else:
                        for i in range(c):
                            cols6[b, oy, ox, ky, kx, i] = 0.0


@njit(nogil=True)
def float_epilogue_rows(out2d, bias, lo, hi, r0, r1):
    """Rows r0..r1 of the float fast path after its BLAS product: + bias, then the clamp to [lo, hi],
    in one pass (shared among the threads by :func:`workbench.perf.jit.run_rows`)."""
    n = out2d.shape[1]
    for r in range(r0, r1):
        for j in range(n):
            out2d[r, j] = min(max(out2d[r, j] + bias[j], lo), hi)


def im2col_view(src: np.ndarray, oh, ow, kh, kw, sh, sw, dh, dw) -> np.ndarray:
    """A [N, OH, OW, KH, KW, C] strided view of every window of ``src`` (no copy)."""
    sN, sH, sW, sC = src.strides
    n, _, _, c = src.shape
    return np.lib.stride_tricks.as_strided(src, (n, oh, ow, kh, kw, c),
                                           (sN, sH * sh, sW * sw, sH * dh, sW * dw, sC), writeable=False)


@opdata
class Conv2DInt8Data(ConvGeometry):
    input_scale: float
    input_zero_point: int
    filter_scale: object            # float32 [1] (per tensor) or [O] (per channel)
    output_scale: float
    output_zero_point: int
    effective_scale: object         # float64 [O]: input_scale * filter_scale[c] / output_scale
    output_multiplier: object       # int64 [O]: quantize_multiplier(effective_scale[c])[0]
    output_shift: object            # int64 [O]: ... [1] (positive = left shift)
    output_activation_min: int
    output_activation_max: int
    impl: str                       # "vnni(int8, exact)" | "im2col+blas(float32, exact)" | "...float64..." | "numba"
    per_channel: bool = False
    bias: object = None             # int32 [O] (zeros when absent)
    bias_folded: object = None      # int64 [O]: bias − input_zero_point·Σw  (the fast path's bias;
                                    # vnni: bias − (input_zero_point + 128)·Σw, see interpreter._vnni)
    weights: object = None          # float [KH*KW*I, O]; vnni: the int8 filter packed for vpdpbusd
    padded: object = None           # (in ``scratch``) input with a border of input_zero_point
    cols: object = None             # (in ``scratch``) float im2col matrix
    acc: object = None              # (in ``scratch``) float [N*OH*OW, O] exact int sums
    rounding: str = "up"          # ties of the final rounding shift: "up" (what TFLite runs on x86:
                                  # ruy / NEON vrshl) or "away" (reference kernels, gemmlowp)
    scratch: object = None          # BLAS path: layout of cols, acc (and padded) in context.scratch,
                                    # the buffer all nodes share (the three fields above stay None)

    @property
    def half_up(self) -> bool:
        return self.rounding == "up"


def reference_int8(x, filt, bias, stride, dilation, pad, out_hw, d) -> np.ndarray:
    """The obvious int8 conv: (x − zp) zero-padded, int64 sums tap by tap, then requantize."""
    n, h, w, c = x.shape
    o, kh, kw, ci = filt.shape
    groups = c // ci
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    if n * oh * ow * o == 0:            # an empty output
        return np.zeros((n, oh, ow, o), np.int8)
    xp = np.zeros(padded_shape(x.shape, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl), np.int64)
    xp[:, pt:pt + h, pl:pl + w, :] = x.astype(np.int64) - d.input_zero_point
    acc = np.zeros((n, oh, ow, o), np.int64)
    per_group = o // groups
    f64 = filt.astype(np.int64)
    for g in range(groups):
        oc = slice(g * per_group, (g + 1) * per_group)
        icg = slice(g * ci, (g + 1) * ci)
        for ky in range(kh):
            for kx in range(kw):
                rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
                cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
                acc[..., oc] += xp[:, rows, cols, icg] @ f64[oc, ky, kx, :].T
    if bias is not None:
        acc += bias.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.half_up) + d.output_zero_point
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(np.int8)


@njit
def conv_int8_numba(x, w, out, sh, sw, dh, dw, pt, pl, in_zp):
    """Direct int8 convolution (any groups/dilation): int32 sums over in-image taps into ``out``."""
    n_b, h, wd, c = x.shape
    o, kh, kw, ci = w.shape
    _, oh, ow, _ = out.shape
    groups = c // ci
    per_group = o // groups
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for oc in range(o):
                    base = (oc // per_group) * ci
                    acc = np.int32(0)
                    for ky in range(kh):
                        iy = oy * sh - pt + ky * dh
                        if iy < 0 or iy >= h:
                            continue
                        for kx in range(kw):
                            ix = ox * sw - pl + kx * dw
                            if ix < 0 or ix >= wd:
                                continue
                            for i in range(ci):
                                acc += np.int32(w[oc, ky, kx, i]) * (np.int32(x[b, iy, ix, base + i]) - in_zp)
                    out[b, oy, ox, oc] = acc


def prepare_int8(context, node, p, n, h, w, c, o, kh, kw, ci, groups, sh, sw, dh, dw, oh, ow, pt, pl):
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (I8,), "filter")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.int32,), "bias")
    in_s, in_zp = quant.tensor_scale_zp(context, x_t)
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    f_scales, _, _ = quant.quant_params(context, f_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, o)
    code = p["fused_activation_function"]
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp)
    context.set_output(y_t, (n, oh, ow, o), I8)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(o, np.int32)
    weights = padded = cols = acc = folded = scratch = None
    if groups > 1 or filt is None or bias is None:
        impl = "numba"
    elif _vnni.worth_it(n * oh * ow, kh * kw * c, o):
        w2d = filt.reshape(o, -1)                            # [O, K]
        weights = _vnni.pack_filter(w2d)
        folded = _vnni.folded_bias(bias, w2d, in_zp)
        impl = "vnni(int8, exact)"
    else:
        wmat = filt.reshape(o, -1).T.astype(np.int64)        # [K, O]
        fdt = quant.exact_float_dtype(float(np.abs(wmat).sum(axis=0).max(initial=0)))
        weights = np.ascontiguousarray(wmat, fdt)
        folded = bias.astype(np.int64) - in_zp * wmat.sum(axis=0)
        pshape = padded_shape((n, h, w, c), kh, kw, oh, ow, sh, sw, dh, dw, pt, pl)
        direct = kh == kw == 1 and sh == sw == 1 and pshape[1:3] == (h, w)
        need = [((n * oh * ow, kh * kw * c if not direct else c), fdt), ((n * oh * ow, o), fdt)]
        if not direct and pshape[1:3] != (h, w):
            need.append((pshape, np.int8))                    # a border of zero points adds 0
        scratch = context.scratch.reserve(*need)
        impl = f"{'matmul' if direct else 'im2col+blas'}({fdt.name}, exact)"
    return Conv2DInt8Data(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, kh, kw, pt, pl, groups, (n, oh, ow, o),
                          activation_name(code), in_s, in_zp, f_scales, out_s, out_zp, eff, mult, shift, lo, hi, impl,
                          len(f_scales) > 1, None if bias is None else np.ascontiguousarray(bias, np.int32), folded,
                          weights, padded, cols, acc, rounding="away" if groups > 1 else "up", scratch=scratch)


def invoke_int8(context, node, d) -> None:
    tensors = context.tensors
    x = tensors[node.inputs[0]]
    out = tensors[node.outputs[0]]
    if d.impl.startswith("vnni"):
        _, oh, ow, o = out.shape
        _vnni.conv(x, d.weights, d.bias_folded, d.output_multiplier, d.output_shift, d.output_zero_point,
                   d.output_activation_min, d.output_activation_max, d.half_up, out.reshape(-1, o),
                   (oh, ow, d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top,
                    d.pad_left, d.input_zero_point + 128), context.num_threads)
        return
    if d.impl == "numba":
        bias = d.bias if d.bias is not None else tensors[node.inputs[2]]
        acc = np.empty(out.shape, np.int32)
        conv_int8_numba(x, tensors[node.inputs[1]], acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                        d.pad_top, d.pad_left, d.input_zero_point)
        o = out.shape[3]
        requantize.requantize_rows_jit(acc.reshape(-1, o), bias.astype(np.int64), d.output_multiplier, d.output_shift,
                                  d.output_zero_point, d.output_activation_min, d.output_activation_max,
                                  out.reshape(-1, o), d.half_up)
        return
    o = out.shape[3]
    cols, acc, *padded = context.scratch.views(d.scratch)
    if d.impl.startswith("matmul"):
        np.copyto(cols, x.reshape(-1, x.shape[3]), casting="unsafe")
    else:
        src = x
        if padded:
            src = padded[0]
            src.fill(d.input_zero_point)
            h, w = x.shape[1], x.shape[2]
            src[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = x
        _, oh, ow, _ = out.shape
        view = im2col_view(src, oh, ow, d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w)
        np.copyto(cols.reshape(view.shape), view, casting="unsafe")
    np.matmul(cols, d.weights, out=acc)
    requantize.requantize_rows_jit(acc, d.bias_folded, d.output_multiplier, d.output_shift, d.output_zero_point,
                              d.output_activation_min, d.output_activation_max, out.reshape(-1, o), d.half_up)


# ----------------------------------------------------------------------------------------------
# 16x8: int16 input/output, int8 filter (per-tensor or per-channel), int64 or int32 bias


I16 = np.dtype(np.int16)


@opdata
class Conv2DInt16Data(ConvGeometry):
    input_scale: float
    input_zero_point: int           # 0: int16 activations are symmetric (TFLite refuses others)
    filter_scale: object            # float32 [1] or [O]
    output_scale: float
    output_zero_point: int          # 0
    effective_scale: object         # float64 [O]: input_scale * filter_scale[c] / output_scale
    output_multiplier: object       # int64 [O]
    output_shift: object            # int64 [O]
    output_activation_min: int
    output_activation_max: int
    bias_type: str                  # "int64" | "int32"
    quantized_bias_type: str        # the option: "unset" | "int32" | "int64"
    recipe: str                     # "int64": int64 sums, MultiplyByQuantizedMultiplier(int64) (reference
                                    # kernel); "int32": int32 sums that wrap, double rounding (ruy, or the
                                    # reference kernel for grouped convolutions)
    rounding: str                   # ties of the last rounding: "up" (int64 overload; ruy) | "away"
    impl: str                       # "im2col+blas(float64, exact)" | "numba"
    per_channel: bool = False
    bias: object = None             # int64 [O] (the bias values, whatever their stored type)
    weights: object = None          # float [KH*KW*I, O] (BLAS path)
    padded: object = None           # scratch: the input with a zero border
    cols: object = None             # scratch: im2col matrix
    acc: object = None              # scratch: [N*OH*OW, O] exact sums

    @property
    def up_channels(self) -> int:
        """Channels whose final rounding sends ties up ("int32" recipe): all (ruy) or none."""
        return len(self.output_multiplier) if self.rounding == "up" else 0


def conv_sums_int64(x, filt, stride, dilation, pad, out_hw) -> np.ndarray:
    """Σ filter·input over in-image taps, in int64 numpy, tap by tap (zero border, any groups)."""
    n, h, w, c = x.shape
    o, kh, kw, ci = filt.shape
    groups = c // ci
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    if n * oh * ow * o == 0:            # an empty output
        return np.zeros((n, oh, ow, o), np.int64)
    xp = np.zeros(padded_shape(x.shape, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl), np.int64)
    xp[:, pt:pt + h, pl:pl + w, :] = x
    acc = np.zeros((n, oh, ow, o), np.int64)
    per_group = o // groups
    f64 = filt.astype(np.int64)
    for g in range(groups):
        oc = slice(g * per_group, (g + 1) * per_group)
        icg = slice(g * ci, (g + 1) * ci)
        for ky in range(kh):
            for kx in range(kw):
                rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
                cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
                acc[..., oc] += xp[:, rows, cols, icg] @ f64[oc, ky, kx, :].T
    return acc


def requantize_16x8(acc2d, bias, d, out2d, jit: bool) -> None:
    """acc2d [rows, O] (exact integer sums) + bias → int16 out2d, by the node's recipe."""
    args = (acc2d, bias, d.output_multiplier, d.output_shift, d.output_zero_point, d.output_activation_min,
            d.output_activation_max, out2d)
    if d.recipe == "int64":
        (requantize.requantize_int64_rows_jit if jit else quant.requantize_int64_rows)(*args)
    else:
        (requantize.requantize_int32_rows_jit if jit else quant.requantize_int32_rows)(*args, d.up_channels)


def reference_int16(x, filt, bias, d) -> np.ndarray:
    """The obvious 16x8 conv: int64 sums tap by tap, then the recipe in plain numpy."""
    acc = conv_sums_int64(x, filt, (d.stride_h, d.stride_w), (d.dilation_h, d.dilation_w), (d.pad_top, d.pad_left),
                          d.output_shape[1:3])
    o = acc.shape[3]
    out = np.empty(acc.shape, np.int16)
    requantize_16x8(acc.reshape(-1, o), bias.astype(np.int64), d, out.reshape(-1, o), jit=False)
    return out


@njit
def conv_int16_numba(x, w, out, sh, sw, dh, dw, pt, pl):
    """Direct 16x8 convolution (any groups/dilation): int64 sums over in-image taps into ``out``."""
    n_b, h, wd, c = x.shape
    o, kh, kw, ci = w.shape
    _, oh, ow, _ = out.shape
    groups = c // ci
    per_group = o // groups
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for oc in range(o):
                    base = (oc // per_group) * ci
                    acc = np.int64(0)
                    for ky in range(kh):
                        iy = oy * sh - pt + ky * dh
                        if iy < 0 or iy >= h:
                            continue
                        for kx in range(kw):
                            ix = ox * sw - pl + kx * dw
                            if ix < 0 or ix >= wd:
                                continue
                            for i in range(ci):
                                acc += np.int64(w[oc, ky, kx, i]) * np.int64(x[b, iy, ix, base + i])
                    out[b, oy, ox, oc] = acc


def prepare_int16(context, node, p):
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (I8,), "filter")
    context.expect_dtype(node, y_t, (I16,), "output")
    n, h, w, c = check_rank(node, context, x_t, 4)
    o, kh, kw, ci = check_rank(node, context, f_t, 4, "filter")
    if ci <= 0 or c < ci or c % ci or o % (c // ci):
        raise KernelError(f"CONV_2D node {node.index}: input channels {c} and filter {[o, kh, kw, ci]} do not "
                          f"form whole groups")
    if b_t < 0:
        raise KernelError(f"CONV_2D (node {node.index}): no bias; TFLite's CONV_2D requires one (conv.cc: "
                          f"'has_bias was not true' / 'Tensor at index 2 was optional but was expected')")
    check_bias(node, context, b_t, o)
    quant.check_symmetric_filter(node, context, f_t)
    bias_type, option = quant.bias_type_16x8(node, context, b_t, p)
    if bias_type == "int32" and option != "int32":
        raise KernelError(f"CONV_2D (node {node.index}): int32 bias with quantized_bias_type unset; TFLite then "
                          f"reads the bias as int64 (past its end), so its output is undefined. Set "
                          f"quantized_bias_type=INT32 or store the bias as int64")
    in_s, out_s = quant.symmetric_int16_scales(node, context, x_t, y_t)
    sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
    oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
    groups = c // ci
    f_scales, _, _ = quant.quant_params(context, f_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, o)
    code = p["fused_activation_function"]
    lo, hi = quant.activation_range_quantized(code, out_s, 0, quant.INT16_MIN, quant.INT16_MAX)
    context.set_output(y_t, (n, oh, ow, o), I16)
    recipe = "int64" if bias_type == "int64" else "int32"
    rounding = "up" if recipe == "int64" or groups == 1 else "away"
    filt, bias = context.value(f_t), context.value(b_t)
    weights = padded = cols = acc = None
    impl = "numba"
    if groups == 1 and filt is not None:
        wmat = filt.reshape(o, -1).T.astype(np.int64)                      # [K, O]
        fdt = quant.exact_matmul_dtype(-quant.INT16_MIN, float(np.abs(wmat).sum(axis=0).max(initial=0)))
        if fdt is not None:
            weights = np.ascontiguousarray(wmat, fdt)
            pshape = padded_shape((n, h, w, c), kh, kw, oh, ow, sh, sw, dh, dw, pt, pl)
            direct = kh == kw == 1 and sh == sw == 1 and pshape[1:3] == (h, w)
            if not direct and pshape[1:3] != (h, w):
                padded = np.zeros(pshape, np.int16)
            cols = np.empty((n * oh * ow, kh * kw * c), fdt)
            acc = np.empty((n * oh * ow, o), fdt)
            impl = f"{'matmul' if direct else 'im2col+blas'}({fdt.name}, exact)"
    return Conv2DInt16Data(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, kh, kw, pt, pl, groups, (n, oh, ow, o),
                           activation_name(code), in_s, 0, f_scales, out_s, 0, eff, mult, shift, lo, hi, bias_type,
                           option, recipe, rounding, impl, len(f_scales) > 1,
                           None if bias is None else bias.astype(np.int64), weights, padded, cols, acc)


def invoke_int16(context, node, d) -> None:
    tensors = context.tensors
    x = tensors[node.inputs[0]]
    out = tensors[node.outputs[0]]
    o = out.shape[3]
    bias = d.bias if d.bias is not None else tensors[node.inputs[2]].astype(np.int64)
    if d.impl == "numba":
        acc = np.empty(out.shape, np.int64)
        conv_int16_numba(x, tensors[node.inputs[1]], acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                         d.pad_top, d.pad_left)
        requantize_16x8(acc.reshape(-1, o), bias, d, out.reshape(-1, o), jit=True)
        return
    if d.impl.startswith("matmul"):
        np.copyto(d.cols, x.reshape(-1, x.shape[3]), casting="unsafe")
    else:
        src = x
        if d.padded is not None:
            h, w = x.shape[1], x.shape[2]
            d.padded[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = x
            src = d.padded
        _, oh, ow, _ = out.shape
        view = im2col_view(src, oh, ow, d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w)
        np.copyto(d.cols.reshape(view.shape), view, casting="unsafe")
    np.matmul(d.cols, d.weights, out=d.acc)
    requantize_16x8(d.acc, bias, d, out.reshape(-1, o), jit=True)


@kernel(BuiltinOperator.CONV_2D, versions=(1, 2, 3, 5, 6, 8))
class Conv2D(Kernel):
    name = "conv_2d"

    def prepare(self, context, node):
        p = node.params
        if context.dtype(node.input(0)) == U8 or (context.dtype(node.input(0)) == F32
                                                   and context.dtype(node.input(1)) == I8):
            return prepare_uint8_or_hybrid(context, node, p)
        if context.dtype(node.input(0)) == I16:
            return prepare_int16(context, node, p)
        if context.dtype(node.input(0)) == I8:
            x_t, f_t = node.input(0), node.input(1)
            n, h, w, c = check_rank(node, context, x_t, 4)
            o, kh, kw, ci = check_rank(node, context, f_t, 4, "filter")
            check_bias(node, context, node.input(2), o)
            if ci <= 0 or c < ci or c % ci or o % (c // ci):
                raise KernelError(f"CONV_2D node {node.index}: input channels {c} and filter {[o, kh, kw, ci]} do not "
                                 f"form whole groups")
            sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
            oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
            return prepare_int8(context, node, p, n, h, w, c, o, kh, kw, ci, c // ci, sh, sw, dh, dw, oh, ow, pt, pl)
        x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
        for t, what in ((x_t, "input"), (f_t, "filter")):
            context.expect_dtype(node, t, (F32,), what)
        if b_t >= 0:
            context.expect_dtype(node, b_t, (F32,), "bias")
        n, h, w, c = check_rank(node, context, x_t, 4)
        o, kh, kw, ci = check_rank(node, context, f_t, 4, "filter")
        check_bias(node, context, b_t, o)
        if ci <= 0 or c < ci or c % ci or o % (c // ci):
            raise KernelError(f"CONV_2D node {node.index}: input channels {c} and filter {[o, kh, kw, ci]} do not "
                             f"form whole groups")
        groups = c // ci
        sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
        oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
        context.set_output(y_t, (n, oh, ow, o), F32)
        lo, hi = activation_range(p["fused_activation_function"])
        filt = context.value(f_t)
        bias_v = context.value(b_t) if b_t >= 0 else np.zeros(o, np.float32)
        padded = cols = weights = scratch = None
        needs_pad = pt > 0 or pl > 0 or padded_shape((n, h, w, c), kh, kw, oh, ow, sh, sw, dh, dw, pt, pl)[1:3] != (h, w)
        if groups > 1:
            impl = "numba"
        elif kh == kw == 1 and sh == sw == 1 and not needs_pad:
            impl = "matmul"
            weights = filter_matrix(filt) if filt is not None else None
        else:
            impl = "im2col+blas"
            weights = filter_matrix(filt) if filt is not None else None
            scratch = context.scratch.reserve(((n * oh * ow, kh * kw * c), np.float32))
        return Conv2DData(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, kh, kw, pt, pl, groups, (n, oh, ow, o),
                          activation_name(p["fused_activation_function"]), lo, hi, impl, weights,
                          None if bias_v is None else np.ascontiguousarray(bias_v, np.float32), padded, cols, scratch,
                          None if weights is None else weight_bound(weights))

    @np.errstate(over="ignore", invalid="ignore")       # float inf / nan silently, as TFLite
    def invoke(self, context, node, d):
        if type(d) is Conv2DHybridData:
            return invoke_hybrid(context, node, d)
        if type(d) is Conv2DUint8Data:
            return invoke_uint8(context, node, d)
        if type(d) is Conv2DInt8Data:
            return invoke_int8(context, node, d)
        if type(d) is Conv2DInt16Data:
            return invoke_int16(context, node, d)
        tensors = context.tensors
        x = tensors[node.inputs[0]]
        out = tensors[node.outputs[0]]
        bias = d.bias if d.bias is not None else tensors[node.inputs[2]]
        impl = d.impl
        if impl == "numba":
            conv_numba(x, tensors[node.inputs[1]], bias, out, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                       d.pad_top, d.pad_left, np.float32(d.output_activation_min), np.float32(d.output_activation_max))
            return
        weights = d.weights if d.weights is not None else filter_matrix(tensors[node.inputs[1]])
        bound = d.weight_bound if d.weight_bound is not None else weight_bound(weights)
        threads = context.num_threads
        x2d = x.reshape(-1, x.shape[3])
        flags = np.zeros(1, np.int8)
        if x.size:                          # inf / NaN inputs are caught whatever the limit
            run_rows(float_guard_rows, -(-x.size // GUARD_CHUNK), threads, x.reshape(-1), guard_limit(bound), flags,
                     work=x.size * 8)
        if flags[0]:
            self.invoke_reference(context, node, d)
            return
        out2d = out.reshape(-1, out.shape[3])
        if impl == "matmul":
            np.matmul(x2d, weights, out=out2d)
        else:
            (cols,) = context.scratch.views(d.scratch)
            n, oh, ow, _ = out.shape
            run_rows(im2col_rows, n * oh, threads, x, cols.reshape(n, oh, ow, d.filter_h, d.filter_w, x.shape[3]),
                     d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top, d.pad_left,
                     work=cols.size * 4)
            np.matmul(cols, weights, out=out2d)
        run_rows(float_epilogue_rows, out2d.shape[0], threads, out2d, bias, np.float32(d.output_activation_min),
                 np.float32(d.output_activation_max), work=out2d.size * 8)

    def invoke_reference(self, context, node, d):
        tensors = context.tensors
        b_t = node.input(2)
        bias = tensors[b_t] if b_t >= 0 else None
        if type(d) in (Conv2DUint8Data, Conv2DHybridData):
            return invoke_reference_uint8_or_hybrid(context, node, d)
        if type(d) is Conv2DInt16Data:
            tensors[node.outputs[0]][...] = reference_int16(tensors[node.inputs[0]], tensors[node.inputs[1]], bias, d)
            return
        if type(d) is Conv2DInt8Data:
            tensors[node.outputs[0]][...] = reference_int8(
                tensors[node.inputs[0]], tensors[node.inputs[1]], bias, (d.stride_h, d.stride_w),
                (d.dilation_h, d.dilation_w), (d.pad_top, d.pad_left), d.output_shape[1:3], d)
            return
        tensors[node.outputs[0]][...] = reference(
            tensors[node.inputs[0]], tensors[node.inputs[1]], bias, (d.stride_h, d.stride_w),
            (d.dilation_h, d.dilation_w), (d.pad_top, d.pad_left), d.output_shape[1:3],
            (d.output_activation_min, d.output_activation_max))


# ----------------------------------------------------------------------------------------------
# uint8 / hybrid
#
# uint8 (version 1; grouped: 6): acc = Σ (filter − filter_zero_point)·(input − input_zero_point)
# over in-image taps (+ int32 bias), requantized with the legacy per-tensor multiplier
# (:func:`workbench.interpreter.quant.legacy_conv_multiplier`), + output_zero_point, clamped to the
# uint8 activation range.  litert runs ordinary convolutions through ruy (ties of the final rounding
# go up, ``rounding = "up"``) and grouped ones through its reference kernel (ties away from zero).
# Per-channel uint8 filters are refused (TFLite's uint8 path would use only the first scale).
#
# hybrid (float32 input/output, int8 filter; version 2, 5 with per-channel filter scales): TFLite
# picks the path by the scales' values, not their count: when they are not all equal
# (``is_hybrid_per_channel``) each batch image is quantized asymmetrically, the im2col border holds
# the image's zero point, acc = Σ filter·q − input_offsets[b]·row_sums (int32) and
# output = min(max(float(acc)·float32(filter_scale[o]·scaling_factors[b]) + bias, ...)); otherwise
# each image is quantized symmetrically (zero border) and output = clamp(float(acc)·
# float32(scaling_factors[b]·filter_scale[0]) + bias).  Both clamp to the float activation range
# (±FLT_MAX for NONE: an infinity becomes FLT_MAX).  Grouped hybrid convolutions run litert's
# reference HybridConvPerChannel (``grouped_hybrid_numba``); with one filter scale for every channel
# they are refused (TFLite would read past the scale array).

U8 = np.dtype(np.uint8)


def _conv_geometry(context, node, p):
    x_t, f_t = node.input(0), node.input(1)
    n, h, w, c = check_rank(node, context, x_t, 4)
    o, kh, kw, ci = check_rank(node, context, f_t, 4, "filter")
    check_bias(node, context, node.input(2), o)
    if ci <= 0 or c < ci or c % ci or o % (c // ci):
        raise KernelError(f"CONV_2D node {node.index}: input channels {c} and filter {[o, kh, kw, ci]} do not "
                          f"form whole groups")
    sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
    oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
    return n, h, w, c, o, kh, kw, ci, c // ci, sh, sw, dh, dw, oh, ow, pt, pl


def _padded_sums(xp, f, groups, stride, dilation, out_hw) -> np.ndarray:
    """int64 Σ over every tap of an already padded int64 input ``xp`` [N, Hp, Wp, C] with ``f`` [O, KH, KW, I]."""
    n = xp.shape[0]
    o, kh, kw, ci = f.shape
    (sh, sw), (dh, dw), (oh, ow) = stride, dilation, out_hw
    if n * oh * ow * o == 0:            # an empty output
        return np.zeros((n, oh, ow, o), np.int64)
    acc = np.zeros((n, oh, ow, o), np.int64)
    per_group = o // groups
    for g in range(groups):
        oc = slice(g * per_group, (g + 1) * per_group)
        icg = slice(g * ci, (g + 1) * ci)
        for ky in range(kh):
            for kx in range(kw):
                rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
                cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
                acc[..., oc] += xp[:, rows, cols, icg] @ f[oc, ky, kx, :].T
    return acc


def _pad_int64(x, border, d) -> np.ndarray:
    """The input as int64 inside a border (``border``: one value per batch image)."""
    n, h, w, c = x.shape
    oh, ow = d.output_shape[1:3]
    shape = padded_shape(x.shape, d.filter_h, d.filter_w, oh, ow, d.stride_h, d.stride_w, d.dilation_h,
                         d.dilation_w, d.pad_top, d.pad_left)
    xp = np.empty(shape, np.int64)
    xp[...] = np.asarray(border, np.int64).reshape(-1, 1, 1, 1)
    xp[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = x
    return xp


@opdata
class Conv2DUint8Data(ConvGeometry):
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
    impl: str                       # "im2col+blas(float32, exact)" | "matmul(...)" | "numba"
    bias: object = None             # int32 [O] (zeros when absent)
    bias_folded: object = None      # int64 [O]: bias − input_zero_point·Σ(filter − filter_zero_point)
    weights: object = None          # float [KH*KW*I, O]: filter − filter_zero_point, exact
    padded: object = None           # scratch: the uint8 input inside a border of input_zero_point
    cols: object = None             # scratch: float im2col matrix
    acc: object = None              # scratch: float [N*OH*OW, O]
    rounding: str = "up"            # "up" (ruy) for ordinary convolutions, "away" for grouped ones
    multipliers: object = dataclasses.field(default=None, repr=False)   # int64 [O], one value repeated
    shifts: object = dataclasses.field(default=None, repr=False)

    @property
    def half_up(self) -> bool:
        return self.rounding == "up"


def reference_uint8(x, filt, bias, d) -> np.ndarray:
    """(x − input_zero_point) inside a zero border, (filter − filter_zero_point), int64 sums tap by tap."""
    xp = _pad_int64(x.astype(np.int64) - d.input_zero_point, np.zeros(x.shape[0], np.int64), d)
    acc = _padded_sums(xp, filt.astype(np.int64) - d.filter_zero_point, d.groups, (d.stride_h, d.stride_w),
                       (d.dilation_h, d.dilation_w), d.output_shape[1:3])
    if bias is not None:
        acc += bias.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.half_up)
    return np.clip(v + d.output_zero_point, d.output_activation_min, d.output_activation_max).astype(np.uint8)


@njit
def conv_zp_numba(x, w, out, sh, sw, dh, dw, pt, pl, in_zp, w_zp):
    """Direct convolution of uint8 data (any groups/dilation): int32 Σ (w − w_zp)·(x − in_zp) over
    in-image taps into ``out``."""
    n_b, h, wd, c = x.shape
    o, kh, kw, ci = w.shape
    _, oh, ow, _ = out.shape
    per_group = o // (c // ci)
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for oc in range(o):
                    base = (oc // per_group) * ci
                    acc = np.int32(0)
                    for ky in range(kh):
                        iy = oy * sh - pt + ky * dh
                        if iy < 0 or iy >= h:
                            continue
                        for kx in range(kw):
                            ix = ox * sw - pl + kx * dw
                            if ix < 0 or ix >= wd:
                                continue
                            for i in range(ci):
                                acc += (np.int32(w[oc, ky, kx, i]) - w_zp) * (np.int32(x[b, iy, ix, base + i]) - in_zp)
                    out[b, oy, ox, oc] = acc


def prepare_uint8(context, node, p):
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (U8,), "filter")
    context.expect_dtype(node, y_t, (U8,), "output")
    n, h, w, c, o, kh, kw, ci, groups, sh, sw, dh, dw, oh, ow, pt, pl = _conv_geometry(context, node, p)
    in_s, in_zp, f_s, f_zp, out_s, out_zp, real, m, s = quant.uint8_matrix_scales(node, context, x_t, f_t, b_t, y_t)
    code = p["fused_activation_function"]
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp, 0, 255)
    context.set_output(y_t, (n, oh, ow, o), U8)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(o, np.int32)
    weights = padded = cols = acc = folded = None
    if groups > 1 or filt is None or bias is None:
        impl = "numba"
    else:
        wmat = filt.reshape(o, -1).T.astype(np.int64) - f_zp           # [K, O]
        fdt = quant.exact_float_dtype(float(np.abs(wmat).sum(axis=0).max(initial=0)), input_abs_max=255)
        weights = np.ascontiguousarray(wmat, fdt)
        folded = bias.astype(np.int64) - in_zp * wmat.sum(axis=0)
        pshape = padded_shape((n, h, w, c), kh, kw, oh, ow, sh, sw, dh, dw, pt, pl)
        direct = kh == kw == 1 and sh == sw == 1 and pshape[1:3] == (h, w)
        if not direct and pshape[1:3] != (h, w):
            padded = np.full(pshape, in_zp, np.uint8)        # a border of zero points adds nothing
        cols = np.empty((n * oh * ow, c if direct else kh * kw * c), fdt)
        acc = np.empty((n * oh * ow, o), fdt)
        impl = f"{'matmul' if direct else 'im2col+blas'}({fdt.name}, exact)"
    return Conv2DUint8Data(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, kh, kw, pt, pl, groups, (n, oh, ow, o),
                           activation_name(code), in_s, in_zp, f_s, f_zp, out_s, out_zp, real, m, s, lo, hi, impl,
                           None if bias is None else np.ascontiguousarray(bias, np.int32), folded, weights, padded,
                           cols, acc, "away" if groups > 1 else "up", np.full(o, m, np.int64), np.full(o, s, np.int64))


def invoke_uint8(context, node, d) -> None:
    tensors = context.tensors
    x = tensors[node.inputs[0]]
    out = tensors[node.outputs[0]]
    o = out.shape[3]
    if d.impl == "numba":
        bias = d.bias if d.bias is not None else tensors[node.inputs[2]]
        acc = np.empty(out.shape, np.int32)
        conv_zp_numba(x, tensors[node.inputs[1]], acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                      d.pad_top, d.pad_left, d.input_zero_point, d.filter_zero_point)
        requantize.requantize_rows_jit(acc.reshape(-1, o), bias.astype(np.int64), d.multipliers, d.shifts,
                                  d.output_zero_point, d.output_activation_min, d.output_activation_max,
                                  out.reshape(-1, o), d.half_up)
        return
    if d.impl.startswith("matmul"):
        np.copyto(d.cols, x.reshape(-1, x.shape[3]), casting="unsafe")
    else:
        src = x
        if d.padded is not None:
            h, w = x.shape[1], x.shape[2]
            d.padded[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = x
            src = d.padded
        _, oh, ow, _ = out.shape
        view = im2col_view(src, oh, ow, d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w)
        np.copyto(d.cols.reshape(view.shape), view, casting="unsafe")
    np.matmul(d.cols, d.weights, out=d.acc)
    requantize.requantize_rows_jit(d.acc, d.bias_folded, d.multipliers, d.shifts, d.output_zero_point,
                              d.output_activation_min, d.output_activation_max, out.reshape(-1, o), d.half_up)


@opdata
class Conv2DHybridData(ConvGeometry):
    per_channel: bool               # TFLite's is_hybrid_per_channel: the filter scales are not all equal
    asymmetric_quantize_inputs: bool   # per-channel path: asymmetric images; otherwise symmetric
    filter_scale: object            # float32 [1] or [O]
    row_sums: object                # int64 [O]: Σ filter[o] as TFLite's SSE routine adds it (per-channel path)
    output_activation_min: float
    output_activation_max: float
    impl: str
    weights: object = None          # float [KH*KW*I, O], exact for int8 × int8
    bias: object = None             # float32 [O]
    input_quantized: object = None  # scratch int8 [N, H, W, C]: the last input, quantized image by image
    scaling_factors: object = None  # scratch float32 [N]: each image's scale
    input_offsets: object = None    # scratch int32 [N]: each image's zero point (0 when symmetric)
    product_scales: object = None   # scratch float32 [N, O]: the float factor each sum is multiplied by
    padded: object = None           # scratch int8 with the border (zero point, or 0)
    cols: object = None             # scratch float im2col matrix
    acc: object = None              # scratch float [N*OH*OW, O]
    filter: object = None           # int8 OHWI filter (grouped convolutions: the direct loop reads it)


def hybrid_conv_output(acc, scaling_factors, offsets, d, product_out=None) -> np.ndarray:
    """Float tail of hybrid CONV_2D (fast and reference path): ``acc`` int [N, P, O] → float32 [N, P, O]."""
    acc = np.asarray(acc).astype(np.int64)
    fs = np.asarray(d.filter_scale, np.float32)
    bias = np.zeros(acc.shape[-1], np.float32) if d.bias is None else d.bias
    if d.per_channel:
        acc = quant.wrap_int32(acc - offsets.astype(np.int64)[:, None, None] * d.row_sums[None, None, :])
        scales = (fs[None, :] * scaling_factors[:, None]).astype(np.float32)
    else:
        scales = np.broadcast_to((scaling_factors * fs[0]).astype(np.float32)[:, None], (acc.shape[0], acc.shape[-1]))
    if product_out is not None:
        product_out[...] = scales
    v = ((acc.astype(np.float32) * scales[:, None, :]).astype(np.float32) + bias).astype(np.float32)
    lo, hi = d.output_activation_min, d.output_activation_max
    if d.per_channel:          # Eigen: cwiseMin(max) then cwiseMax(min)
        return quant.std_max(quant.std_min(v, hi), lo)
    return quant.std_min(quant.std_max(v, lo), hi)   # BiasAndClamp: max(min) then min(max)


@njit
def hybrid_conv_output_jit(acc, offsets, row_sums, scales, bias, per_channel, lo, hi, out):
    """:func:`hybrid_conv_output` in one compiled loop: ``acc`` [N, P, O] exact sums, ``scales``
    float32 [N, O] (the product scales), ``out`` float32 [N, P, O]."""
    n, p, o = acc.shape
    for b in range(n):
        off = np.int64(offsets[b])
        for i in range(p):
            for c in range(o):
                a = np.int64(acc[b, i, c])
                if per_channel:
                    a = ((a - off * row_sums[c] + 2147483648) & 0xFFFFFFFF) - 2147483648
                v = np.float32(a) * scales[b, c]
                v = v + bias[c]
                if per_channel:
                    if hi < v:
                        v = hi
                    if v < lo:
                        v = lo
                else:
                    if v < lo:
                        v = lo
                    if hi < v:
                        v = hi
                out[b, i, c] = v


# Grouped hybrid convolutions (groups > 1; e.g. ConvNeXt's 7x7 depthwise written as a grouped Conv2D):
# litert sends them to its reference ``HybridConvPerChannel`` whatever the scales: every image
# quantized asymmetrically, an int32 sum Σ w·(q − zp_b) over in-image taps of the output channel's
# group, then float32 ``acc · filter_scale[o] · sf_b`` (left to right), + bias, then
# ``min(max(v, lo), hi)``.  With one filter scale (or all equal) that kernel reads the per-channel
# scale array past its end and an input-offset buffer Prepare never sized: undefined, so refused.


def grouped_hybrid_tail(acc, sf, d, bias) -> np.ndarray:
    """Float tail of a grouped hybrid CONV_2D: int sums [N, OH, OW, O] → float32."""
    acc = quant.wrap_int32(np.asarray(acc, np.int64)).astype(np.float32)
    fs = np.asarray(d.filter_scale, np.float32)
    v = ((acc * fs).astype(np.float32) * np.asarray(sf, np.float32).reshape(-1, 1, 1, 1)).astype(np.float32)
    if bias is not None:
        v = (v + bias).astype(np.float32)
    return quant.std_min(quant.std_max(v, np.float32(d.output_activation_min)), np.float32(d.output_activation_max))


@njit
def grouped_hybrid_numba(q, sf, zp, filt, fs, bias, out, sh, sw, dh, dw, pt, pl, lo, hi):
    """Direct grouped hybrid convolution (TFLite's reference order): int32 sums, float32 tail."""
    n, h, w, c = q.shape
    o, kh, kw, ci = filt.shape
    _, oh, ow, _ = out.shape
    per_group = o // (c // ci)
    for b in range(n):
        off = np.int64(zp[b])
        for oy in range(oh):
            for ox in range(ow):
                for oc in range(o):
                    g = oc // per_group
                    acc = np.int64(0)
                    for ky in range(kh):
                        iy = oy * sh - pt + ky * dh
                        if iy < 0 or iy >= h:
                            continue
                        for kx in range(kw):
                            ix = ox * sw - pl + kx * dw
                            if ix < 0 or ix >= w:
                                continue
                            for i in range(ci):
                                acc += np.int64(filt[oc, ky, kx, i]) * (np.int64(q[b, iy, ix, g * ci + i]) - off)
                    acc = ((acc + 2147483648) & 0xFFFFFFFF) - 2147483648
                    v = np.float32(np.float32(acc) * fs[oc]) * sf[b]
                    v = v + bias[oc]
                    if v < lo:
                        v = lo
                    if hi < v:
                        v = hi
                    out[b, oy, ox, oc] = v


def reference_hybrid(x, filt, bias, d) -> np.ndarray:
    n = x.shape[0]
    x2 = np.asarray(x, np.float32).reshape(n, -1)
    if d.groups > 1:
        q, sf, zp = quant.asymmetric_quantize_rows(x2)
        xp = _pad_int64(q.reshape(x.shape).astype(np.int64) - zp.reshape(-1, 1, 1, 1), np.zeros(n, np.int64), d)
        acc = _padded_sums(xp, filt.astype(np.int64), d.groups, (d.stride_h, d.stride_w),
                           (d.dilation_h, d.dilation_w), d.output_shape[1:3])
        return grouped_hybrid_tail(acc, sf, d, bias)
    if d.per_channel:
        q, sf, zp = quant.asymmetric_quantize_rows(x2)
    else:
        q, sf = quant.symmetric_quantize_rows(x2)
        zp = np.zeros(n, np.int32)
    border = zp if d.per_channel else np.zeros(n, np.int64)
    xp = _pad_int64(q.reshape(x.shape).astype(np.int64), border, d)
    acc = _padded_sums(xp, filt.astype(np.int64), 1, (d.stride_h, d.stride_w), (d.dilation_h, d.dilation_w),
                       d.output_shape[1:3])
    out = hybrid_conv_output(acc.reshape(n, -1, acc.shape[-1]), sf, zp, d)
    return out.reshape(d.output_shape)


def _packed_note(context, f_t) -> str:
    """int4 filters (AEQ's dynamic_wi4 recipes) are unpacked to int8 at load; litert's conv.cc unpacks
    them too and runs the same int8 hybrid path."""
    bits = context.packed_bits(f_t)
    if bits == 2:
        raise UnsupportedOpError(f"CONV_2D: int2 filter '{context.name(f_t)}' with a float input: litert's "
                                 f"results differ from the unpacked-int8 hybrid path, not implemented")
    return f"int{bits} weights (unpacked to int8), " if bits else ""


def prepare_hybrid(context, node, p):
    f_t, b_t, y_t = node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, y_t, (F32,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    n, h, w, c, o, kh, kw, ci, groups, sh, sw, dh, dw, oh, ow, pt, pl = _conv_geometry(context, node, p)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else None
    if filt is None or (b_t >= 0 and bias is None):
        raise UnsupportedOpError(f"CONV_2D (node {node.index}): hybrid filter and bias must be constant tensors")
    fs, _ = quant.hybrid_filter_scales(node, context, f_t, o, 0, "filter")
    per_channel = bool(len(fs) > 1 and np.any(fs != fs[0]))
    code = p["fused_activation_function"]
    lo, hi = activation_range(code)
    if groups > 1:
        if not per_channel:
            raise UnsupportedOpError(f"CONV_2D (node {node.index}): a grouped hybrid convolution ({groups} groups) "
                                     f"with one filter scale: TFLite's reference kernel then reads per-channel "
                                     f"scales past the end of the scale array (undefined output)")
        context.set_output(y_t, (n, oh, ow, o), F32)
        return Conv2DHybridData(
            PADDING_NAMES[p["padding"]], sh, sw, dh, dw, kh, kw, pt, pl, groups, (n, oh, ow, o),
            activation_name(code), True, True, fs, np.zeros(o, np.int64), lo, hi,
            _packed_note(context, f_t) + "grouped, per-channel, asymmetric: quantize(numba)+direct loop(numba)", None,
            None if bias is None else np.ascontiguousarray(bias, np.float32), np.zeros((n, h, w, c), np.int8),
            np.ones(n, np.float32), np.zeros(n, np.int32), filter=np.ascontiguousarray(filt, np.int8))
    context.set_output(y_t, (n, oh, ow, o), F32)
    wmat = filt.reshape(o, -1).astype(np.int64)
    fdt = quant.exact_float_dtype(float(np.abs(wmat).sum(axis=1).max(initial=0)), input_abs_max=128)
    pshape = padded_shape((n, h, w, c), kh, kw, oh, ow, sh, sw, dh, dw, pt, pl)
    direct = kh == kw == 1 and sh == sw == 1 and pshape[1:3] == (h, w)
    padded = None if direct or pshape[1:3] == (h, w) else np.zeros(pshape, np.int8)
    kind = _packed_note(context, f_t) + ("per-channel, asymmetric" if per_channel else "per-tensor, symmetric")
    return Conv2DHybridData(
        PADDING_NAMES[p["padding"]], sh, sw, dh, dw, kh, kw, pt, pl, 1, (n, oh, ow, o), activation_name(code),
        per_channel, per_channel, fs, quant.sse_row_sums(wmat), lo, hi,
        f"{kind}: quantize(numba)+{'matmul' if direct else 'im2col+blas'}({fdt.name}, exact)",
        np.ascontiguousarray(wmat.T, fdt), None if bias is None else np.ascontiguousarray(bias, np.float32),
        np.zeros((n, h, w, c), np.int8), np.ones(n, np.float32), np.zeros(n, np.int32), np.zeros((n, o), np.float32),
        padded, np.empty((n * oh * ow, c if direct else kh * kw * c), fdt), np.empty((n * oh * ow, o), fdt))


def invoke_hybrid(context, node, d) -> None:
    tensors = context.tensors
    x = tensors[node.inputs[0]]
    out = tensors[node.outputs[0]]
    n, h, w, c = x.shape
    q2 = d.input_quantized.reshape(n, -1)
    requantize.quantize_rows_jit(x.reshape(n, -1), d.per_channel, q2, d.scaling_factors, d.input_offsets)
    if d.groups > 1:
        o = out.shape[3]
        bias = d.bias if d.bias is not None else np.zeros(o, np.float32)
        grouped_hybrid_numba(d.input_quantized, d.scaling_factors, d.input_offsets, d.filter, d.filter_scale, bias,
                             out, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top, d.pad_left,
                             np.float32(d.output_activation_min), np.float32(d.output_activation_max))
        return
    src = d.input_quantized
    if d.padded is not None:
        d.padded[...] = d.input_offsets.reshape(-1, 1, 1, 1)
        d.padded[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = d.input_quantized
        src = d.padded
    _, oh, ow, o = out.shape
    if d.filter_h == d.filter_w == 1 and d.stride_h == d.stride_w == 1 and d.padded is None:
        np.copyto(d.cols, src.reshape(-1, c), casting="unsafe")
    else:
        view = im2col_view(src, oh, ow, d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w)
        np.copyto(d.cols.reshape(view.shape), view, casting="unsafe")
    np.matmul(d.cols, d.weights, out=d.acc)
    fs = np.asarray(d.filter_scale, np.float32)
    if d.per_channel:
        d.product_scales[...] = fs[None, :] * d.scaling_factors[:, None]
    else:
        d.product_scales[...] = (d.scaling_factors * fs[0]).astype(np.float32)[:, None]
    bias = d.bias if d.bias is not None else np.zeros(o, np.float32)
    hybrid_conv_output_jit(d.acc.reshape(n, -1, o), d.input_offsets, d.row_sums, d.product_scales, bias, d.per_channel,
                           np.float32(d.output_activation_min), np.float32(d.output_activation_max),
                           out.reshape(n, -1, o))


def prepare_uint8_or_hybrid(context, node, p):
    """The dtype branch of prepare: a uint8 input, or a float input with an int8 filter (hybrid)."""
    if context.dtype(node.input(0)) == U8:
        return prepare_uint8(context, node, p)
    return prepare_hybrid(context, node, p)


def invoke_reference_uint8_or_hybrid(context, node, d) -> None:
    tensors = context.tensors
    b_t = node.input(2)
    bias = tensors[b_t] if b_t >= 0 else None
    fn = reference_uint8 if type(d) is Conv2DUint8Data else reference_hybrid
    tensors[node.outputs[0]][...] = fn(tensors[node.inputs[0]], tensors[node.inputs[1]], bias, d)
