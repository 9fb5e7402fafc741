"""Table-based ops: SOFTMAX (int8 / uint8 float table or gemmlowp fixed point, int16 LUTs), LOG_SOFTMAX, the 256- and
513-entry LUT activations (LOGISTIC, TANH, ELU, EXP, LOG, RSQRT, GELU, ...) and int16 LOGISTIC / TANH."""

from __future__ import annotations

import math

import numpy as np

from .. import quant
from ..kernels._softmax import (
    ACCUMULATION_BITS,
    SCALED_DIFF_BITS,
    _shl,
    log_x_ge_1,
    scaled_exps,
    sum_of_exps,
)
from ..kernels._softmax import (
    INT32_MIN as _SM_INT32_MIN,
)
from ..kernels._unary import LutData
from ..kernels.log_softmax import LogSoftmaxFixedPointData, LogSoftmaxQuantizedData
from ..kernels.logistic import LogisticInt16Data, int16_uses_table
from ..kernels.softmax import SoftmaxFixedPointData, SoftmaxInt8Data, SoftmaxInt16Data
from ..kernels.tanh import TanhInt16Data
from ._steps import _RANGE, _finish, _flat, _mbqm, _real, _short, _Work, _wrap16, _wrap32
from .registry import explains
from .result import _show

# ----------------------------------------------------------------------------------------------
# SOFTMAX and the table activations


def _lut16_steps(w: _Work, x: int, lut, name: str) -> int:
    """TFLite's int16 LUTLookup: entry 256 + (x >> 7) and its neighbour, interpolated on the low 7 bits."""
    x = int(x)
    i = w.step(f"{name}: table index", f"256 + ({x} >> 7)", 256 + (x >> 7))
    off = x & 0x7F
    base, nxt = int(lut[i]), int(lut[i + 1])
    w.step(f"{name}: entries", f"lut[{i}], lut[{i + 1}]", (base, nxt))
    slope = _wrap16(nxt - base)
    if slope != nxt - base:
        w.step(f"{name}: slope (an int16, wraps)", f"({nxt} − {base}) mod 2^16", slope)
    v = base + ((slope * off + 64) >> 7)
    return w.step(f"{name}: interpolate", f"{base} + ({slope}·{off} + 64) >> 7", _wrap16(v))


@explains(SoftmaxInt8Data)
def _explain_softmax8(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0)).astype(np.int64)
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    r = _flat(w.pos, x.shape) // n
    j = w.pos[-1]
    row = rows[r]
    mx = int(row.max())
    w.recipe = (f"{d.dtype} → {d.output_dtype} SOFTMAX: TFLite's float table "
                f"T[k] = expf(−in_scale·beta·(255 − k))"
                + ("; uint8 output: +0.5 and truncate, zero point ignored" if d.output_dtype == "uint8" else ""))
    w.step("row maximum", f"max of {n} values {_short(row)}", mx)
    xi = int(row[j])
    t = w.step("table entry", f"T[255 − {mx} + {xi}] = "
                              f"expf(−{_show(np.float32(d.input_scale))}·{d.beta:g}·{mx - xi})",
               d.table[255 - mx + xi])
    s = np.float32(0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):    # NaN / inf betas: IEEE, as C
        for v in row:
            s = np.float32(s + d.table[255 - mx + int(v)])
        s = w.step("sum (float32)", "Σ T[255 − max + x] over the row, left to right", s)
        inv = w.step("inverse", f"1 / ({_show(s)} · {_show(np.float32(d.output_scale))})",
                     np.float32(np.float32(1.0) / np.float32(s * np.float32(d.output_scale))))
        p = w.step("probability / out_scale", f"{_show(t)} · {_show(inv)}", np.float32(t * inv))
        e = np.exp(d.input_scale * d.beta * (row.astype(np.float64) - mx))
        real = float(e[j] / e.sum())
    lo, hi = _RANGE[d.output_dtype]
    finite = math.isfinite(p) and abs(float(p)) < 2 ** 31 - 2 ** 8       # plain int32 arithmetic below
    if d.output_dtype == "uint8":
        q = w.step("add 0.5 and truncate", f"(int)({_show(p)} + 0.5)"
                   + ("" if finite else ": NaN, ±inf and values beyond int32 become INT32_MIN on x86"),
                   int(quant.softmax_output_int32_x86(np.array([p]), 0, True)[0]))
        by_hand = w.step("clamp", f"clamp({q}, {lo}, {hi})", min(max(q, lo), hi))
    elif finite:
        q = w.step("round", f"round({_show(p)}), halves away from 0", int(quant.round_half_away(np.array([p]))[0]))
        by_hand = _finish(w, q, d.output_zero_point, lo, hi)
    else:                    # a NaN / inf beta: x86 makes the float INT32_MIN, the zero point wraps in int32
        q = w.step("round, to int32", f"(int32)round({_show(p)}): NaN, ±inf and values beyond int32 become "
                                      f"INT32_MIN on x86", int(quant.float_to_int32(np.array([p]))[0]))
        if d.output_zero_point:
            q = w.step("add output zero point (int32, wraps)", f"{q} + {d.output_zero_point}",
                       _wrap32(q + d.output_zero_point))
        by_hand = w.step("clamp", f"clamp({q}, {lo}, {hi})", min(max(q, lo), hi))
    return by_hand, real


