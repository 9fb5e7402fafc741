"""Ops over a window or a row of the input: AVERAGE_POOL_2D / MAX_POOL_2D, MEAN, SUM, REDUCE_PROD,
RESIZE_BILINEAR and L2_NORMALIZATION."""

from __future__ import annotations

import math

import numpy as np

from .. import quant
from ..kernels._pool import Pool2DQuantizedData
from ..kernels.l2_normalization import L2NormalizationQuantizedData
from ..kernels.mean import MeanQuantizedData
from ..kernels.reduce_prod import ReduceProdData
from ..kernels.resize_bilinear import ResizeBilinearInt8Data, ResizeBilinearUint8Data
from ..kernels.sum import SumData
from ._steps import _activation_note, _finish, _flat, _mbqm, _real, _short, _Work, _wrap32
from .registry import explains
from .result import _show

# ----------------------------------------------------------------------------------------------
# pools and reductions


def _pool_window(w: _Work, x):
    d = w.d
    b, oy, ox, k = w.pos
    y0, x0 = oy * d.stride_h - d.pad_top, ox * d.stride_w - d.pad_left
    ys = range(max(0, y0), min(x.shape[1], y0 + d.filter_h))
    xs = range(max(0, x0), min(x.shape[2], x0 + d.filter_w))
    return np.array([int(x[b, iy, ix, k]) for iy in ys for ix in xs], np.int64)


