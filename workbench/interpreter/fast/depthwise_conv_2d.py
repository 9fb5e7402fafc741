"""Speed layer for DEPTHWISE_CONV_2D: direct numba loop nests, channels innermost.

Each loop visits the in-image taps of one output pixel in TFLite's order (row, then column) and keeps one
accumulator row of C·M channels, so it computes the bits of ``kernels/depthwise_conv_2d.py``:

  * float32 — :func:`depthwise_rows`, rows split over ``num_threads`` threads; the sums start at the bias,
    as litert-x86's optimized kernel does (``Variant.depthwise_bias_first``): x86 only; with depth
    multiplier 1, a constant filter and bias and the kernel library, its C loop (:class:`FloatNative`);
  * int8 — :func:`depthwise_int8_rows`, rows split over threads: int32 sums row by row, requantized with
    ties up in the first ``vector_channels`` channels (0 under the reference variant): both variants;
    with depth multiplier 1, a constant filter and bias and the kernel library, its C loop
    (:class:`Int8Native`, :mod:`workbench.perf.depthwise`): the same bits, every pixel the same loop;
  * uint8 / hybrid / 16x8 — :func:`depthwise_offsets_numba` (one input offset per image; int32 sums,
    int64 for 16x8), then the uint8 requantization (both variants), the hybrid float tail of
    litert-x86 (x86 only) or the int64 requantization (both variants).

The filter (as [KH, KW, C·M]) and the bias are copied once, at bind, when they are constant.
"""

from __future__ import annotations

import numpy as np

from ...perf import depthwise as _dw
from ...perf import vnni
from ...perf.jit import native, njit, run_rows
from ...perf.vnni import depthwise_rq, narrow_requantize, requantize_block, shift_parts
from ...schema.enums import BuiltinOperator
from ..kernels.depthwise_conv_2d import (
    DepthwiseConv2DData,
    DepthwiseConv2DHybridData,
    DepthwiseConv2DInt8Data,
    DepthwiseConv2DInt16Data,
    DepthwiseConv2DUint8Data,
)
from ..variants import LITERT_X86, VARIANTS
from . import FastPath, fast_path
from .requantize import quantize_rows_jit, requantize_int64_rows_jit, requantize_rows_jit

ALL = tuple(VARIANTS)
X86 = (LITERT_X86.name,)
OP = BuiltinOperator.DEPTHWISE_CONV_2D


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
    left, right, mask, nudge = shift_parts(shift)
    up = np.empty(co, np.bool_)
    for k in range(co):
        up[k] = half_up and k < n_vec
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