@explains(SoftmaxInt16Data)
def _explain_softmax16(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0)).astype(np.int64)
    n = x.shape[-1]
    row = x.reshape(-1, n)[_flat(w.pos, x.shape) // n]
    j = w.pos[-1]
    w.recipe = "int16 SOFTMAX: exp and 1/(1+x) from 513-entry int16 tables with interpolation (reference kernel)"
    mx = w.step("row maximum", f"max of {n} values {_short(row)}", int(row.max()))
    diff = w.step("difference", f"{int(row[j])} − {mx}", int(row[j]) - mx)
    w.step("input multiplier", f"in_scale·beta / (10/65535) = {d.input_multiplier}·2^({d.input_left_shift}−31)",
           (d.input_multiplier, d.input_left_shift))
    if d.input_left_shift > 31:          # absurd scales: x86 takes the shift count modulo 32
        scaled = w.step("× input multiplier (shift beyond 31)", f"MBQM({diff}, {d.input_multiplier}, "
                        f"{d.input_left_shift}): x86 shifts by {d.input_left_shift} mod 32, int32 wraps",
                        int(quant.multiply_by_quantized_multiplier_x86_array(diff, d.input_multiplier,
                                                                             d.input_left_shift)))
    else:
        scaled = _mbqm(w, diff, d.input_multiplier, d.input_left_shift)
    idx = w.step("onto the exp table's input",
                 f"clamp({scaled} + 32767, −32768, 32767)  ([−10, 0] ↦ [−32767, 32767])",
                 min(max(_wrap32(scaled + 32767), -32768), 32767))
    e = _lut16_steps(w, idx, d.exp_lut, "exp")
    all_scaled = quant.multiply_by_quantized_multiplier_x86_array(row - mx, d.input_multiplier, d.input_left_shift)
    all_e = quant.lut_lookup_int16(np.clip(quant.wrap_bits(all_scaled + 32767, 32), -32768, 32767),
                                   d.exp_lut).astype(np.int64)
    total = w.step("sum of the exps", f"Σ over the {n} values of the row (int32)", int(all_e.sum()))
    h = w.step("leading zeros", f"CLZ32({total})", int(quant.count_leading_zeros32(total)))
    shifted = w.step("normalise to [1, 2) in Q0.15", f"(({total} << {h - 1}) + 2^13) >> 14",
                     ((total << (h - 1)) + (1 << 13)) >> 14)
    ri = w.step("onto the 1/(1+x) table's input", f"clamp({shifted} − 2^15 − 2^16, −32768, 32767)",
                min(max(shifted - (1 << 15) - (1 << 16), -32768), 32767))
    recip = _lut16_steps(w, ri, d.one_over_one_plus_x_lut, "1/(1+x)")
    right = 31 - h
    v = w.step("exp · reciprocal", f"({e} · {recip} + 2^{right - 1}) >> {right}",
               (e * recip + (1 << (right - 1))) >> right)
    by_hand = w.step("clamp", f"clamp({v}, 0, 32767)", min(max(v, 0), 32767))
    with np.errstate(over="ignore", invalid="ignore"):       # NaN / inf betas: the real value is NaN
        ex = np.exp(d.input_scale * d.beta * (row.astype(np.float64) - mx))
        return by_hand, float(ex[j] / ex.sum())


_FLOAT_FUNCTIONS = {
    "LOGISTIC": lambda v: 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0,
    "TANH": math.tanh,
    "EXP": lambda v: math.exp(v) if v < 700 else math.inf,
    "ELU": lambda v: v if v > 0 else math.expm1(v),
    "LOG": lambda v: math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan),
    "RSQRT": lambda v: 1.0 / math.sqrt(v) if v > 0 else (math.inf if v == 0 else math.nan),
    "SQRT": lambda v: math.sqrt(v) if v >= 0 else math.nan,
}