@explains(Pool2DQuantizedData, fused_activation=True)
def _explain_pool(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0))
    vals = _pool_window(w, x)
    s, zp = w.sz(w.input_slot(0))
    lo, hi = d.output_activation_min, d.output_activation_max
    if w.n.op_name == "MAX_POOL_2D":
        w.recipe = f"{d.dtype} MAX_POOL_2D: compare the raw integers (input and output share scale and zero point)"
        m = w.step("largest tap", f"max of {len(vals)} in-image taps {_short(vals)}", int(vals.max()))
        by_hand = w.step(_activation_note(d), f"clamp({m}, {lo}, {hi})", min(max(m, lo), hi))
        return by_hand, max(_real(s, v, zp) for v in vals)
    w.recipe = f"{d.dtype} AVERAGE_POOL_2D: integer sum, rounding division (no rescaling)"
    acc = w.step("sum", f"Σ of {len(vals)} in-image taps {_short(vals)}", int(vals.sum()))
    n = len(vals)
    if acc > 0:
        q = w.step("rounding division", f"({acc} + {n // 2}) / {n}  (C division; halves away from 0)",
                   (acc + n // 2) // n)
    else:
        q = w.step("rounding division", f"−((−{acc} + {n // 2}) / {n})  (C division; halves away from 0)",
                   -((-acc + n // 2) // n))
    by_hand = w.step(_activation_note(d), f"clamp({q}, {lo}, {hi})", min(max(q, lo), hi))
    return by_hand, float(np.mean([_real(s, v, zp) for v in vals]))


def _reduced_row(w: _Work, x, axes) -> np.ndarray:
    from ..kernels.mean import reduced_rows
    return reduced_rows(x, tuple(axes))[_flat(w.pos, w.out.shape)].astype(np.int64)


@explains(MeanQuantizedData)
def _explain_mean(w: _Work):
    d = w.d
    row = _reduced_row(w, w.get(w.input_slot(0)), d.axes)
    lo, hi = quant.quantized_range(np.dtype(d.dtype))
    acc = w.step("sum", f"Σ of {d.count} values {_short(row)}", int(row.sum()))
    real = float(np.mean([_real(d.input_scale, v, d.input_zero_point) for v in row]))
    if d.algorithm.startswith("optimized"):
        depth = w.out.shape[-1]
        up = w.pos[-1] < depth // 16 * 16
        w.recipe = (f"{d.dtype} MEAN over H, W (optimized): one multiplier for 1/count and the scales, ties "
                    f"{'up (NEON, 16 channels at a time)' if up else 'away (the leftover channels)'}")
        w.step("multiplier", f"{d.real_scale:.9g} = in_scale / (count · out_scale) = {d.output_multiplier}·2^"
                             f"({d.output_shift}−31)", (d.output_multiplier, d.output_shift))
        v = _mbqm(w, acc, d.output_multiplier, d.output_shift, "up" if up else "away")
        v = w.step("add bias", f"{v} + {d.bias}  (out_zp − round(in_zp · in_scale / out_scale))", v + d.bias)
        return w.step("clamp", f"clamp({v}, {lo}, {hi})", min(max(v, lo), hi)), real
    w.recipe = f"{d.dtype} MEAN (reference): 1/count folded into the multiplier"
    shifted = w.step("remove the zero points", f"{acc} − {d.input_zero_point}·{d.count}",
                     _wrap32(acc - d.input_zero_point * d.count))
    w.step("multiplier", f"in_scale / out_scale / {d.count} ≈ {d.output_multiplier}·2^({d.output_shift}−31)",
           (d.output_multiplier, d.output_shift))
    v = _mbqm(w, shifted, d.output_multiplier, d.output_shift)
    return _finish(w, v, d.output_zero_point, lo, hi), real


@explains(SumData)
def _explain_sum(w: _Work):
    d = w.d
    row = _reduced_row(w, w.get(w.input_slot(0)), d.axes)
    lo, hi = quant.quantized_range(np.dtype(d.dtype))
    real = float(sum(_real(d.input_scale, v, d.input_zero_point) for v in row))
    if w.ctx.variant.quantized_sum == "fixed-point":      # reference_ops::QuantizedMeanOrSum (compute_sum)
        w.recipe = f"{d.dtype} SUM (reference kernel): integer sum less the zero points, fixed-point rescale"
        acc = w.step("sum", f"Σ of {d.count} values {_short(row)}", int(row.sum()))
        shifted = w.step("remove the zero points (int32)", f"{acc} − {d.input_zero_point}·{d.count}",
                         _wrap32(acc - d.input_zero_point * d.count))
        w.step("multiplier", f"in_scale / out_scale ≈ {d.output_multiplier}·2^({d.output_shift}−31)",
               (d.output_multiplier, d.output_shift))
        v = _mbqm(w, shifted, d.output_multiplier, d.output_shift)
        return _finish(w, v, d.output_zero_point, lo, hi), real
    w.recipe = f"{d.dtype} SUM: integer sum, then rescaled in float32 (litert's optimized kernel)"
    acc = w.step("sum (int32)", f"Σ of {d.count} values {_short(row)}", _wrap32(int(row.sum())))
    scale, bias = np.float32(d.scale), np.float32(d.bias)
    t = w.step("scale", f"float32({acc}) · {_show(scale)}", np.float32(np.float32(acc) * scale))
    f = w.step("add bias", f"{_show(t)} + {_show(bias)}  (−in_zp · scale · count)", np.float32(t + bias))
    r = w.step("round", f"round({_show(f)}), halves away from 0", int(quant.round_half_away(np.array([f]))[0]))
    return _finish(w, r, d.output_zero_point, lo, hi), real


@explains(ReduceProdData)
def _explain_reduce_prod(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0))
    if d.copy:
        w.kind = "copy"
        w.recipe = "one value per output: TFLite copies the integer (no rescaling)"
        v = int(x.reshape(-1)[_flat(w.pos, w.out.shape)])
        w.step("copy (no arithmetic)", f"the only value of the product, input element {_flat(w.pos, w.out.shape)}", v)
        return v, _real(d.input_scale, v, d.input_zero_point)
    w.recipe = f"{d.dtype} REDUCE_PROD: rescaled after every multiplication (int64 MBQM, one rounding)"
    row = _reduced_row(w, x, d.axes)
    lo, hi = quant.quantized_range(np.dtype(d.dtype))
    w.step("multiplier", f"{d.scaling:.9g} = in_scale / out_scale^(1/{d.count}) = {d.multiplier}·2^({d.shift}−31)",
           (d.multiplier, d.shift))
    p = w.step("first value", f"{int(row[0])} − ({d.input_zero_point})", int(row[0]) - d.input_zero_point)
    mbqm = quant.multiply_by_quantized_multiplier_int64
    for k, v in enumerate(row[1:], start=1):
        t = int(v) - d.input_zero_point
        new = mbqm(p * t, d.multiplier, d.shift)
        if k <= 3 or k >= len(row) - 2:
            w.step(f"× value {k}, rescale", f"MBQM64({p} · {t})", new)
        elif k == 4:
            w.step("…", f"the same for values 4 to {len(row) - 3}", "…")
        p = new
    r = w.step("last rescale", f"MBQM64({p})", mbqm(p, d.multiplier, d.shift))
    real = float(np.prod([_real(d.input_scale, v, d.input_zero_point) for v in row]))
    return _finish(w, r, d.output_zero_point, lo, hi), real


# ----------------------------------------------------------------------------------------------
# RESIZE_BILINEAR, L2_NORMALIZATION


@explains(ResizeBilinearInt8Data)
def _explain_resize_integer(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0))
    b, oy, ox, k = w.pos
    w.recipe = f"{x.dtype} RESIZE_BILINEAR: 10-bit fixed-point positions and weights (ResizeBilinearInteger)"
    y0, y1, wy = int(d.y0[oy]), int(d.y1[oy]), int(d.wy[oy])
    x0, x1, wx = int(d.x0[ox]), int(d.x1[ox]), int(d.wx[ox])
    one = 1 << 10
    w.step("rows", "y0, y1, weight of y1 (in 1/1024)", (y0, y1, wy))
    w.step("columns", "x0, x1, weight of x1 (in 1/1024)", (x0, x1, wx))
    c = [int(x[b, y0, x0, k]), int(x[b, y1, x0, k]), int(x[b, y0, x1, k]), int(x[b, y1, x1, k])]
    wts = [(one - wy) * (one - wx), wy * (one - wx), (one - wy) * wx, wy * wx]
    w.step("corners", "x[y0,x0], x[y1,x0], x[y0,x1], x[y1,x1]", tuple(c))
    total = w.step("weighted sum (int64)", " + ".join(f"{v}·{t}" for v, t in zip(c, wts)),
                   sum(v * t for v, t in zip(c, wts)))
    half = (1 << 19) if total > 0 else -(1 << 19)
    q = abs(total + half) >> 20
    q = q if total + half >= 0 else -q
    by_hand = w.step("÷ 2^20", f"({total} {'+' if half > 0 else '−'} 2^19) / 2^20 (C division; halves away from 0)",
                     q)
    s, zp = w.sz(w.input_slot(0))
    return by_hand, _resize_float(w, x, s, zp)


def _resize_float(w: _Work, x, s, zp) -> float:
    from ..kernels.resize_bilinear import source_positions
    d = w.d
    b, oy, ox, k = w.pos
    y0, y1, dy = source_positions(w.out.shape[1], x.shape[1], d.align_corners, d.half_pixel_centers)
    x0, x1, dx = source_positions(w.out.shape[2], x.shape[2], d.align_corners, d.half_pixel_centers)
    a, c = float(dy[oy]), float(dx[ox])
    r = lambda yy, xx: _real(s, x[b, yy, xx, k], zp)  # noqa: E731
    return ((1 - a) * (1 - c) * r(y0[oy], x0[ox]) + a * (1 - c) * r(y1[oy], x0[ox]) + (1 - a) * c * r(y0[oy], x1[ox])
            + a * c * r(y1[oy], x1[ox]))


@explains(ResizeBilinearUint8Data)
def _explain_resize_uint8(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0))
    b, oy, ox, k = w.pos
    taps = ((d.y0[oy], d.x0[ox]), (d.y0[oy], d.x1[ox]), (d.y1[oy], d.x0[ox]), (d.y1[oy], d.x1[ox]))
    c = [int(x[b, int(yy), int(xx), k]) for yy, xx in taps]
    w.step("corners", "x[y0,x0], x[y0,x1], x[y1,x0], x[y1,x1]", tuple(c))
    s, zp = w.sz(w.input_slot(0))
    if d.exact_8x:
        w.recipe = "uint8 RESIZE_BILINEAR 8x with half-pixel centres: exact sixteenths, rounded half up"
        fy, fx = int(d.dy[oy]), int(d.dx[ox])
        wts = [(16 - fy) * (16 - fx), (16 - fy) * fx, fy * (16 - fx), fy * fx]
        acc = w.step("weighted sum", " + ".join(f"{v}·{t}" for v, t in zip(c, wts)),
                     sum(v * t for v, t in zip(c, wts)))
        return w.step("÷ 256, rounded", f"({acc} + 128) >> 8", (acc + 128) >> 8), _resize_float(w, x, s, zp)
    one = np.float32(1)
    dy, dx = np.float32(d.dy[oy]), np.float32(d.dx[ox])
    if w.ctx.variant.resize_bilinear == "reference":       # reference_ops::ResizeBilinear
        w.recipe = "uint8 RESIZE_BILINEAR (reference kernel): each corner times its two weights, left to right, " \
                   "+ 0.5, truncated"
        w.step("weights (float32)", f"dy = {_show(dy)}, dx = {_show(dx)}, 1 − dy = {_show(one - dy)}, "
                                    f"1 − dx = {_show(one - dx)}", (dy, dx))
        x00, x01, x10, x11 = (np.float32(v) for v in c)
        terms = [np.float32(np.float32(x00 * (one - dy)) * (one - dx)), np.float32(np.float32(x10 * dy) * (one - dx)),
                 np.float32(np.float32(x01 * (one - dy)) * dx), np.float32(np.float32(x11 * dy) * dx)]
        w.step("terms (float32)", "x00·(1−dy)·(1−dx), x10·dy·(1−dx), x01·(1−dy)·dx, x11·dy·dx", tuple(terms))
        acc = terms[0]
        for t in terms[1:]:
            acc = np.float32(acc + t)
        acc = w.step("weighted sum (float32)", "the four terms added in that order", acc)
        return w.step("+ 0.5, truncate", f"(uint8)({_show(acc)} + 0.5)", int(np.float32(acc + np.float32(0.5)))), \
            _resize_float(w, x, s, zp)
    w.recipe = "uint8 RESIZE_BILINEAR: float32 weights, summed in order, + 0.5, truncated"
    wts = [np.float32((one - dy) * (one - dx)), np.float32((one - dy) * dx), np.float32(dy * (one - dx)),
           np.float32(dy * dx)]
    w.step("weights (float32)", f"from dy = {_show(dy)}, dx = {_show(dx)}", tuple(wts))
    acc = np.float32(np.float32(c[0]) * wts[0])
    for v, t in zip(c[1:], wts[1:]):
        acc = np.float32(acc + np.float32(np.float32(v) * t))
    acc = w.step("weighted sum (float32)", "x00·w0 + x01·w1 + x10·w2 + x11·w3, in that order", acc)
    return w.step("+ 0.5, truncate", f"(uint8)({_show(acc)} + 0.5)", int(np.float32(acc + np.float32(0.5)))), \
        _resize_float(w, x, s, zp)


@explains(L2NormalizationQuantizedData)
def _explain_l2norm(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0)).astype(np.int64)
    n = x.shape[-1]
    row = x.reshape(-1, n)[_flat(w.pos, x.shape) // n]
    diffs = row - d.input_zero_point
    v = int(diffs[w.pos[-1]])
    w.recipe = f"{d.dtype} L2_NORMALIZATION: integer sum of squares, fixed-point 1/sqrt (Newton-Raphson)"
    acc = w.step("sum of squares (int32)", f"Σ (x − ({d.input_zero_point}))² over {n} values",
                 _wrap32(int((diffs * diffs).sum())))
    inv, shift = quant.inv_sqrt_quantized_multiplier_exp(acc, -1)
    w.step("1/sqrt as multiplier", f"GetInvSqrtQuantizedMultiplierExp({acc}) = {inv}·2^({shift}−31)", (inv, shift))
    w.step("this value", f"{int(row[w.pos[-1]])} − ({d.input_zero_point})", v)
    if d.dtype == "int8":
        r = int(quant.multiply_by_quantized_multiplier_array(np.array([v]), inv, shift + 7)[0])
        w.step("× 1/sqrt · 128", f"MBQM({v}, {inv}, {shift} + 7)", r)
        by_hand = w.step("clamp", f"clamp({r}, −128, 127)", min(max(r, -128), 127))
    else:
        h = w.step("high multiply", f"SRDHM(128·{v}, {inv})",
                   quant.saturating_rounding_doubling_high_mul(128 * v, inv))
        r = int(quant.rounding_divide_by_pot_array(np.array([h]), -shift)[0])
        w.step("rounding shift", f"round({h} / 2^{-shift})", r)
        by_hand = _finish(w, r, 128, 0, 255)
    norm = math.sqrt(float((diffs.astype(np.float64) ** 2).sum()))
    return by_hand, (v / max(norm, 1e-6)) if norm else 0.0
