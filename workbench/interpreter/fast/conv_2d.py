"""Speed layer for CONV_2D in float32, int8, uint8 and 16x8 (hybrid: :mod:`.conv_hybrid`); the teaching
layer is ``kernels/conv_2d.py`` (and ``_conv_uint8_hybrid.py``, ``_conv_geometry.py``).

Four ways to compute the same sums:
  * ``igemm`` (float32, groups of one, constant filter and bias, litert-x86): the kernel library's own C
    product (:mod:`workbench.perf.fgemm`, ``perf/native/conv_f32.c``), which reads the input in place (a
    tile of 7 pixels whose filter rows lie inside the image) or through one pointer per (tap, pixel), not
    an im2col copy, and adds the bias, clamps and checks the guard (below) in the same pass; where the
    library or AVX-512 is missing, the BLAS paths below;
  * ``matmul`` / ``im2col+blas``: a 1x1 convolution is a matrix product; a KxK one becomes one after
    copying every window into a row of an "im2col" matrix (in ``context.scratch``, the buffer all
    nodes share, or in the node's own arrays);
  * ``vnni(int8, exact)``: int8 products of at least ``vnni.MIN_MACS`` multiply-adds on a CPU with
    AVX-512 VNNI use the int8 dot-product instruction on a packed copy of the filter
    (:mod:`workbench.perf.vnni`: im2col, sums and requantization in one pass, split over
    ``num_threads`` threads);
  * ``numba``: a direct loop nest (grouped convolutions, filters computed at run time).

Integer sums are exact: the float BLAS product is used only in a float type that holds every partial
sum exactly (:func:`workbench.interpreter.quant.exact_float_dtype` / ``exact_matmul_dtype``); the
zero point is folded into the bias (``bias_folded`` = bias − input_zero_point·Σw), so the padding is
a border of input zero points.  The requantization (numba, :mod:`.requantize`) rounds the last shift
as the OpData's ``rounding`` says — which ``prepare`` took from the variant — so the integer paths
serve both variants.

float32: the direct loop adds in ``reference_ops::Conv``'s order (the kernel litert runs for grouped
convolutions), so it serves both variants.  The BLAS product sums in its own order: within float32
rounding of litert's builtin kernels, bit-exact with neither build, so it runs for ``litert-x86`` only
(the default), after a guard: when a product or partial sum could overflow float32 (or the input holds
inf / NaN), BLAS's order and fused multiply-adds could turn inf − inf = NaN into ±FLT_MAX or back, so
the node runs the teaching layer's sequential sums instead.
"""

from __future__ import annotations

import numpy as np

from ...perf import blas as _blas
from ...perf import fgemm as _fgemm
from ...perf import vnni as _vnni
from ...perf.jit import njit, run_rows
from ...schema.enums import BuiltinOperator
from .. import quant
from ..kernels._conv_geometry import padded_shape
from ..kernels.conv_2d import Conv2DData, Conv2DInt8Data, Conv2DInt16Data, Conv2DUint8Data, conv_float
from ..variants import LITERT_X86, VARIANTS
from . import FastPath, fast_path, requantize

ALL = tuple(VARIANTS)
CONV_2D = BuiltinOperator.CONV_2D


# ----------------------------------------------------------------------------------------------
# shared: im2col and the direct loops


def im2col_view(src: np.ndarray, oh, ow, kh, kw, sh, sw, dh, dw) -> np.ndarray:
    """A [N, OH, OW, KH, KW, C] strided view of every window of ``src`` (no copy)."""
    sN, sH, sW, sC = src.strides
    n, _, _, c = src.shape
    return np.lib.stride_tricks.as_strided(src, (n, oh, ow, kh, kw, c),
                                           (sN, sH * sh, sW * sw, sH * dh, sW * dw, sC), writeable=False)