_LUT_TRANSFORMS = {"LOGISTIC": quant.logistic_f32, "TANH": quant.tanh_f32}


@explains(LutData)
@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def _explain_lut(w: _Work):
    d = w.d
    x = int(w.get(w.input_slot(0))[w.pos])
    op = w.n.op_name
    fn = _FLOAT_FUNCTIONS.get(op)
    real_in = _real(d.input_scale, x, d.input_zero_point)
    real = float(fn(real_in)) if fn is not None else math.nan
    if d.dtype == "int16":
        w.recipe = f"int16 {op}: a 513-entry table of {d.function} built in prepare, read with linear interpolation"
        return _lut16_steps(w, x, d.lut, d.function), real
    idx = w.step("table index", f"the byte of {x} read as uint8", x & 0xFF)
    entry = int(d.lut[idx])
    w.recipe = f"{d.dtype} {op}: a 256-entry table of {d.function} built in prepare (LUTPopulate)"
    transform = _LUT_TRANSFORMS.get(op)
    if transform is None:
        return w.step("table entry", f"lut[{idx}] = round({d.function}(in_scale·({x} − {d.input_zero_point})) / "
                                     f"out_scale) + {d.output_zero_point}", entry), real
    w.step("table entry (read)", f"lut[{idx}]", entry)
    deq = w.step("the entry, worked out: input", f"float32({_show(np.float32(d.input_scale))} · ({x} − "
                                                 f"({d.input_zero_point})))",
                 np.float32(np.float32(d.input_scale) * np.float32(x - d.input_zero_point)))
    y = w.step(f"{d.function}(·) in float32", f"{d.function}({_show(deq)})", np.float32(transform(np.array([deq]))[0]))
    t = w.step("÷ output scale", f"{_show(y)} · (1 / {_show(np.float32(d.output_scale))})",
               np.float32(y * (np.float32(1.0) / np.float32(d.output_scale))))
    rf = np.float32(quant.round_half_away(np.array([t], np.float32))[0])
    qf = np.float32(rf + np.float32(d.output_zero_point)) if np.isfinite(rf) else rf
    if np.isfinite(qf) and abs(float(qf)) < 2.0 ** 31:
        r = w.step("round", f"round({_show(t)}), halves away from 0", int(rf))
        lo, hi = _RANGE[d.dtype]
        return _finish(w, r, d.output_zero_point, lo, hi), real
    # absurd scales: the float is infinite, NaN or beyond int32 (see quant.lut_float_to_8bit)
    rf = w.step("round", f"round({_show(t)}), halves away from 0", rf)
    qf = w.step("add output zero point (float32)", f"{_show(rf)} + {d.output_zero_point}",
                np.float32(rf + np.float32(d.output_zero_point)))
    how = ("clamp to [−128, 127] as a float, NaN → 0" if d.dtype == "int8" else
           "(int32) gives INT32_MIN beyond int32 / for inf and NaN, then clamp to [0, 255]")
    return w.step("to the 8-bit type", how, int(quant.lut_float_to_8bit(np.array([qf]), d.dtype)[0])), real


_SIGMOID = quant.sigmoid_table_uint16()