@njit(nogil=True)
def _inside_columns(ow, wd, sw, dw, pl):
    """(xa, xb): the output columns whose 3x3 window (column dilation ``dw``) lies inside the input's ``wd``
    columns — xa the first with x0 >= 0, xb one past the last with x0 + 2·dw < W."""
    xa = min(ow, max(0, -(-pl // sw)))
    return xa, max(xa, min(ow, (wd - 1 - 2 * dw + pl) // sw + 1))


@njit(nogil=True)
def depthwise3x3_rows(x, w, bias, out, sh, sw, dh, dw, pt, pl, lo, hi, r0, r1):
    """:func:`depthwise_rows` for a 3x3 filter with depth multiplier 1, output rows r0..r1.

    An output pixel whose nine taps all fall inside the image is one pass over the channels: each
    channel's sum stays in a register (a vector register of 16 channels) from the bias through the
    nine taps, in :func:`depthwise_rows`' order (row, then column), so the bits are the same; the
    pixels near the padded edges take :func:`depthwise_rows`' loop."""
    _, h, wd, c = x.shape
    _, oh, ow, _ = out.shape
    for r in range(r0, r1):
        b = r // oh
        oy = r % oh
        y0 = oy * sh - pt
        if y0 < 0 or y0 + 2 * dh >= h:
            depthwise_rows(x, w, bias, out, sh, sw, dh, dw, pt, pl, lo, hi, r, r + 1)
            continue
        xa, xb = _inside_columns(ow, wd, sw, dw, pl)
        y1, y2 = y0 + dh, y0 + 2 * dh
        for ox in range(ow):
            if ox < xa or ox >= xb:
                _depthwise_pixel(x, w, bias, out, b, oy, ox, y0, ox * sw - pl, dh, dw, lo, hi)
                continue
            x0 = ox * sw - pl
            x1, x2 = x0 + dw, x0 + 2 * dw
            for k in range(c):
                v = bias[k]
                v += x[b, y0, x0, k] * w[0, 0, k]
                v += x[b, y0, x1, k] * w[0, 1, k]
                v += x[b, y0, x2, k] * w[0, 2, k]
                v += x[b, y1, x0, k] * w[1, 0, k]
                v += x[b, y1, x1, k] * w[1, 1, k]
                v += x[b, y1, x2, k] * w[1, 2, k]
                v += x[b, y2, x0, k] * w[2, 0, k]
                v += x[b, y2, x1, k] * w[2, 1, k]
                v += x[b, y2, x2, k] * w[2, 2, k]
                if v < lo:
                    v = lo
                if v > hi:
                    v = hi
                out[b, oy, ox, k] = v


PIXELS = 4      # output pixels the float 3x3 IR kernel computes side by side (independent chains of adds)


def _build_depthwise3x3_f32():
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    def is_c(t, ndim):
        return isinstance(t, types.Array) and t.layout == "C" and t.dtype == types.float32 and t.ndim == ndim

    @intrinsic
    def depthwise3x3_f32_native(typingctx, x, pix0, pstep, tstep, rstep, count, w, bias, out, o0, lo, hi):
        if not (isinstance(x, types.Array) and x.layout == "C" and x.dtype == types.float32 and is_c(w, 2)
                and is_c(bias, 1) and is_c(out, 2)):
            return None
        sig = types.void(x, pix0, pstep, tstep, rstep, count, w, bias, out, o0, lo, hi)

        def codegen(context, builder, signature, args):
            tys = signature.args
            i64, f32 = ir.IntType(64), ir.FloatType()
            f16 = ir.VectorType(f32, 16)

            def as_i64(k):
                return context.cast(builder, args[k], tys[k], types.int64)

            def arr(k):
                return context.make_array(tys[k])(context, builder, args[k])

            def addr(k):
                return builder.ptrtoint(arr(k).data, i64)

            def const(v):
                return ir.Constant(i64, v)

            def load(at):
                return builder.load(builder.inttoptr(at, f16.as_pointer()), align=4)

            def splat(v):
                vec = builder.insert_element(ir.Constant(f16, ir.Undefined), v, ir.Constant(ir.IntType(32), 0))
                return builder.shuffle_vector(vec, ir.Constant(f16, ir.Undefined),
                                              ir.Constant(ir.VectorType(ir.IntType(32), 16), None))

            out_arr = arr(8)
            c = builder.extract_value(out_arr.shape, 1)
            out0 = builder.add(builder.ptrtoint(out_arr.data, i64), builder.mul(builder.mul(as_i64(9), c), const(4)))
            x0 = builder.add(addr(0), builder.mul(as_i64(1), const(4)))
            pstep, tstep, rstep = (builder.mul(as_i64(k), const(4)) for k in (2, 3, 4))     # in bytes
            count = as_i64(5)
            w0, b0 = addr(6), addr(7)
            lo = splat(context.cast(builder, args[10], tys[10], types.float32))
            hi = splat(context.cast(builder, args[11], tys[11], types.float32))
            taps = [builder.add(builder.mul(const(ky), rstep), builder.mul(const(kx), tstep))
                    for ky in range(3) for kx in range(3)]
            blocks = builder.udiv(builder.add(c, const(15)), const(16))

            def pixels(first, n):
                # n pixels side by side, the channel blocks inside (the input is read in order)
                with cgutils.for_range(builder, blocks) as inner:
                    ch = builder.mul(inner.index, const(16))
                    past = builder.icmp_signed(">", builder.add(ch, const(16)), c)
                    ch = builder.select(past, builder.sub(c, const(16)), ch)     # the last block ends at C
                    ch4 = builder.mul(ch, const(4))
                    ws = [load(builder.add(w0, builder.add(builder.mul(builder.mul(const(t), c), const(4)), ch4)))
                          for t in range(9)]
                    bias = load(builder.add(b0, ch4))
                    accs, rows = [], []
                    for j in range(n):
                        p = builder.add(first, const(j))
                        rows.append(p)
                        accs.append((builder.add(builder.add(x0, builder.mul(p, pstep)), ch4), bias))
                    for t in range(9):      # the teaching layer's order: bias, then row by row, column by column
                        accs = [(base, builder.fadd(acc, builder.fmul(load(builder.add(base, taps[t])), ws[t])))
                                for base, acc in accs]
                    for p, (_, v) in zip(rows, accs):
                        v = builder.select(builder.fcmp_ordered("<", v, lo), lo, v)    # NaN stays NaN
                        v = builder.select(builder.fcmp_ordered(">", v, hi), hi, v)
                        at = builder.add(out0, builder.add(builder.mul(builder.mul(p, c), const(4)), ch4))
                        builder.store(v, builder.inttoptr(at, f16.as_pointer()), align=4)

            groups = builder.udiv(count, const(PIXELS))
            with cgutils.for_range(builder, groups) as outer:
                pixels(builder.mul(outer.index, const(PIXELS)), PIXELS)
            with cgutils.for_range(builder, builder.sub(count, builder.mul(groups, const(PIXELS)))) as tail:
                pixels(builder.add(builder.mul(groups, const(PIXELS)), tail.index), 1)
            return context.get_dummy_value()

        return sig, codegen

    return depthwise3x3_f32_native


@native(_build_depthwise3x3_f32)
def depthwise3x3_f32(x, pix0, pstep, tstep, rstep, count, w, bias, out, o0, lo, hi):
    """``count`` output pixels of a float32 3x3 depthwise convolution (depth multiplier 1, C ≥ 16) whose nine
    taps lie inside the image, into ``out`` [*, C] rows o0 … o0 + count.  Offsets into ``x`` count float32
    values: ``pix0`` of the first pixel's top-left tap, ``pstep`` from a pixel to the next, ``tstep`` from
    a tap to the next in a filter row, ``rstep`` from a filter row to the next; ``w`` [9, C].

    Compiled: 16 channels to a vector register, ``PIXELS`` pixels side by side; each sum starts at the bias
    and adds the nine products one by one in :func:`depthwise_rows`' order (no fused multiply-add), so the
    bits are the teaching layer's; then the clamp to [lo, hi].  Here, numpy in the same order."""
    c = out.shape[1]
    flat = x.reshape(-1)
    offs = [ky * rstep + kx * tstep for ky in range(3) for kx in range(3)]
    for p in range(count):
        base = pix0 + p * pstep
        v = bias.copy()
        for t, o in enumerate(offs):
            v = v + flat[base + o:base + o + c] * w[t]
        v = np.where(v < lo, lo, v)
        out[o0 + p] = np.where(v > hi, hi, v)


@njit(nogil=True)
def depthwise3x3_ir_rows(x, w, w9, bias, out, out2d, sh, sw, dh, dw, pt, pl, lo, hi, r0, r1):
    """:func:`depthwise3x3_rows` with the inside pixels of each row in one call of :func:`depthwise3x3_f32`
    (C ≥ 16; ``w9`` the filter as [9, C], ``out2d`` the output as [N·OH·OW, C]); the rows and pixels near
    the padded edges take :func:`depthwise_rows`' loop as before."""
    _, h, wd, c = x.shape
    _, oh, ow, _ = out.shape
    for r in range(r0, r1):
        b = r // oh
        oy = r % oh
        y0 = oy * sh - pt
        if y0 < 0 or y0 + 2 * dh >= h:
            depthwise_rows(x, w, bias, out, sh, sw, dh, dw, pt, pl, lo, hi, r, r + 1)
            continue
        xa, xb = _inside_columns(ow, wd, sw, dw, pl)
        for ox in range(ow):
            if ox < xa or ox >= xb:
                _depthwise_pixel(x, w, bias, out, b, oy, ox, y0, ox * sw - pl, dh, dw, lo, hi)
        if xb > xa:
            depthwise3x3_f32(x, ((b * h + y0) * wd + xa * sw - pl) * c, sw * c, dw * c, dh * wd * c, xb - xa, w9,
                             bias, out2d, r * ow + xa, lo, hi)


@njit(nogil=True)
def _depthwise_pixel(x, w, bias, out, b, oy, ox, y0, x0, dh, dw, lo, hi):
    """One output pixel of a 3x3, multiplier-1 depthwise conv at the padded edge: the in-image taps
    only, each channel's sum from the bias, taps in row-then-column order (:func:`depthwise_rows`)."""
    _, h, wd, c = x.shape
    for k in range(c):
        v = bias[k]
        for ky in range(3):
            iy = y0 + ky * dh
            if iy < 0 or iy >= h:
                continue
            for kx in range(3):
                ix = x0 + kx * dw
                if ix >= 0 and ix < wd:
                    v += x[b, iy, ix, k] * w[ky, kx, k]
        if v < lo:
            v = lo
        if v > hi:
            v = hi
        out[b, oy, ox, k] = v


@njit(nogil=True)
def _int8_edge_pixel(acc, ox, x, w, b, y0, x0, dh, dw, zp):
    """acc[ox] = the 3x3 window's sum of (input - zero point) x weight for a pixel whose window leaves the
    input (taps outside it are skipped: the zero padding of an int8 convolution is the zero point)."""
    h, wd, c = x.shape[1], x.shape[2], x.shape[3]
    for k in range(c):
        acc[ox, k] = 0
    for ky in range(3):
        iy = y0 + ky * dh
        if iy < 0 or iy >= h:
            continue
        for kx in range(3):
            ix = x0 + kx * dw
            if ix < 0 or ix >= wd:
                continue
            for k in range(c):
                acc[ox, k] += (np.float32(x[b, iy, ix, k]) - zp) * w[ky, kx, k]


@njit(nogil=True)
def depthwise3x3_int8_rows(x, w, bias, mult, shift, out_zp, lo, hi, half_up, n_vec, out, sh, sw, dh, dw, pt,
                           pl, in_zp, r0, r1):
    """:func:`depthwise_int8_rows` for a 3x3 filter with depth multiplier 1, output rows r0..r1.

    ``w`` is the filter as float32 [3, 3, C].  Per output row, first the sums of (x − in_zp)·w over the
    in-image taps, channels innermost: nine taps unrolled inside the image, a tap loop at its padded
    edges.  They are summed in float32, 16 channels to a vector register, and are exact: every
    product and partial sum is an integer below 255·128·9 < 2^24, which float32 holds exactly, so
    they equal the int32 sums of the teaching layer.  Then the row, still in the cache, is
    requantized as :func:`depthwise_int8_rows` does, in two loops without a branch: the first
    ``n_vec`` channels round ties up (when ``half_up``), the others away from zero."""
    _, h, wd, c = x.shape
    _, oh, ow, _ = out.shape
    left, right, mask, nudge = shift_parts(shift)
    nv = n_vec if half_up else 0
    narrow, bias32, mult32 = narrow_requantize(bias, mult, left, 255 * 128 * 9)
    zp = np.float32(in_zp)
    acc = np.empty((ow, c), np.float32)
    xa, xb = _inside_columns(ow, wd, sw, dw, pl)
    for r in range(r0, r1):
        b = r // oh
        oy = r % oh
        y0 = oy * sh - pt
        inside_y = y0 >= 0 and y0 + 2 * dh < h
        y1, y2 = y0 + dh, y0 + 2 * dh
        for ox in range(ow):
            x0 = ox * sw - pl
            x1, x2 = x0 + dw, x0 + 2 * dw
            if inside_y and ox >= xa and ox < xb:
                for k in range(c):
                    a = (np.float32(x[b, y0, x0, k]) - zp) * w[0, 0, k]
                    a += (np.float32(x[b, y0, x1, k]) - zp) * w[0, 1, k]
                    a += (np.float32(x[b, y0, x2, k]) - zp) * w[0, 2, k]
                    a += (np.float32(x[b, y1, x0, k]) - zp) * w[1, 0, k]
                    a += (np.float32(x[b, y1, x1, k]) - zp) * w[1, 1, k]
                    a += (np.float32(x[b, y1, x2, k]) - zp) * w[1, 2, k]
                    a += (np.float32(x[b, y2, x0, k]) - zp) * w[2, 0, k]
                    a += (np.float32(x[b, y2, x1, k]) - zp) * w[2, 1, k]
                    a += (np.float32(x[b, y2, x2, k]) - zp) * w[2, 2, k]
                    acc[ox, k] = a
            else:
                _int8_edge_pixel(acc, ox, x, w, b, y0, x0, dh, dw, zp)
        for ox in range(ow):
            if narrow:          # the same arithmetic with an int32 sum and multiplier (narrow_requantize)
                for k in range(nv):
                    t = np.int64(np.int32(np.int32(acc[ox, k]) + bias32[k])) * np.int64(mult32[k])
                    t = ((t + 1073741824) >> 31) + nudge[k]
                    out[b, oy, ox, k] = min(max((t >> right[k]) + out_zp, lo), hi)
                for k in range(nv, c):
                    t = np.int64(np.int32(np.int32(acc[ox, k]) + bias32[k])) * np.int64(mult32[k])
                    t = (t + 1073741824) >> 31
                    t = (t >> right[k]) + ((t & mask[k]) > ((mask[k] >> 1) + (t < 0))) + out_zp
                    out[b, oy, ox, k] = min(max(t, lo), hi)
                continue
            for k in range(nv):
                t = (np.int64(acc[ox, k]) + bias[k]) << left[k]
                t = (t * mult[k] + 1073741824) >> 31
                t = ((t + nudge[k]) >> right[k]) + out_zp
                out[b, oy, ox, k] = min(max(t, lo), hi)
            for k in range(nv, c):
                t = (np.int64(acc[ox, k]) + bias[k]) << left[k]
                t = (t * mult[k] + 1073741824) >> 31
                t = (t >> right[k]) + ((t & mask[k]) > ((mask[k] >> 1) + (t < 0))) + out_zp
                out[b, oy, ox, k] = min(max(t, lo), hi)


@njit(nogil=True)
def depthwise3x3_int8_rq(x, w, w9, wz, out2d, q32, q64, scalars, oh, ow, sh, sw, dh, dw, pt, pl, in_zp, r0, r1):
    """:func:`depthwise3x3_int8_rows` with the zero point folded and the requantization of
    :func:`workbench.perf.vnni.requantize_block` (16 channels to a vector register, in registers).

    Inside the image (C ≥ 16) one call of :func:`workbench.perf.vnni.depthwise_rq` per output row computes
    every pixel whose taps are all in the image: Σ (x − in_zp)·w = Σ x·w + ``wz`` (``wz`` = −in_zp·Σ w per
    channel, made at bind), nine fused multiply-adds per 16 channels.  The other pixels (the padded edges,
    or every pixel when C < 16) sum here, tap by tap, in float32 (exact: integers below 2^24) into ``acc``
    [OW, channels padded to 16], and are requantized by :func:`~workbench.perf.vnni.requantize_block`.
    ``w`` is the filter as float32 [3, 3, C], ``w9`` the same as [9, C]; ``out2d`` the output as [N·OH·OW, C]."""
    _, h, wd, c = x.shape
    n16 = q32.shape[1]
    nblocks = n16 // 16
    zp = np.float32(in_zp)
    acc = np.zeros((ow, n16), np.float32)
    xa, xb = _inside_columns(ow, wd, sw, dw, pl)
    wide = c >= 16
    for r in range(r0, r1):
        b = r // oh
        oy = r % oh
        y0 = oy * sh - pt
        inside_y = y0 >= 0 and y0 + 2 * dh < h
        inner = inside_y and wide and xb > xa
        for ox in range(ow):
            if inner and xa <= ox < xb:
                continue
            _int8_edge_pixel(acc, ox, x, w, b, y0, ox * sw - pl, dh, dw, zp)
        if inner:
            pix0 = ((b * h + y0) * wd + xa * sw - pl) * c
            depthwise_rq(x, pix0, sw * c, dw * c, dh * wd * c, xb - xa, w9, wz, out2d, r * ow + xa, q32, q64,
                         scalars)
            spans = ((0, xa), (xb, ow))
        else:
            spans = ((0, ow), (ow, ow))
        for s0, s1 in spans:
            if s1 > s0:
                for nb0 in range(0, nblocks, vnni.BLOCKS):
                    requantize_block(acc, s0 * n16 + 16 * nb0, s1 - s0, nb0, min(vnni.BLOCKS, nblocks - nb0), out2d,
                                     r * ow + s0, q32, q64, scalars)


@njit
def depthwise_offsets_numba(x, w, out, sh, sw, dh, dw, pt, pl, in_offsets, w_zp):
    """Σ (x − in_offsets[b])·(w − w_zp) over in-image taps into ``out``, channels innermost, in
    ``out``'s type: int32 for uint8 (in_offsets: the zero point) and hybrid (each image's own zero
    point), int64 for 16x8 (offsets and w_zp 0; ``reference_integer_ops::DepthwiseConvPerChannel``'s
    int64 accumulator)."""
    n_b, h, wd, c = x.shape
    kh, kw, co = w.shape
    _, oh, ow, _ = out.shape
    mult = co // c
    acc = np.empty(co, out.dtype)
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

# ----------------------------------------------------------------------------------------------
# bound paths


def bias_copy(bias, dtype):
    """The constant bias as the loops take it: integer biases as a fresh int64 array (aligned and
    writable: a bias read in place from the model's buffer may be neither, and numba / the precompiled
    library treat such arrays as other types), float32 ones as stored."""
    if np.dtype(dtype).kind == "i":
        return np.array(bias, dtype)
    return np.ascontiguousarray(bias, dtype)


class _Depthwise(FastPath):
    """Filter [KH, KW, C·M] and bias [C·M] of ``dtype``: copied at bind when constant (None: read
    from the tensors at every invoke)."""

    __slots__ = ("weights", "bias")
    name = "numba"
    weights_dtype = None
    bias_dtype = np.int64

    def __init__(self, context, node):
        f_t, b_t = node.input(1), node.input(2)
        filt = context.value(f_t)
        co = context.shape(f_t)[3]
        self.weights = None if filt is None else np.ascontiguousarray(filt.reshape(filt.shape[1:]),
                                                                      self.weights_dtype or filt.dtype)
        bias = context.value(b_t) if b_t >= 0 else np.zeros(co, self.bias_dtype)
        self.bias = None if bias is None else bias_copy(bias, self.bias_dtype)

    def operands(self, context, node):
        t = context.tensors
        w = self.weights
        if w is None:
            f = t[node.inputs[1]]
            w = f.reshape(f.shape[1:])
        bias = self.bias if self.bias is not None else t[node.inputs[2]].astype(self.bias_dtype)
        return t[node.inputs[0]], w, bias, t[node.outputs[0]]


def is_3x3_multiplier_1(context, node) -> bool:
    """The filter is 3x3 and each input channel makes one output channel: the unrolled kernels apply."""
    _, kh, kw, co = context.shape(node.input(1))
    return kh == 3 and kw == 3 and co == context.shape(node.input(0))[3]


class FloatRows(_Depthwise):
    """Rows over threads; ``kernel`` is :func:`depthwise3x3_rows` for a 3x3 multiplier-1 filter, chosen at
    bind, else :func:`depthwise_rows`; :func:`depthwise3x3_ir_rows` for a 3x3 multiplier-1 filter with at
    least 16 channels, constant and bias-first (litert-x86)."""

    __slots__ = ("kernel", "w9")
    weights_dtype = np.float32
    bias_dtype = np.float32

    def __init__(self, context, node):
        super().__init__(context, node)
        self.kernel = depthwise3x3_rows if is_3x3_multiplier_1(context, node) else depthwise_rows
        self.w9 = None
        if self.kernel is depthwise3x3_rows and self.weights is not None and self.weights.shape[2] >= 16:
            self.kernel = depthwise3x3_ir_rows
            self.w9 = np.ascontiguousarray(self.weights.reshape(9, -1))

    def __repr__(self) -> str:
        return f"<fast path {self.name}: {self.kernel.__name__}>"

    def __call__(self, context, node, d):
        x, w, bias, out = self.operands(context, node)
        if self.w9 is None:
            args = (x, w, bias, out)
        else:
            args = (x, w, self.w9, bias, out, out.reshape(-1, out.shape[3]))
        run_rows(self.kernel, out.shape[0] * out.shape[1], context.num_threads, *args, d.stride_h,
                 d.stride_w, d.dilation_h, d.dilation_w, d.pad_top, d.pad_left, np.float32(d.output_activation_min),
                 np.float32(d.output_activation_max), work=out.size * w.shape[0] * w.shape[1])


class Int8Rows(_Depthwise):
    """Rows over threads; ``kernel`` is :func:`depthwise3x3_int8_rows` for a 3x3 multiplier-1 filter,
    chosen at bind, else :func:`depthwise_int8_rows`; :func:`depthwise3x3_int8_rq` where, in addition,
    the filter and bias are constant and the requantization is narrow (``tables``, made here)."""

    __slots__ = ("kernel", "tables", "wz", "w9")
    weights_dtype = np.int16

    def __init__(self, context, node, d):
        super().__init__(context, node)
        self.kernel = depthwise_int8_rows
        self.tables = self.wz = self.w9 = None
        if is_3x3_multiplier_1(context, node):
            self.kernel = depthwise3x3_int8_rows
            if self.weights is not None:
                self.weights = self.weights.astype(np.float32)      # its float32 sums are exact (see there)
                if self.bias is not None:
                    co = self.weights.shape[2]
                    self.tables = vnni.requant_tables(self.bias, d.output_multiplier, d.output_shift,
                                                      d.output_zero_point, d.output_activation_min,
                                                      d.output_activation_max, True, -(-co // 16) * 16, 255 * 128 * 9,
                                                      n_up=d.vector_channels)
            if self.tables is not None:
                self.kernel = depthwise3x3_int8_rq
                self.wz = (-float(d.input_zero_point) * self.weights.astype(np.float64).sum(axis=(0, 1))).astype(
                    np.float32)
                self.w9 = np.ascontiguousarray(self.weights.reshape(9, -1))

    def __repr__(self) -> str:
        return f"<fast path {self.name}: {self.kernel.__name__}>"

    def __call__(self, context, node, d):
        x, w, bias, out = self.operands(context, node)
        if self.tables is not None:
            _, oh, ow, co = out.shape
            run_rows(depthwise3x3_int8_rq, out.shape[0] * oh, context.num_threads, x, w, self.w9, self.wz,
                     out.reshape(-1, co), *self.tables, oh, ow, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                     d.pad_top, d.pad_left, d.input_zero_point, work=out.size * 9)
            return
        if self.kernel is depthwise3x3_int8_rows and w.dtype != np.float32:
            w = w.astype(np.float32)                                 # a filter that is not constant
        run_rows(self.kernel, out.shape[0] * out.shape[1], context.num_threads, x, w, bias,
                 d.output_multiplier, d.output_shift, d.output_zero_point, d.output_activation_min,
                 d.output_activation_max, True, d.vector_channels, out, d.stride_h, d.stride_w, d.dilation_h,
                 d.dilation_w, d.pad_top, d.pad_left, d.input_zero_point, work=out.size * w.shape[0] * w.shape[1])


class _Native(FastPath):
    """A depthwise convolution by one of the kernel library's C loops (:mod:`workbench.perf.depthwise`,
    ``native/depthwise.c``), for a constant filter and bias of depth multiplier 1 (any KH x KW): the
    filter packed at bind, the node's multiply-adds (``work``) deciding whether it is shared among
    threads; a call the library does not take (arrays it does not expect) runs ``fallback``, the
    numba path bound for the same node."""

    __slots__ = ("fn", "weights", "args", "work", "fallback")

    def __init__(self, fn, fallback, d, weights, *args):
        kh, kw, _ = fallback.weights.shape
        self.fn, self.fallback, self.weights, self.args = fn, fallback, weights, args
        self.work = int(np.prod(d.output_shape)) * kh * kw

    @staticmethod
    def applies(fn, context, node, fallback) -> bool:
        return not (fn is None or fallback.weights is None or fallback.bias is None
                    or context.shape(node.input(1))[3] != context.shape(node.input(0))[3])

    def __call__(self, context, node, d):
        if self.run(*self.operands(context, node)) != 0:
            self.fallback(context, node, d)

    def operands(self, context, node) -> tuple:
        """(threads, x, out)."""
        tensors = context.tensors
        threads = context.num_threads if self.work >= _dw.MIN_SPLIT_WORK else 1
        return threads, tensors[node.inputs[0]], tensors[node.outputs[0]]

    def native_call(self, context, node):
        return self.fn, self.arguments(*self.operands(context, node))

    def run(self, threads, x, out):
        return self.fn(*self.arguments(threads, x, out))


class FloatNative(_Native):
    """``native``: ``dw_f32``, the teaching layer's bits as :class:`FloatRows` (filter and bias packed
    together by :func:`workbench.perf.depthwise.pack_float`; geometry, clamp)."""

    __slots__ = ()
    name = "native"

    @classmethod
    def bind(cls, context, node, d, fallback: FloatRows):
        """A :class:`FloatNative` for this node, or None where it does not apply."""
        fn = _dw.float_function()
        if not cls.applies(fn, context, node, fallback):
            return None
        kh, kw, _ = fallback.weights.shape
        packed = _dw.pack_float(fallback.weights, fallback.bias)
        return cls(fn, fallback, d, packed, _dw.geometry(d, kh, kw, zero_point=False),
                   _dw.float_clamp(packed, d.output_activation_min, d.output_activation_max))

    def arguments(self, threads, x, out) -> tuple:
        geometry, clamp = self.args
        return threads, x, self.weights, out, geometry, clamp


class Int8Native(_Native):
    """``native(int8, exact)``: ``dw_i8``, where the requantization is narrow
    (:func:`workbench.perf.vnni.requant_tables`) and the float32 sums stay exact
    (:func:`workbench.perf.depthwise.exact`); ``fallback`` is the :class:`Int8Rows` of the node."""

    __slots__ = ()
    name = "native(int8, exact)"

    @classmethod
    def bind(cls, context, node, d, fallback: Int8Rows):
        """An :class:`Int8Native` for this node, or None where it does not apply."""
        fn = _dw.int8_function()
        if not cls.applies(fn, context, node, fallback):
            return None
        kh, kw, co = fallback.weights.shape
        if not _dw.exact(fallback.bias, kh * kw):
            return None
        tables = vnni.requant_tables(fallback.bias, d.output_multiplier, d.output_shift, d.output_zero_point,
                                     d.output_activation_min, d.output_activation_max, True,
                                     -(-co // _dw.BLOCK) * _dw.BLOCK, 255 * 128 * kh * kw,
                                     n_up=d.vector_channels)
        return None if tables is None else cls(fn, fallback, d, _dw.pack_filter(fallback.weights), tables,
                                               _dw.geometry(d, kh, kw))

    def arguments(self, threads, x, out) -> tuple:
        tables, geometry = self.args
        return threads, x, self.weights, out, *tables, geometry


class Uint8(_Depthwise):
    __slots__ = ("acc", "multipliers", "shifts", "offsets")

    def __init__(self, context, node, d):
        super().__init__(context, node)
        co = d.output_shape[3]
        self.acc = np.empty(d.output_shape, np.int32)
        self.multipliers = np.full(co, d.output_multiplier, np.int64)
        self.shifts = np.full(co, d.output_shift, np.int64)
        self.offsets = np.full(d.output_shape[0], d.input_zero_point, np.int32)

    def __call__(self, context, node, d):
        x, w, bias, out = self.operands(context, node)
        depthwise_offsets_numba(x, w, self.acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top,
                                d.pad_left, self.offsets, d.filter_zero_point)
        co = out.shape[3]
        requantize_rows_jit(self.acc.reshape(-1, co), bias, self.multipliers, self.shifts, d.output_zero_point,
                            d.output_activation_min, d.output_activation_max, out.reshape(-1, co), d.rounding == "up")


class Int16(_Depthwise):
    __slots__ = ("acc", "offsets")

    def __init__(self, context, node, d):
        super().__init__(context, node)
        self.acc = np.empty(d.output_shape, np.int64)
        self.offsets = np.zeros(d.output_shape[0], np.int32)      # 16x8: no input zero point

    def __call__(self, context, node, d):
        x, w, bias, out = self.operands(context, node)
        depthwise_offsets_numba(x, w, self.acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.pad_top,
                                d.pad_left, self.offsets, 0)
        co = out.shape[3]
        requantize_int64_rows_jit(self.acc.reshape(-1, co), bias, d.output_multiplier, d.output_shift, 0,
                                  d.output_activation_min, d.output_activation_max, out.reshape(-1, co))


class Hybrid(_Depthwise):
    """Each image quantized (numba), int32 sums (numba), litert-x86's float tail (numba)."""

    __slots__ = ("quantized", "scaling_factors", "input_offsets", "acc")
    name = "quantize(numba)+numba"
    bias_dtype = np.float32

    def __init__(self, context, node, d):
        super().__init__(context, node)
        n, h, w, c = context.shape(node.input(0))
        self.quantized = np.zeros((n, h, w, c), np.int8)
        self.scaling_factors, self.input_offsets = np.ones(n, np.float32), np.zeros(n, np.int32)
        self.acc = np.empty(d.output_shape, np.int32)

    def __call__(self, context, node, d):
        x, w, bias, out = self.operands(context, node)
        n = x.shape[0]
        quantize_rows_jit(x.reshape(n, -1), True, self.quantized.reshape(n, -1), self.scaling_factors,
                          self.input_offsets)
        depthwise_offsets_numba(self.quantized, w, self.acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                                d.pad_top, d.pad_left, self.input_offsets, 0)
        hybrid_depthwise_output_jit(self.acc, self.scaling_factors, d.filter_scale, bias, d.vector_channels,
                                    np.float32(d.output_activation_min), np.float32(d.output_activation_max), out)


@fast_path(OP, DepthwiseConv2DData, variants=X86)          # its sums start at the bias
def bind_float(context, node, d):
    rows = FloatRows(context, node)
    return FloatNative.bind(context, node, d, rows) or rows


@fast_path(OP, DepthwiseConv2DInt8Data, variants=ALL)      # the tie rule comes from d.vector_channels
def bind_int8(context, node, d):
    rows = Int8Rows(context, node, d)
    return Int8Native.bind(context, node, d, rows) or rows


@fast_path(OP, DepthwiseConv2DUint8Data, variants=ALL)
def bind_uint8(context, node, d):
    return Uint8(context, node, d)


@fast_path(OP, DepthwiseConv2DInt16Data, variants=ALL)
def bind_int16(context, node, d):
    return Int16(context, node, d)


@fast_path(OP, DepthwiseConv2DHybridData, variants=X86)    # litert-x86's two scaling orders
def bind_hybrid(context, node, d):
    return Hybrid(context, node, d)