def _im2col(x, d, cols, padded, direct: bool) -> None:
    """The im2col matrix of ``x`` into ``cols`` (``padded``: the input's border array, or None)."""
    if direct:
        np.copyto(cols, x.reshape(-1, x.shape[3]), casting="unsafe")
        return
    src = x
    if padded is not None:
        h, w = x.shape[1], x.shape[2]
        padded[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = x
        src = padded
    _, oh, ow, _ = d.output_shape
    view = im2col_view(src, oh, ow, d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w)
    np.copyto(cols.reshape(view.shape), view, casting="unsafe")


def _product_layout(d, x_shape):
    """(direct?, padded shape or None) of the BLAS path of an integer conv: direct when the input
    itself is the im2col matrix (1x1, stride 1, no padding)."""
    n, h, w, c = x_shape
    _, oh, ow, _ = d.output_shape
    pshape = padded_shape(x_shape, d.filter_h, d.filter_w, oh, ow, d.stride_h, d.stride_w, d.dilation_h,
                          d.dilation_w, d.pad_top, d.pad_left)
    direct = d.filter_h == d.filter_w == 1 and d.stride_h == d.stride_w == 1 and pshape[1:3] == (h, w)
    return direct, (None if direct or pshape[1:3] == (h, w) else pshape)


def _label(direct: bool, fdt) -> str:
    return f"{'matmul' if direct else 'im2col+blas'}({np.dtype(fdt).name}, exact)"


def _constant_bias(context, node, o, dtype):
    """The bias values when constant (zeros without a bias), else None (read at invoke)."""
    b_t = node.input(2)
    return np.zeros(o, dtype) if b_t < 0 else context.value(b_t)


def _bias(context, node, bias):
    """The bias bound at prepare, or the bias tensor's current value."""
    if bias is not None:
        return bias
    return context.tensors[node.inputs[2]]


# ----------------------------------------------------------------------------------------------
# float32


@njit
def conv_numba(x, w, bias, out, sh, sw, dh, dw, pt, pl, lo, hi):
    """Direct convolution (any groups/dilation); taps outside the image are skipped.  Each output
    sums its taps in TFLite's reference order (filter row, column, input channel) into one float32
    accumulator, then adds the bias and clamps, as ``reference_ops::Conv`` does."""
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


def weight_bound(weights) -> float:
    """max|w| times the length of a dot product: with max|x| it bounds every partial sum."""
    return float(max(weights.max(), -weights.min())) * weights.shape[0] if weights.size else 0.0


GUARD_CHUNK = 4096      # the guard's "rows": pieces of this many input values


@njit(nogil=True)
def float_guard_rows(flat, limit, flags, r0, r1):
    """``flags[0]`` = 1 when a value of pieces r0..r1 of ``flat`` (pieces of ``GUARD_CHUNK`` values)
    is not below ``limit`` in magnitude (or is NaN).

    With ``limit`` = 1e38 / (max|w| · dot length), no product or partial sum of the node can
    overflow float32 unless a flag is raised; when one could, BLAS's order and fused multiply-adds
    may turn litert's inf + (-inf) = NaN into ±FLT_MAX (or the other way round), so the caller
    runs the teaching layer's sequential sums instead."""
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
def im2col_rows(xr, cr, c, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl, r0, r1):
    """The im2col matrix's rows for output image rows r0..r1 (row r = image r // OH, output row
    r % OH).  ``xr`` is the input as [N, H, W·C], ``cr`` the matrix as [N·OH·OW, KH·KW·C] (both
    reshaped by the caller: a reshape inside would need numba's runtime, which the precompiled
    library does not carry): row (b, oy, ox), columns of tap (ky, kx), hold the input pixel under
    that tap, or zeros where it falls in the padding — no padded copy of the input.

    Where a filter row lies inside the image with no dilation along x, its KW pixels are KW·C
    consecutive values of the input row and are copied as one run (a network's first layer has
    C = 3: copying value by value, tap by tap, cost more than the product itself)."""
    h = xr.shape[1]
    w = xr.shape[2] // c
    run = kw * c
    for r in range(r0, r1):
        b, oy = r // oh, r % oh
        for ox in range(ow):
            m = r * ow + ox
            ix0 = ox * sw - pl
            whole = dw == 1 and ix0 >= 0 and ix0 + kw <= w
            for ky in range(kh):
                iy = oy * sh - pt + ky * dh
                k0 = ky * run
                if whole and 0 <= iy < h:
                    s0 = ix0 * c
                    dst = cr[m, k0:k0 + run]    # slices first: with an index like k0 + t numba checks for a
                    src = xr[b, iy, s0:s0 + run]    # negative one at every step, and the loop stays scalar
                    for t in range(run):
                        dst[t] = src[t]
                    continue
                for kx in range(kw):
                    ix = ix0 + kx * dw
                    dst = cr[m, k0 + kx * c:k0 + (kx + 1) * c]
                    if 0 <= iy < h and 0 <= ix < w:
                        src = xr[b, iy, ix * c:(ix + 1) * c]
                        for i in range(c):
                            dst[i] = src[i]
                    else:
                        for i in range(c):
                            dst[i] = 0.0


@njit(nogil=True)
def float_epilogue_rows(out2d, bias, lo, hi, r0, r1):
    """Rows r0..r1 of a float fast path after its BLAS product: + bias, then the clamp to [lo, hi],
    in one pass (shared among the threads by :func:`workbench.perf.jit.run_rows`).  NaN stays NaN,
    as with ``np.clip`` (both comparisons are false)."""
    n = out2d.shape[1]
    for r in range(r0, r1):
        row = out2d[r]          # a row view: the loop below vectorises
        for j in range(n):
            v = row[j] + bias[j]
            if v < lo:
                v = lo
            elif v > hi:
                v = hi
            row[j] = v


@njit(nogil=True)
def float_guard_epilogue_rows(src2d, limit, flags, out2d, bias, lo, hi, r0, r1):
    """The guard and the epilogue of rows r0..r1 in one pass after the BLAS product: ``flags[0]`` = 1
    when a value of rows r0..r1 of ``src2d`` (the product's left matrix: row r holds every value that
    enters output row r) is not below ``limit`` in magnitude, or is NaN (see :func:`float_guard_rows`);
    then + bias and the clamp on rows r0..r1 of ``out2d`` (:func:`float_epilogue_rows`).  When a flag
    is raised the caller overwrites the whole output with the teaching layer's sums."""
    k = src2d.shape[1]
    bad = False
    for r in range(r0, r1):
        src = src2d[r]
        for j in range(k):
            bad |= not abs(src[j]) < limit     # no early exit: the loop vectorises
    float_epilogue_rows(out2d, bias, lo, hi, r0, r1)
    if bad:
        flags[0] = 1


class FloatNumba(FastPath):
    """Grouped float convolutions: :func:`conv_numba`, the reference order."""

    __slots__ = ("name", "bias")

    def __init__(self, bias):
        self.name, self.bias = "numba", bias

    def __call__(self, context, node, d) -> None:
        t = context.tensors
        bias = _bias(context, node, self.bias)
        conv_numba(t[node.inputs[0]], t[node.inputs[1]], bias, t[node.outputs[0]], d.stride_h, d.stride_w,
                   d.dilation_h, d.dilation_w, d.pad_top, d.pad_left, np.float32(d.output_activation_min),
                   np.float32(d.output_activation_max))


class FloatBlas(FastPath):
    """``matmul`` (1x1, stride 1, no padding) or ``im2col+blas``: one BLAS product (cut among
    ``num_threads`` threads by :func:`workbench.perf.blas.matmul`), then the guard,
    bias and clamp in one pass of row pieces on ``num_threads`` threads.  What does not change between
    invokes (the guard's limit for constant weights, the clamp bounds as float32, the flag) is made at
    bind: a small node spent more time on that Python arithmetic than in its product."""

    __slots__ = ("name", "weights", "bound", "bias", "layout", "limit", "lo", "hi", "flags")

    def __init__(self, name, weights, bias, layout, d):
        self.name, self.weights, self.bias, self.layout = name, weights, bias, layout
        self.bound = None if weights is None else weight_bound(weights)
        self.limit = None if self.bound is None else guard_limit(self.bound)
        self.lo, self.hi = np.float32(d.output_activation_min), np.float32(d.output_activation_max)
        self.flags = np.zeros(1, np.int8)

    @np.errstate(over="ignore", invalid="ignore")       # float inf / nan silently, as TFLite
    def __call__(self, context, node, d) -> None:
        tensors = context.tensors
        x = tensors[node.inputs[0]]
        out = tensors[node.outputs[0]]
        bias = self.bias if self.bias is not None else tensors[node.inputs[2]]
        weights, limit = self.weights, self.limit
        if weights is None:
            weights = filter_matrix(tensors[node.inputs[1]])
            limit = guard_limit(weight_bound(weights))
        threads = context.num_threads
        out2d = out.reshape(-1, out.shape[3])
        if self.layout is None:
            src2d = x.reshape(-1, x.shape[3])
        else:
            (src2d,) = context.scratch.views(self.layout)
            n, oh, ow, _ = out.shape
            xr = x.reshape(n, x.shape[1], -1)
            run_rows(im2col_rows, n * oh, threads, xr, src2d, x.shape[3], d.filter_h, d.filter_w, oh, ow,
                     d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top, d.pad_left, work=src2d.size * 4)
        _blas.matmul(src2d, weights, out2d, threads)
        # one pass after the product: the guard on the product's left matrix (every value that enters
        # the sums) with + bias and the clamp; a raised flag means the teaching layer's sums instead
        flags = self.flags
        flags[0] = 0
        run_rows(float_guard_epilogue_rows, out2d.shape[0], threads, src2d, limit, flags, out2d, bias, self.lo,
                 self.hi, work=(src2d.size + out2d.size) * 8)
        if flags[0]:
            out[...] = conv_float(x, tensors[node.inputs[1]], bias, d)


class FloatNative(FastPath):
    """``igemm``: the kernel library's C convolution (:mod:`workbench.perf.fgemm`, ``native/conv_f32.c``):
    the product, + bias, the clamp and the guard in one pass on ``num_threads`` threads, reading the
    input through pointers (no im2col copy) and the filter packed at bind — or at every invoke when the
    filter (or the bias) is not constant, e.g. float16 weights that a DEQUANTIZE outside this graph
    unpacks: the same node then sums in the same order wherever it runs.  A raised guard means the
    teaching layer's sums, and so does a call the library does not take (arrays it does not expect)."""

    __slots__ = ("name", "fn", "packed", "bias", "zeros", "geometry", "clamp", "work")

    def __init__(self, fn, filt, bias, d, filter_shape):
        self.name, self.fn = "igemm", fn
        o, _, kw, c = filter_shape
        self.work = int(np.prod(d.output_shape[:3])) * int(np.prod(filter_shape))     # multiply-adds
        self.packed = None if filt is None else _fgemm.pack_filter(filt)
        self.bias = None if bias is None else _fgemm.pad_bias(bias)
        self.zeros = np.zeros(kw * c, np.float32)       # a filter row's run in the padding
        self.geometry = _fgemm.geometry(d)
        limit = np.inf if filt is None else guard_limit(weight_bound(filter_matrix(filt)))
        self.clamp = np.array([d.output_activation_min, d.output_activation_max, limit], np.float32)

    def input_bounded(self, bound: float) -> None:
        """Every input value is at most ``bound`` in magnitude or NaN (the node before clamps its outputs,
        :func:`..bounded_inputs`): below the guard's limit nothing can overflow, so the library skips the
        guard's pass over the input (a negative limit); a NaN gives NaN in either order."""
        if self.packed is not None and bound < float(self.clamp[2]):
            self.clamp[2] = -1.0

    def native_call(self, context, node):
        if self.packed is None or self.bias is None:     # packed at every invoke
            return None
        tensors = context.tensors
        threads = context.num_threads if self.work >= _fgemm.MIN_SPLIT_WORK else 1
        return self.fn, (threads, tensors[node.inputs[0]], self.packed, self.bias, self.zeros,
                         tensors[node.outputs[0]], self.geometry, self.clamp)

    def with_residual(self, call, out, residual, add):
        """``call`` (this node's :meth:`native_call`) writing, instead of its output, the float ADD of that
        output and ``residual`` into ``out`` (``add``: float32 [lo, hi, 1 when the residual is the ADD's
        first operand]), in the same pass (:mod:`..fused`)."""
        fn, args = call
        return fn, (*args[:5], out, *args[6:8], residual, add)

    def __call__(self, context, node, d) -> None:
        tensors = context.tensors
        x, out = tensors[node.inputs[0]], tensors[node.outputs[0]]
        packed, bias, clamp = self.packed, self.bias, self.clamp
        if packed is None:
            filt = tensors[node.inputs[1]]
            packed = _fgemm.pack_filter(filt)
            clamp = clamp.copy()
            clamp[2] = guard_limit(weight_bound(filter_matrix(filt)))
        if bias is None:
            bias = _fgemm.pad_bias(tensors[node.inputs[2]])
        threads = context.num_threads if self.work >= _fgemm.MIN_SPLIT_WORK else 1
        done = self.fn(threads, x, packed, bias, self.zeros, out, self.geometry, clamp)
        if done != 0:           # 1: the guard was raised; -1: arrays the library did not take
            with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
                out[...] = conv_float(x, tensors[node.inputs[1]], bias[:out.shape[3]], d)


def _is_direct(d, x_shape) -> bool:
    """A 1x1 convolution with stride 1 and no padding: the input itself is the product's left matrix."""
    n, h, w, c = x_shape
    needs_pad = d.pad_top > 0 or d.pad_left > 0 or padded_shape(
        (n, h, w, c), d.filter_h, d.filter_w, d.output_shape[1], d.output_shape[2], d.stride_h, d.stride_w,
        d.dilation_h, d.dilation_w, d.pad_top, d.pad_left)[1:3] != (h, w)
    return d.filter_h == d.filter_w == 1 and d.stride_h == d.stride_w == 1 and not needs_pad


BLAS_VARIANTS = (LITERT_X86.name,)     # variants whose float sums need not be in reference_ops::Conv's order


@fast_path(CONV_2D, Conv2DData, variants=ALL)
def bind_float(context, node, d):
    n, oh, ow, o = d.output_shape
    bias = _constant_bias(context, node, o, np.float32)
    bias = None if bias is None else np.ascontiguousarray(bias, np.float32)
    if d.groups > 1:
        return FloatNumba(bias)
    if context.variant.name not in BLAS_VARIANTS:
        return None
    _, h, w, c = context.shape(node.input(0))
    filt = context.value(node.input(1))
    native = _fgemm.function()
    if native is not None:
        return FloatNative(native, filt, bias, d, tuple(context.shape(node.input(1))))
    weights = filter_matrix(filt) if filt is not None else None
    if weights is not None and n * oh * ow >= 2 and weights.shape[1] >= weights.shape[0]:
        # OpenBLAS multiplies by a [K, O] matrix laid out row by row faster than by the transposed view of
        # the [O, K] filter when there are a few rows to multiply (measured: 9x56 @ 56x336 16 -> 4 µs, 196x512
        # @ 512x512 0.63 -> 0.58 ms; the same for one row or thousands), at the price of a copy of the
        # weights (XNNPACK, litert's default, keeps a packed copy of its own).
        weights = np.ascontiguousarray(weights)
    if _is_direct(d, (n, h, w, c)):
        return FloatBlas("matmul", weights, bias, None, d)
    layout = context.scratch.reserve(((n * oh * ow, d.filter_h * d.filter_w * c), np.float32))
    return FloatBlas("im2col+blas", weights, bias, layout, d)


# ----------------------------------------------------------------------------------------------
# int8


@njit
def conv_sums_numba(x, w, out, sh, sw, dh, dw, pt, pl, in_zp, w_zp):
    """Direct integer convolution (any groups/dilation), the one loop nest of every integer
    ``numba`` path: Σ (w − w_zp)·(x − in_zp) over the in-image taps, in the reference order (filter
    row, column, input channel), summed in int64 and stored into ``out``, whose type decides the
    width: int32 (int8, uint8 and hybrid: wraps as ``reference_integer_ops::ConvPerChannel``'s
    int32 accumulator does) or int64 (16x8, ``reference_integer_ops::ConvPerChannel`` with int64
    accumulators).  int16 passes zero points 0; hybrid calls it per batch with that batch's offset."""
    n_b, h, wd, c = x.shape
    o, kh, kw, ci = w.shape
    _, oh, ow, _ = out.shape
    per_group = o // (c // ci)
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
                                acc += (np.int64(w[oc, ky, kx, i]) - w_zp) * (np.int64(x[b, iy, ix, base + i]) - in_zp)
                    out[b, oy, ox, oc] = acc


class Int8Numba(FastPath):
    __slots__ = ("name", "bias", "half_up")

    def __init__(self, bias, half_up):
        self.name, self.bias, self.half_up = "numba", bias, half_up

    def __call__(self, context, node, d) -> None:
        tensors = context.tensors
        x, out = tensors[node.inputs[0]], tensors[node.outputs[0]]
        o = out.shape[3]
        bias = _bias(context, node, self.bias).astype(np.int64)
        acc = np.empty(out.shape, np.int32)
        conv_sums_numba(x, tensors[node.inputs[1]], acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                        d.pad_top, d.pad_left, d.input_zero_point, 0)
        requantize.requantize_rows_jit(acc.reshape(-1, o), bias, d.output_multiplier, d.output_shift,
                                       d.output_zero_point, d.output_activation_min, d.output_activation_max,
                                       out.reshape(-1, o), self.half_up)


class Int8Vnni(FastPath):
    """The VNNI product (:func:`workbench.perf.vnni.conv`); ``tables``: the requantization in the
    micro-kernel's epilogue, made here once (None where it is not narrow: the general requantization)."""

    __slots__ = ("name", "packed", "bias_folded", "half_up", "tables", "plan", "data")

    def __init__(self, packed, bias_folded, half_up, d):
        self.name, self.packed, self.bias_folded, self.half_up = "vnni(int8, exact)", packed, bias_folded, half_up
        self.data = d               # the node's OpData (native_call has none)
        self.tables = _vnni.tables_for(packed, bias_folded, d.output_multiplier, d.output_shift, d.output_zero_point,
                                       d.output_activation_min, d.output_activation_max, half_up)
        self.plan = None

    def chosen(self, context, node) -> tuple:
        """(x, out, threads, the loop and its arguments), chosen once while the node reads and writes the
        same arrays (the choice took about as long as a small layer's product)."""
        d = self.data
        x, out = context.tensors[node.inputs[0]], context.tensors[node.outputs[0]]
        threads, plan = context.num_threads, self.plan
        if plan is None or plan[0] is not x or plan[1] is not out or plan[2] != threads:
            _, oh, ow, o = out.shape
            plan = self.plan = (x, out, threads, _vnni.conv_plan(
                x, self.packed, self.bias_folded, d.output_multiplier, d.output_shift, d.output_zero_point,
                d.output_activation_min, d.output_activation_max, self.half_up, out.reshape(-1, o),
                (oh, ow, d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top,
                 d.pad_left, d.input_zero_point + 128), threads, self.tables))
        return plan

    def native_call(self, context, node):
        plan = self.chosen(context, node)
        return _vnni.plan_call(plan[3], plan[2])

    def __call__(self, context, node, d) -> None:
        plan = self.chosen(context, node)
        _vnni.run_plan(plan[3], plan[2])


class Int8Blas(FastPath):
    """im2col (border of input zero points) into the shared scratch, an exact float BLAS product, then
    the requantization with the folded bias."""

    __slots__ = ("name", "weights", "bias_folded", "layout", "direct", "half_up")

    def __init__(self, name, weights, bias_folded, layout, direct, half_up):
        self.name, self.weights, self.bias_folded = name, weights, bias_folded
        self.layout, self.direct, self.half_up = layout, direct, half_up

    def __call__(self, context, node, d) -> None:
        x, out = context.tensors[node.inputs[0]], context.tensors[node.outputs[0]]
        o = out.shape[3]
        cols, acc, *padded = context.scratch.views(self.layout)
        if padded:
            padded[0].fill(d.input_zero_point)
        _im2col(x, d, cols, padded[0] if padded else None, self.direct)
        np.matmul(cols, self.weights, out=acc)
        requantize.requantize_rows_jit(acc, self.bias_folded, d.output_multiplier, d.output_shift, d.output_zero_point,
                                       d.output_activation_min, d.output_activation_max, out.reshape(-1, o),
                                       self.half_up)


@fast_path(CONV_2D, Conv2DInt8Data, variants=ALL)
def bind_int8(context, node, d):
    n, oh, ow, o = d.output_shape
    x_shape = context.shape(node.input(0))
    filt = context.value(node.input(1))
    bias = _constant_bias(context, node, o, np.int32)
    half_up = d.rounding == "up"
    if d.groups > 1 or filt is None or bias is None:
        return Int8Numba(None if bias is None else bias.astype(np.int64), half_up)
    k = d.filter_h * d.filter_w * x_shape[3]
    w2d = filt.reshape(o, -1)                                # [O, K]
    if _vnni.worth_it(n * oh * ow, k, o):
        return Int8Vnni(_vnni.pack_filter(w2d, _vnni.k_align(k)), _vnni.folded_bias(bias, w2d, d.input_zero_point),
                        half_up, d)
    wmat = w2d.T.astype(np.int64)                            # [K, O]
    fdt = quant.exact_float_dtype(float(np.abs(wmat).sum(axis=0).max(initial=0)))
    direct, pshape = _product_layout(d, x_shape)
    need = [((n * oh * ow, k if not direct else x_shape[3]), fdt), ((n * oh * ow, o), fdt)]
    if pshape is not None:
        need.append((pshape, np.int8))                       # a border of zero points adds 0
    return Int8Blas(_label(direct, fdt), np.ascontiguousarray(wmat, fdt),
                    bias.astype(np.int64) - d.input_zero_point * wmat.sum(axis=0), context.scratch.reserve(*need),
                    direct, half_up)


# ----------------------------------------------------------------------------------------------
# uint8


class Uint8Path(FastPath):
    """``numba`` (``weights`` None: the direct loop) or the exact BLAS product on the node's own
    arrays (the padded input keeps its border of input zero points between invokes)."""

    __slots__ = ("name", "multipliers", "shifts", "half_up", "bias", "bias_folded", "weights", "padded", "cols",
                 "acc", "direct")

    def __init__(self, name, d, bias, bias_folded=None, weights=None, padded=None, cols=None, acc=None,
                 direct=False):
        o = d.output_shape[3]
        self.name, self.half_up = name, d.rounding == "up"
        self.multipliers = np.full(o, d.output_multiplier, np.int64)
        self.shifts = np.full(o, d.output_shift, np.int64)
        self.bias, self.bias_folded, self.weights = bias, bias_folded, weights
        self.padded, self.cols, self.acc, self.direct = padded, cols, acc, direct

    def __call__(self, context, node, d) -> None:
        tensors = context.tensors
        x, out = tensors[node.inputs[0]], tensors[node.outputs[0]]
        o = out.shape[3]
        if self.weights is None:
            bias = _bias(context, node, self.bias).astype(np.int64)
            acc = np.empty(out.shape, np.int32)
            conv_sums_numba(x, tensors[node.inputs[1]], acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                          d.pad_top, d.pad_left, d.input_zero_point, d.filter_zero_point)
            requantize.requantize_rows_jit(acc.reshape(-1, o), bias, self.multipliers, self.shifts,
                                           d.output_zero_point, d.output_activation_min, d.output_activation_max,
                                           out.reshape(-1, o), self.half_up)
            return
        _im2col(x, d, self.cols, self.padded, self.direct)
        np.matmul(self.cols, self.weights, out=self.acc)
        requantize.requantize_rows_jit(self.acc, self.bias_folded, self.multipliers, self.shifts, d.output_zero_point,
                                       d.output_activation_min, d.output_activation_max, out.reshape(-1, o),
                                       self.half_up)


@fast_path(CONV_2D, Conv2DUint8Data, variants=ALL)
def bind_uint8(context, node, d):
    n, oh, ow, o = d.output_shape
    x_shape = context.shape(node.input(0))
    filt = context.value(node.input(1))
    bias = _constant_bias(context, node, o, np.int32)
    if d.groups > 1 or filt is None or bias is None:
        return Uint8Path("numba", d, None if bias is None else bias.astype(np.int64))
    wmat = filt.reshape(o, -1).T.astype(np.int64) - d.filter_zero_point           # [K, O]
    fdt = quant.exact_float_dtype(float(np.abs(wmat).sum(axis=0).max(initial=0)), input_abs_max=255)
    direct, pshape = _product_layout(d, x_shape)
    k = x_shape[3] if direct else d.filter_h * d.filter_w * x_shape[3]
    return Uint8Path(_label(direct, fdt), d, bias, bias.astype(np.int64) - d.input_zero_point * wmat.sum(axis=0),
                     np.ascontiguousarray(wmat, fdt),
                     None if pshape is None else np.full(pshape, d.input_zero_point, np.uint8),
                     np.empty((n * oh * ow, k), fdt), np.empty((n * oh * ow, o), fdt), direct)


# ----------------------------------------------------------------------------------------------
# 16x8


def requantize_16x8(acc2d, bias, d, out2d) -> None:
    """acc2d [rows, O] (exact integer sums) + bias → int16 out2d, by the node's recipe (numba)."""
    args = (acc2d, bias, d.output_multiplier, d.output_shift, d.output_zero_point, d.output_activation_min,
            d.output_activation_max, out2d)
    if d.recipe == "int64":
        requantize.requantize_int64_rows_jit(*args)
    else:
        requantize.requantize_int32_rows_jit(*args, d.up_channels)


class Int16Path(FastPath):
    """``numba`` (``weights`` None) or the exact float64 BLAS product on the node's own arrays."""

    __slots__ = ("name", "bias", "weights", "padded", "cols", "acc", "direct")

    def __init__(self, name, bias, weights=None, padded=None, cols=None, acc=None, direct=False):
        self.name, self.bias, self.weights = name, bias, weights
        self.padded, self.cols, self.acc, self.direct = padded, cols, acc, direct

    def __call__(self, context, node, d) -> None:
        tensors = context.tensors
        x, out = tensors[node.inputs[0]], tensors[node.outputs[0]]
        o = out.shape[3]
        bias = self.bias if self.bias is not None else tensors[node.inputs[2]].astype(np.int64)
        if self.weights is None:
            acc = np.empty(out.shape, np.int64)
            conv_sums_numba(x, tensors[node.inputs[1]], acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                            d.pad_top, d.pad_left, 0, 0)
            requantize_16x8(acc.reshape(-1, o), bias, d, out.reshape(-1, o))
            return
        _im2col(x, d, self.cols, self.padded, self.direct)
        np.matmul(self.cols, self.weights, out=self.acc)
        requantize_16x8(self.acc, bias, d, out.reshape(-1, o))


@fast_path(CONV_2D, Conv2DInt16Data, variants=ALL)
def bind_int16(context, node, d):
    n, oh, ow, o = d.output_shape
    x_shape = context.shape(node.input(0))
    filt, bias = context.value(node.input(1)), context.value(node.input(2))
    bias = None if bias is None else bias.astype(np.int64)
    if d.groups == 1 and filt is not None:
        wmat = filt.reshape(o, -1).T.astype(np.int64)                      # [K, O]
        fdt = quant.exact_matmul_dtype(-quant.INT16_MIN, float(np.abs(wmat).sum(axis=0).max(initial=0)))
        if fdt is not None:
            direct, pshape = _product_layout(d, x_shape)
            return Int16Path(_label(direct, fdt), bias, np.ascontiguousarray(wmat, fdt),
                             None if pshape is None else np.zeros(pshape, np.int16),
                             np.empty((n * oh * ow, d.filter_h * d.filter_w * x_shape[3]), fdt),
                             np.empty((n * oh * ow, o), fdt), direct)
    return Int16Path("numba", bias)