@explains(LogisticInt16Data, TanhInt16Data)
def _explain_logistic_tanh16(w: _Work):
    d = w.d
    x = int(w.get(w.input_slot(0))[w.pos])
    tanh = w.n.op_name == "TANH"
    real = math.tanh(d.input_scale * x) if tanh else 0.5 + 0.5 * math.tanh(0.5 * d.input_scale * x)   # no overflow
    if not int16_uses_table(w.ctx.variant, d.input_multiplier):   # litert-x86: a power-of-two or absurd scale
        w.recipe = f"int16 {w.n.op_name}: gemmlowp fixed point (input Q3.12, output Q0.15)"
        if not d.power_of_two:
            w.step("absurd input scale", f"input multiplier {d.input_multiplier} is not > 0: TFLite runs the "
                   f"gemmlowp kernel and reads the input as Q3.12", d.input_multiplier)
        a = x
        if tanh and d.input_left_shift != 0:
            a = w.step("double (saturating)", f"{x} · 2, within int16 (input_left_shift {d.input_left_shift})",
                       int(quant.fp_sat_mul_pot(np.array([x]), 1, 16)[0]))
        w.step("read as Q3.12", f"{a} / 4096", a / 4096)
        if a == 0:
            return w.step("zero", "the function's value at 0", 0 if tanh else 16384), real
        neg = -abs(a)
        if tanh:
            e = w.step("exp(−2|a|) (Q0.15)", f"exp_on_negative_values({_wrap16(neg)} as Q4.11)",
                       int(quant.fp_exp_on_negative_values(np.array([_wrap16(neg)]), 4, 16)[0]))
            t = w.step("(1 − e) / (1 + e) (Newton-Raphson)", f"one_minus_x_over_one_plus_x({e})",
                       int(quant.fp_one_minus_x_over_one_plus_x(np.array([e]), 16)[0]))
            v = t if a > 0 else _wrap16(-t)
            return w.step("sign of x", f"{'+' if a > 0 else '−'}{t}", v), real
        e = w.step("exp(−|a|) (Q0.15)", f"exp_on_negative_values({_wrap16(neg)} as Q3.12)",
                   int(quant.fp_exp_on_negative_values(np.array([_wrap16(neg)]), 3, 16)[0]))
        p = w.step("1 / (1 + e) (Newton-Raphson)", f"one_over_one_plus_x({e})",
                   int(quant.fp_one_over_one_plus_x(np.array([e]), 16)[0]))
        if a > 0:
            return p, real
        return w.step("x < 0: 1 − that", f"32767 − {p}", _wrap16(32767 - p)), real
    w.recipe = f"int16 {w.n.op_name}: TFLite's sigmoid table (256 entries of sigmoid(i/24)) with interpolation"
    m, ls = d.input_multiplier, d.input_left_shift
    if m == 0:
        m, ls = 3 << ls, 0
    rnd = (1 << (ls - 1)) if ls > 0 else 0
    v = w.step("onto the 1/(3·4096) grid", f"({x} · {m} + {rnd}) >> {ls}, in int32", _wrap32(x * m + rnd) >> ls)
    frac = 8 if tanh else 9
    a = abs(v)
    uh, ut = a >> frac, a & ((1 << frac) - 1)
    w.step("table position", f"|{v}| = {uh}·2^{frac} + {ut}", (uh, ut))
    if uh >= 255:
        res = w.step("beyond the table", "saturated", (0xFFFF << 8) if tanh else (0x7FFF << 10))
    else:
        ua, ub = int(_SIGMOID[uh]), int(_SIGMOID[uh + 1])
        w.step("entries", f"sigmoid_table[{uh}], [{uh + 1}]", (ua, ub))
        res = w.step("interpolate", f"({ua} << {frac}) + {ut}·({ub} − {ua})", (ua << frac) + ut * (ub - ua))
    if tanh:
        res = w.step("2·sigmoid − 1, rounded", ("r − 2^23 + 2^7" if v >= 0 else "−r + 2^23 + 2^7 − 1"),
                     res - (1 << 23) + (1 << 7) if v >= 0 else -res + (1 << 23) + (1 << 7) - 1)
        return w.step("to Q0.15", f"{res} >> 8", _wrap16(res >> 8)), real
    res = w.step("sign", "r + 2^9" if v >= 0 else "2^25 − r + 2^9 − 1",
                 res + (1 << 9) if v >= 0 else (1 << 25) - res + (1 << 9) - 1)
    return w.step("to Q0.15", f"{res} >> 10", _wrap16(res >> 10)), real


@explains(LogSoftmaxQuantizedData)
def _explain_log_softmax(w: _Work):
    d = w.d
    x = w.get(w.input_slot(0)).astype(np.int64)
    n = x.shape[-1]
    row = x.reshape(-1, n)[_flat(w.pos, x.shape) // n]
    j = w.pos[-1]
    w.recipe = f"{d.dtype} LOG_SOFTMAX: TFLite's float table T[k] = expf(−in_scale·(255 − k)), float32 arithmetic"
    mx = w.step("row maximum", f"max of {n} values {_short(row)}", int(row.max()))
    total = np.float32(0)
    for v in row:
        total = np.float32(total + d.table[255 - mx + int(v)])
    total = w.step("sum (float32)", "Σ T[255 − max + x] over the row, left to right", total)
    log_sum = w.step("logf", f"logf({_show(total)})", np.float32(quant.libm_apply("logf", np.array([total]))[0]))
    in_s, out_s = np.float32(d.input_scale), np.float32(d.output_scale)
    xi = int(row[j])
    with np.errstate(over="ignore", invalid="ignore"):       # absurd scales: ±inf and NaN, as in C
        scale = np.float32(in_s / out_s)
        pre = w.step("precomputed", f"({_show(in_s)}·{mx} + {_show(log_sum)}) / {_show(out_s)}",
                     np.float32(np.float32(np.float32(in_s * np.float32(mx)) + log_sum) / out_s))
        lp = w.step("scaled log-probability", f"{_show(scale)}·{xi} − {_show(pre)}",
                    np.float32(np.float32(scale * np.float32(xi)) - pre))
        v = row.astype(np.float64) * d.input_scale
        real = float(v[j] - v.max() - np.log(np.exp(v - v.max()).sum()))
    lo, hi = _RANGE[d.dtype]
    if math.isfinite(lp) and abs(float(np.rint(lp)) + d.output_zero_point) < 2 ** 31:
        r = w.step("round half to even", f"rint({_show(lp)})", int(np.rint(lp)))
        return _finish(w, r, d.output_zero_point, lo, hi), real
    # absurd scales: rint(lp) + zero point is NaN, infinite or beyond int32 — x86's conversion
    r = w.step("round half to even, add output zero point, to int32",
               f"(int32)(rint({_show(lp)}) + {d.output_zero_point}): NaN, ±inf and values beyond int32 "
               f"become INT32_MIN on x86",
               int(quant.log_softmax_output_int32_x86(np.array([lp]), d.output_zero_point)[0]))
    return w.step("clamp", f"clamp({r}, {lo}, {hi})", min(max(r, lo), hi)), real


# ----------------------------------------------------------------------------------------------
# SOFTMAX / LOG_SOFTMAX on 8-bit inputs, the reference kernels (gemmlowp fixed point)


def _fixed_point_row(w: _Work):
    """The element's row (int64), its column, and the steps every fixed-point softmax shares: the row
    maximum, the difference, its Q5.26 rescale and exp in Q0.31, the Q12.19 sum of the row's exps.
    Returns (row, j, diff, kept, rescaled, exp, sum)."""
    d = w.d
    x = w.get(w.input_slot(0)).astype(np.int64)
    n = x.shape[-1]
    row = x.reshape(-1, n)[_flat(w.pos, x.shape) // n]
    j = w.pos[-1]
    mx = w.step("row maximum", f"max of {n} values {_short(row)}", int(row.max()))
    diff = w.step("difference", f"{int(row[j])} − {mx}", int(row[j]) - mx)
    w.step("input multiplier", f"in_scale·beta·2^26 → {d.input_multiplier}·2^({d.input_left_shift}−31) "
                               f"(PreprocessSoftmaxScaling); diff_min = {d.diff_min}",
           (d.input_multiplier, d.input_left_shift, d.diff_min))
    kept = diff >= d.diff_min
    if not kept:
        w.step("below diff_min", f"{diff} < {d.diff_min}: exp counts as 0", 0)
        rescaled = exp = None
    else:
        shifted = int(_shl(np.array([diff]), d.input_left_shift)[0])
        w.step("left shift (int32)", f"{diff} · 2^{d.input_left_shift}", shifted)
        rescaled = w.step("× input multiplier → Q5.26", f"SRDHM({shifted}, {d.input_multiplier})",
                          int(quant.fp_srdhm(shifted, d.input_multiplier, 32)))
        exp = w.step("exp in Q0.31", f"exp_on_negative_values({rescaled} as Q5.26) = "
                                     f"{_show(np.float64(rescaled) / 2 ** 26)} → exp ≈ "
                                     f"{math.exp(rescaled / 2 ** 26):.6g}",
                     int(quant.fp_exp_on_negative_values(np.array([rescaled]), SCALED_DIFF_BITS, 32)[0]))
    _, keep_all, _, exps = scaled_exps(row[None, :], d.input_multiplier, d.input_left_shift, d.diff_min)
    total = w.step("sum of the exps (Q12.19)", f"Σ RoundingDivideByPOT(exp, {ACCUMULATION_BITS}) over the "
                                               f"{int(keep_all.sum())} kept values of the row",
                   int(sum_of_exps(keep_all, exps)[0, 0]))
    return row, j, diff, kept, rescaled, exp, total


@explains(SoftmaxFixedPointData)
def _explain_softmax_fixed_point(w: _Work):
    d = w.d
    lo, hi = _RANGE[d.output_dtype]
    bits = 8 * np.dtype(d.output_dtype).itemsize
    w.recipe = (f"{d.dtype} → {d.output_dtype} SOFTMAX (reference kernel): gemmlowp fixed point, the output in "
                f"steps of 2^−{bits} from {lo}")
    row, j, diff, kept, _, exp, total = _fixed_point_row(w)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(np.float64(d.input_scale) * d.beta * (row.astype(np.float64) - row.max()))
        real = float(e[j] / e.sum())
    if not kept:
        return w.step("output", "a dropped difference gives the type's minimum", lo), real
    recip, over = quant.get_reciprocal(np.array([total]), ACCUMULATION_BITS)
    recip, over = int(recip[0]), int(over[0])
    w.step("reciprocal of the sum", f"GetReciprocal({total}) = {recip}·2^(−31−{over}) (Q0.31, bits over unit)",
           (recip, over))
    p = w.step("exp × reciprocal", f"SRDHM({recip}, {exp})", int(quant.fp_srdhm(recip, exp, 32)))
    shift = over + 31 - bits
    v = w.step(f"to steps of 2^−{bits}", f"RoundingDivideByPOT({p}, {over} + 31 − {bits})",
               int(quant.rounding_divide_by_pot_array(np.array([p]), shift)[0]))
    v = w.step("add the type's minimum", f"{v} + ({lo})  (the output zero point is not read)", v + lo)
    return w.step("clamp", f"clamp({v}, {lo}, {hi})", min(max(v, lo), hi)), real


@explains(LogSoftmaxFixedPointData)
def _explain_log_softmax_fixed_point(w: _Work):
    d = w.d
    lo, hi = _RANGE[d.dtype]
    w.recipe = (f"{d.dtype} LOG_SOFTMAX (reference kernel): gemmlowp fixed point, log of the Q12.19 sum as "
                f"Q5.26, output in steps of 1/16")
    row, j, diff, kept, rescaled, _, total = _fixed_point_row(w)
    rf = np.float64(d.input_scale) * (row.astype(np.float64) - row.max())
    real = float(rf[j] - math.log(np.exp(rf).sum()))
    log_sum = w.step("log of the sum (Q5.26)", f"log_x_for_x_greater_than_or_equal_to_1({total} as Q12.19) ≈ "
                                               f"{math.log(total / 2 ** 19):.6g}",
                     int(log_x_ge_1(np.array([total]))[0]))
    back = w.step("cut-off in input units", f"MBQM({log_sum} − 2^31, {d.reverse_scaling_divisor}, "
                                            f"−{d.reverse_scaling_right_shift})",
                  int(quant.multiply_by_quantized_multiplier_array(np.array([log_sum + _SM_INT32_MIN]),
                                                                   d.reverse_scaling_divisor,
                                                                   -d.reverse_scaling_right_shift)[0]))
    limit = max(d.diff_min - 1, back)
    if not diff > limit:
        return w.step("below the cut-off", f"{diff} ≤ max({d.diff_min} − 1, {back}): the type's minimum", lo), real
    if rescaled is None:      # kept by the cut-off but not by diff_min cannot happen (limit ≥ diff_min − 1)
        rescaled = int(quant.fp_srdhm(_shl(np.array([diff]), d.input_left_shift), d.input_multiplier, 32)[0])
    t = w.step("difference − log sum (Q5.26)", f"{rescaled} − {log_sum}", rescaled - log_sum)
    v = w.step("to steps of 1/16", f"RoundingDivideByPOT({t}, 31 − 5 − 4)",
               int(quant.rounding_divide_by_pot_array(np.array([t]), 31 - 5 - 4)[0]))
    return _finish(w, v, d.output_zero_point, lo, hi), real
