"""Element-wise arithmetic: ADD / SUB / MUL (reference and litert's NEON loops), the RELU family,
LEAKY_RELU, HARD_SWISH, ABS, NEG, PRELU, DIV, SQRT, RSQRT and SQUARED_DIFFERENCE."""

from __future__ import annotations

import math

import numpy as np

from .. import quant
from ..kernels._binary import BinaryInt8Data, BinaryQuantizedData
from ..kernels._unary import ReluData, UnaryData
from ..kernels.abs import AbsData
from ..kernels.div import DivQuantizedData
from ..kernels.hard_swish import HardSwishData
from ..kernels.leaky_relu import LeakyReluQuantizedData
from ..kernels.prelu import PreluQuantizedData
from ..kernels.rsqrt import RsqrtInt8Data
from ..kernels.sqrt import SqrtQuantizedData
from ..kernels.squared_difference import SquaredDifferenceInt8Data
from ._steps import _RANGE, _activation_note, _cvt_int32, _finish, _mbqm, _operand, _real, _Work, _wrap16, _wrap32
from .registry import explains
from .result import _show

# ----------------------------------------------------------------------------------------------
# ADD / SUB / MUL


@explains(BinaryInt8Data, BinaryQuantizedData, fused_activation=True)
def _explain_binary(w: _Work):
    d = w.d
    kind = {"ADD": "add", "SUB": "sub", "MUL": "mul"}.get(w.n.op_name)
    if kind is None:
        raise NotImplementedError(f"explain() knows quantized ADD, SUB and MUL; node {w.n.index} is {w.n.op_name}")
    a, ia = _operand(w, 0)
    b, ib = _operand(w, 1)
    w.step("inputs", f"x{list(ia)}, y{list(ib)}", (a, b))
    sign = -1 if kind == "sub" else 1
    lo, hi = d.output_activation_min, d.output_activation_max
    act = _activation_note(d)
    if d.path == "plain int16":
        w.recipe = "int16 without quantization: plain integers"
        v = a * b if kind == "mul" else a + b
        w.step("integer result", f"{a} {'·' if kind == 'mul' else '+'} {b}", v)
        if _wrap16(v) != v:
            v = w.step("int16 wrap-around", f"{v} mod 2^16", _wrap16(v))
        return w.step(act, f"clamp({v}, {lo}, {hi})", min(max(v, lo), hi)), float(a * b if kind == "mul" else a + b)
    (s1, z1), (s2, z2) = w.sz(w.input_slot(0)), w.sz(w.input_slot(1))
    ra, rb = _real(s1, a, z1), _real(s2, b, z2)
    real = ra * rb if kind == "mul" else ra + sign * rb
    if d.path == "pot_int16":
        w.recipe = "int16 with power-of-two scales (pot_scale_int16): shifts only"
        x = w.step("input 1 to the output scale", f"round({a} / 2^{-d.input1_shift})",
                   quant.rounding_divide_by_pot(a, -d.input1_shift))
        y = w.step("input 2 to the output scale", f"round({b} / 2^{-d.input2_shift})",
                   quant.rounding_divide_by_pot(b, -d.input2_shift))
        v = w.step("saturating " + ("sum" if sign > 0 else "difference"), f"{x} {'+' if sign > 0 else '−'} {y}, "
                   f"within int16", min(max(x + sign * y, -32768), 32767))
        return w.step(act, f"clamp({v}, {lo}, {hi})", min(max(v, lo), hi)), real
    if d.path == "int16→8bit":
        w.recipe = "int16 × int16 → 8 bit: Q0.15 product, rounding shift by 8"
        p = w.step("Q0.15 product (16-bit SRDHM)", f"round({a} · {b} / 2^15)", int(quant.fp_srdhm(a, b, 16)))
        r = w.step("rounding shift", f"round({p} / 2^8), halves away from 0", quant.rounding_divide_by_pot(p, 8))
        off = d.output_offset
        r = w.step("clamp", f"clamp({r}, {lo} − {off}, {hi} − {off})", min(max(r, lo - off), hi - off))
        return w.step("add output zero point", f"{r} + {off}", r + off), real
    vector = d.vector_mask is not None and bool(np.asarray(d.vector_mask)[w.pos])
    if vector and kind != "sub" and d.dtype != "int16":
        return _binary_vector(w, kind, a, b), real
    w.recipe = f"{d.dtype} {w.n.op_name}: TFLite's reference arithmetic"
    if kind == "mul":
        xo, yo = a + d.input1_offset, b + d.input2_offset
        w.step("offsets", f"({a} + {d.input1_offset}), ({b} + {d.input2_offset})", (xo, yo))
        p = w.step("product", f"{xo} · {yo}", xo * yo)
        if _wrap32(p) != p:
            p = w.step("int32 wrap-around", f"{p} mod 2^32", _wrap32(p))
        w.step("multiplier", f"{d.real_output_multiplier:.9g} = {d.output_multiplier}·2^({d.output_shift}−31)",
               (d.output_multiplier, d.output_shift))
        v = _mbqm(w, p, d.output_multiplier, d.output_shift)
        return _finish(w, v, d.output_offset, lo, hi, act), real
    xo, yo = a + d.input1_offset, b + d.input2_offset
    w.step("offsets", f"({a} + {d.input1_offset}), ({b} + {d.input2_offset})", (xo, yo))
    ls = d.left_shift
    if vector and kind == "add":          # int16: litert's vector loop folds each input's shift into the left shift
        w.recipe = "int16 ADD: litert's vector loop (one rounding per input rescale)"
        srdhm = quant.saturating_rounding_doubling_high_mul
        e1, e2 = ls + d.input1_shift, ls + d.input2_shift
        sx = srdhm(_wrap32(xo << e1 if e1 >= 0 else xo >> -e1), d.input1_multiplier)
        w.step("rescale input 1", f"SRDHM({xo}·2^({ls} + {d.input1_shift}), {d.input1_multiplier})", sx)
        sy = srdhm(_wrap32(yo << e2 if e2 >= 0 else yo >> -e2), d.input2_multiplier)
        w.step("rescale input 2", f"SRDHM({yo}·2^({ls} + {d.input2_shift}), {d.input2_multiplier})", sy)
    else:
        sx = quant.multiply_by_quantized_multiplier(xo << ls, d.input1_multiplier, d.input1_shift)
        w.step("rescale input 1", f"MBQM({xo}·2^{ls}, {d.input1_multiplier}, {d.input1_shift})", sx)
        sy = quant.multiply_by_quantized_multiplier(yo << ls, d.input2_multiplier, d.input2_shift)
        w.step("rescale input 2", f"MBQM({yo}·2^{ls}, {d.input2_multiplier}, {d.input2_shift})", sy)
    raw = w.step("sum" if sign > 0 else "difference", f"{sx} {'+' if sign > 0 else '−'} {sy}", sx + sign * sy)
    if _wrap32(raw) != raw:
        raw = w.step("int32 wrap-around", f"{raw} mod 2^32", _wrap32(raw))
    w.step("output multiplier", f"{d.real_output_multiplier:.9g} = {d.output_multiplier}·2^({d.output_shift}−31)",
           (d.output_multiplier, d.output_shift))
    high = w.step("high multiply (SRDHM)", f"round({raw} · {d.output_multiplier} / 2^31)",
                  quant.saturating_rounding_doubling_high_mul(raw, d.output_multiplier))
    e = -d.output_shift
    if e >= 0:
        v = w.step("rounding shift (ties away)", f"round({high} / 2^{e}), halves away from 0",
                   quant.rounding_divide_by_pot(high, e))
    elif vector:  # SUB with a multiplier > 1, in the compiler's 4-lane vectorisation: the whole count
        v = w.step("rounding shift by a negative count (vectorised)", f"RoundingDivideByPOT({high}, {e}): undefined "
                   f"in C; litert's vectorised loop leaves the sign", 1 if high >= 0 else -1)
    else:       # MultiplyByQuantizedMultiplierSmallerThanOneExp with a multiplier > 1 (SUB accepts it)
        v = w.step("rounding shift by a negative count", f"RoundingDivideByPOT({high}, {e}): undefined in C; x86 "
                   f"takes the shift count mod 32 and cuts the mask to 32 bits",
                   int(quant.rounding_divide_by_pot_x86(np.array([high]), e)[0]))
    return _finish(w, v, d.output_offset, lo, hi, act), real


def _binary_vector(w: _Work, kind: str, a: int, b: int) -> int:
    """litert's NEON 8-bit ADD / MUL loops (compiled for x86 through NEON_2_SSE), see kernels/_binary.py."""
    d = w.d
    srdhm = quant.saturating_rounding_doubling_high_mul
    scalar = d.vector_scalar_broadcast
    w.recipe = f"{d.dtype} {w.n.op_name}: litert's NEON {'scalar-broadcast' if scalar else 'vector'} loop"
    xo, yo = a + d.input1_offset, b + d.input2_offset
    w.step("offsets", f"({a} + {d.input1_offset}), ({b} + {d.input2_offset})", (xo, yo))
    if kind == "mul":
        p = w.step("product", f"{xo} · {yo}", xo * yo)
        r = quant.multiply_by_quantized_multiplier(_wrap32(p), d.output_multiplier, d.output_shift)
        w.step("requantize", f"MBQM({_wrap32(p)}, {d.output_multiplier}, {d.output_shift})", r)
        if not (d.dtype == "uint8" and scalar):
            r16 = w.step("narrow to int16 (saturating)", f"clamp({r}, −32768, 32767)", min(max(r, -32768), 32767))
        else:
            r16 = w.step("narrow to int16 (truncating)", f"{r} mod 2^16", _wrap16(r))
    else:
        ls = d.left_shift
        if scalar or d.dtype == "uint8":
            sx = srdhm(_wrap32(xo << ls), d.input1_multiplier) >> -d.input1_shift
            sy = srdhm(_wrap32(yo << ls), d.input2_multiplier) >> -d.input2_shift
            how = "SRDHM(v·2^{ls}, m) >> s (a truncating shift)".format(ls=ls)
        else:
            e1, e2 = ls + d.input1_shift, ls + d.input2_shift
            sx = srdhm(_wrap32(xo << e1 if e1 >= 0 else xo >> -e1), d.input1_multiplier)
            sy = srdhm(_wrap32(yo << e2 if e2 >= 0 else yo >> -e2), d.input2_multiplier)
            how = "SRDHM(v·2^(left + shift), m) (the shift folded into the left shift)"
        w.step("rescale inputs", how, (sx, sy))
        s = w.step("sum", f"{sx} + {sy}", _wrap32(sx + sy))
        r = quant.rounding_divide_by_pot(srdhm(s, d.output_multiplier), -d.output_shift)
        w.step("requantize", f"MBQM({s}, {d.output_multiplier}, {d.output_shift})", r)
        r16 = w.step("narrow to int16 (truncating)", f"{r} mod 2^16", _wrap16(r))
    v = w.step("add output zero point (int16)", f"{r16} + {d.output_offset} mod 2^16", _wrap16(r16 + d.output_offset))
    tlo, thi = (0, 255) if d.output_dtype == "uint8" else (-128, 127)
    v = w.step("saturate to " + d.output_dtype, f"clamp({v}, {tlo}, {thi})", min(max(v, tlo), thi))
    lo, hi = d.output_activation_min, d.output_activation_max
    return w.step(_activation_note(d), f"clamp({v}, {lo}, {hi})", min(max(v, lo), hi))


# ----------------------------------------------------------------------------------------------
# RELU family, LEAKY_RELU, HARD_SWISH


@explains(ReluData)
def _explain_relu(w: _Work):
    d = w.d
    x = int(w.get(w.input_slot(0))[w.pos])
    w.recipe = f"{d.dtype} {w.n.op_name}: rescale to the output, the activation is the clamp"
    s, zp = w.sz(w.input_slot(0))
    real_in = _real(s, x, zp)
    lo_r, hi_r = {"RELU": (0.0, math.inf), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0),
                  "RELU_0_TO_1": (0.0, 1.0)}.get(w.n.op_name, (-math.inf, math.inf))
    t = w.step("remove input zero point", f"{x} − ({d.input_zero_point})", x - d.input_zero_point)
    w.step("multiplier", f"{d.effective_scale:.9g} = in_scale / out_scale = {d.output_multiplier}·2^"
                         f"({d.output_shift}−31)", (d.output_multiplier, d.output_shift))
    v = _mbqm(w, t, d.output_multiplier, d.output_shift)
    by_hand = _finish(w, v, d.output_zero_point, d.output_activation_min, d.output_activation_max,
                      f"clamp ({w.n.op_name})")
    return by_hand, min(max(real_in, lo_r), hi_r)


@explains(LeakyReluQuantizedData)
def _explain_leaky_relu(w: _Work):
    d = w.d
    x = int(w.get(w.input_slot(0))[w.pos])
    s, zp = w.sz(w.input_slot(0))
    real_in = _real(s, x, zp)
    w.recipe = f"{d.dtype} LEAKY_RELU: one multiplier for x ≥ 0 (identity), one for x < 0 (alpha)"
    v = w.step("remove input zero point", f"{x} − ({d.input_zero_point})", x - d.input_zero_point)
    if v >= 0:
        w.step("identity multiplier", f"in_scale / out_scale = {d.output_multiplier_identity}·2^"
                                      f"({d.output_shift_identity}−31)",
               (d.output_multiplier_identity, d.output_shift_identity))
        r = _mbqm(w, v, d.output_multiplier_identity, _x86_shift(w, d.output_shift_identity))
    else:
        ma = abs(d.output_multiplier_alpha)
        sign = "−" if d.output_multiplier_alpha < 0 else ""
        w.step("alpha multiplier", f"in_scale · {d.alpha:g} / out_scale = {sign}{ma}·2^({d.output_shift_alpha}−31)",
               (d.output_multiplier_alpha, d.output_shift_alpha))
        r = _mbqm(w, v, ma, _x86_shift(w, d.output_shift_alpha))
        if d.output_multiplier_alpha < 0:
            r = w.step("negative alpha: the sign", f"−{r}", -r)
    lo, hi = _RANGE[d.dtype]
    if _wrap32(r + d.output_zero_point) != r + d.output_zero_point:
        r = w.step("add output zero point (int32, wraps)", f"{r} + {d.output_zero_point}",
                   _wrap32(r + d.output_zero_point))
        return w.step("clamp", f"clamp({r}, {lo}, {hi})", min(max(r, lo), hi)), (real_in if real_in > 0 else
                                                                                    d.alpha * real_in)
    return _finish(w, r, d.output_zero_point, lo, hi), (real_in if real_in > 0 else d.alpha * real_in)


def _x86_shift(w: _Work, shift: int) -> int:
    """A left shift of 32 or more (absurd scales) as x86 runs it: the count modulo 32."""
    if shift > 31:
        return w.step("shift count (x86)", f"{shift} mod 32 (an int32 shifted by 32 or more: x86 takes the "
                                           f"count modulo 32)", shift & 31)
    return shift


@explains(HardSwishData)
def _explain_hard_swish(w: _Work):
    d = w.d
    x = int(w.get(w.input_slot(0))[w.pos])
    s, zp = w.sz(w.input_slot(0))
    r_in = _real(s, x, zp)
    w.recipe = f"{d.dtype} HARD_SWISH: TFLite's 16-bit fixed-point kernel (reference rounding)"

    def srdhm16(a, b):
        return int(quant.fp_srdhm(a, b, 16))

    v = w.step("remove input zero point", f"{x} − ({d.input_zero_point})", x - d.input_zero_point)
    hires = w.step("hi-res input", f"{v} · 2^7", v * 128)
    pre = w.step("× output multiplier (int16)", f"SRDHM16({hires}, {d.output_multiplier_fixedpoint_int16})",
                 srdhm16(hires, d.output_multiplier_fixedpoint_int16))
    e = d.reluish_multiplier_exponent
    rel = hires
    if e > 0:
        from ..kernels.hard_swish import _saturating_left_shift16
        how = f"sat16({hires} · 2^{e - 1})" if e - 1 < 31 else (
            f"sat16({hires} · (1 << {e - 1})), an int32 shift: INT32_MIN for 31, 0 from 32 on (x86)")
        rel = w.step("reluish: pre-shift", how, int(_saturating_left_shift16(hires, e - 1)))
    rel = w.step("reluish: × multiplier", f"SRDHM16({rel}, {d.reluish_multiplier_fixedpoint_int16})",
                 srdhm16(rel, d.reluish_multiplier_fixedpoint_int16))
    if e > 0:
        rel = w.step("reluish: × 2", f"sat16({rel} · 2)", min(max(rel * 2, -32768), 32767))
    if e < 0:
        rel = w.step("reluish: rounding shift", _int16_shift_note(rel, -e),
                     int(quant.rounding_divide_by_pot_int16(rel, -e)))
    rel = w.step("reluish ∈ [0, 1] (Q0.15)", f"({rel} + 2^15) >> 1", (rel + (1 << 15)) >> 1)
    p = rel * pre
    t = w.step("product", f"{rel} · {pre} / 2^15 (C division toward 0)", p >> 15 if p >= 0 else -((-p) >> 15))
    oe = -d.output_multiplier_exponent
    if oe > 0:
        t = w.step("output shift", _int16_shift_note(t, oe), int(quant.rounding_divide_by_pot_int16(t, oe)))
    lo, hi = _RANGE[d.dtype]
    real = r_in * min(6.0, max(0.0, r_in + 3.0)) / 6.0
    if _wrap16(t + d.output_zero_point) != t + d.output_zero_point:
        t = w.step("add output zero point (int16, wraps)", f"{t} + {d.output_zero_point}",
                   _wrap16(t + d.output_zero_point))
        return w.step("clamp", f"clamp({t}, {lo}, {hi})", min(max(t, lo), hi)), real
    return _finish(w, t, d.output_zero_point, lo, hi), real


def _int16_shift_note(v: int, e: int) -> str:
    if e < 16:
        return f"round({v} / 2^{e}), halves away from 0"
    return f"RoundingDivideByPOT on int16 by {e} ≥ 16: the mask is all ones, the result ±1 (x86)"


# ----------------------------------------------------------------------------------------------
# the other element-wise ops: ABS, NEG, PRELU, DIV, SQRT, RSQRT, SQUARED_DIFFERENCE


@explains(AbsData)
def _explain_abs(w: _Work):
    d = w.d
    x = int(w.get(w.input_slot(0))[w.pos])
    lo, hi = _RANGE[d.dtype]
    if not d.quantized:
        w.recipe = "int16 without quantization: |x| on plain integers (wraps like C)"
        return w.step("absolute value", f"|{x}| mod 2^16", _wrap16(abs(x))), float(abs(x))
    s, zp = w.sz(w.input_slot(0))
    w.recipe = f"{d.dtype} ABS" + (": rescaled to the output" if d.needs_rescale else ": equal scales, no rescaling")
    v = w.step("|x − zero point|", f"|{x} − ({d.input_zero_point})|", abs(x - d.input_zero_point))
    if d.needs_rescale:
        w.step("multiplier", f"in_scale / out_scale = {d.output_multiplier}·2^({d.output_shift}−31)",
               (d.output_multiplier, d.output_shift))
        v = _mbqm(w, v, d.output_multiplier, d.output_shift)
    return _finish(w, v, d.output_zero_point, lo, hi), abs(_real(s, x, zp))


@explains(UnaryData, ops=("NEG",))
def _explain_neg(w: _Work):
    x = int(w.get(w.input_slot(0))[w.pos])
    dt = w.out.dtype
    bits = 8 * dt.itemsize
    w.recipe = f"{dt} NEG: −x on the stored integers; the quantization parameters play no part"
    v = -x
    wrapped = (v + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
    v = w.step("negate", f"−({x})" + (f" wraps to {wrapped}" if wrapped != v else ""), wrapped)
    s, zp = w.sz(w.input_slot(0))
    return v, -_real(s, x, zp)


@explains(PreluQuantizedData)
def _explain_prelu(w: _Work):
    d = w.d
    x, ix = _operand(w, 0)
    a, ia = _operand(w, 1)
    w.step("inputs", f"x{list(ix)}, alpha{list(ia)}", (x, a))
    (s1, z1), (s2, z2) = w.sz(w.input_slot(0)), w.sz(w.input_slot(1))
    rx, ra = _real(s1, x, z1), _real(s2, a, z2)
    v = w.step("x − zero point", f"{x} + {d.input_offset}", x + d.input_offset)
    w.recipe = f"{d.dtype} PRELU: multiplier 1 for x ≥ 0, multiplier 2 (with alpha) for x < 0"
    if v >= 0:
        w.step("multiplier 1", f"in_scale / out_scale = {d.output_multiplier_1}·2^({d.output_shift_1}−31)",
               (d.output_multiplier_1, d.output_shift_1))
        r = _mbqm(w, v, d.output_multiplier_1, d.output_shift_1)
    else:
        al = w.step("alpha − zero point", f"{a} + {d.alpha_offset}", a + d.alpha_offset)
        p = w.step("x · alpha (int32)", f"{v} · {al}", _wrap32(v * al))
        w.step("multiplier 2", f"in_scale · alpha_scale / out_scale = {d.output_multiplier_2}·2^"
                               f"({d.output_shift_2}−31)", (d.output_multiplier_2, d.output_shift_2))
        r = _mbqm(w, p, d.output_multiplier_2, d.output_shift_2)
    lo, hi = _RANGE[d.dtype]
    return _finish(w, r, d.output_offset, lo, hi), (rx if rx >= 0 else rx * ra)


@explains(DivQuantizedData, fused_activation=True)
def _explain_div(w: _Work):
    d = w.d
    a, ia = _operand(w, 0)
    b, ib = _operand(w, 1)
    w.step("inputs", f"x{list(ia)}, y{list(ib)}", (a, b))
    (s1, z1), (s2, z2) = w.sz(w.input_slot(0)), w.sz(w.input_slot(1))
    real = _real(s1, a, z1) / _real(s2, b, z2) if b != z2 else math.nan
    w.recipe = f"{d.dtype} DIV: fixed-point reciprocal (GetReciprocal), the quotient, one requantization"
    x = w.step("offsets", f"{a} + {d.input1_offset}", a + d.input1_offset)
    y = w.step("divisor", f"{b} + {d.input2_offset}", b + d.input2_offset)
    if y < 0:
        x, y = w.step("make the divisor positive", f"−{x}, −{y}", (-x, -y))
    y = y if y != 0 else 1
    inv, rshift = quant.get_reciprocal(np.array([y]), 31)
    inv, rshift = int(inv[0]), int(rshift[0])
    w.step("1 / divisor (Q0.31)", f"GetReciprocal({y}) = {inv} · 2^-{rshift}", (inv, rshift))
    head = w.step("headroom", f"CountLeadingSignBits({x})", int(quant.count_leading_sign_bits32(np.array([x]))[0]))
    xs = _wrap32(x << head)
    q = w.step("unscaled quotient", f"SRDHM({x}·2^{head}, {inv})",
               quant.saturating_rounding_doubling_high_mul(xs, inv))
    total = d.output_shift - rshift - head
    hm = w.step("× output multiplier", f"SRDHM({q}, {d.output_multiplier})",
                quant.saturating_rounding_doubling_high_mul(q, d.output_multiplier))
    e = -total
    note = "" if 0 <= e <= 31 else "  (a shift beyond 31: x86 takes it mod 32 with a 32-bit mask)"
    v = w.step("rounding shift", f"RoundingDivideByPOT({hm}, {e}){note}",
               int(quant.rounding_divide_by_pot_x86(np.array([hm]), e)[0]))
    return _finish(w, v, d.output_offset, d.output_activation_min, d.output_activation_max, _activation_note(d)), real


@explains(SqrtQuantizedData)
@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def _explain_sqrt(w: _Work):
    d = w.d
    x = int(w.get(w.input_slot(0))[w.pos])
    w.recipe = f"{d.dtype} SQRT: float32 sqrtf, then a TRUNCATING conversion (no rounding)"
    v = w.step("x − zero point", f"max({x} − ({d.input_zero_point}), 0)", max(x - d.input_zero_point, 0))
    deq = w.step("dequantize (float32)", f"{_show(np.float32(d.input_scale))} · {v}",
                 np.float32(np.float32(d.input_scale) * np.float32(v)))
    r = w.step("sqrtf", f"sqrtf({_show(deq)})", np.float32(quant.libm_apply("sqrtf", np.array([deq], np.float32))[0]))
    t = w.step("÷ output scale, truncate", f"(int32)({_show(r)} / {_show(np.float32(d.output_scale))})",
               _cvt_int32(np.float32(r / np.float32(d.output_scale))))
    lo, hi = _RANGE[d.dtype]
    real = math.sqrt(max(_real(d.input_scale, x, d.input_zero_point), 0))
    if d.output_zero_point and _wrap32(t + d.output_zero_point) != t + d.output_zero_point:
        # absurd scales: INT32_MIN (an infinite / too large quotient) plus the zero point wraps in int32
        t = w.step("add output zero point (int32, wraps)", f"{t} + {d.output_zero_point}",
                   _wrap32(t + d.output_zero_point))
        return w.step("clamp", f"clamp({t}, {lo}, {hi})", min(max(t, lo), hi)), real
    return _finish(w, t, d.output_zero_point, lo, hi), real


@explains(RsqrtInt8Data)
def _explain_rsqrt8(w: _Work):
    d = w.d
    x = int(w.get(w.input_slot(0))[w.pos])
    s, zp = w.sz(w.input_slot(0))
    rin = _real(s, x, zp)
    real = 1 / math.sqrt(rin) if rin > 0 else math.inf
    w.recipe = "int8 RSQRT: fixed-point 1/sqrt (Newton-Raphson), then one requantization"
    v = w.step("x − zero point", f"{x} − ({d.input_zero_point})", x - d.input_zero_point)
    if v == 0:
        return w.step("zero input", "TFLite writes 127", 127), real
    m, sh = quant.inv_sqrt_quantized_multiplier_exp(max(v, 0), -1)
    w.step("1/sqrt as multiplier", f"GetInvSqrtQuantizedMultiplierExp({v}) = {m}·2^({sh}−31)", (m, sh))
    data = w.step("1/sqrt with 20 fraction bits", f"MBQM(1, {m}, {sh} + 20)",
                  quant.multiply_by_quantized_multiplier(1, m, sh + 20))
    w.step("output multiplier", f"1 / (sqrt(in_scale) · out_scale) = {d.output_multiplier}·2^({d.output_shift}−31)",
           (d.output_multiplier, d.output_shift))
    sh = d.output_shift - 20
    note = "" if -31 <= sh <= 31 else " — a shift beyond ±31 (absurd scales): x86 counts it modulo 32"
    r = w.step("requantize", f"MBQM({data}, {d.output_multiplier}, {d.output_shift} − 20){note}",
               int(quant.multiply_by_quantized_multiplier_x86_array(data, d.output_multiplier, sh)))
    if _wrap32(r + d.output_zero_point) != r + d.output_zero_point:
        r = w.step("add output zero point (int32, wraps)", f"{r} + {d.output_zero_point}",
                   _wrap32(r + d.output_zero_point))
        return w.step("clamp", f"clamp({r}, -128, 127)", min(max(r, -128), 127)), real
    return _finish(w, r, d.output_zero_point, -128, 127), real


@explains(SquaredDifferenceInt8Data)
def _explain_squared_difference(w: _Work):
    d = w.d
    a, ia = _operand(w, 0)
    b, ib = _operand(w, 1)
    w.step("inputs", f"x{list(ia)}, y{list(ib)}", (a, b))
    (s1, z1), (s2, z2) = w.sz(w.input_slot(0)), w.sz(w.input_slot(1))
    w.recipe = "int8 SQUARED_DIFFERENCE: a SUB with left_shift 7, squared in int32, requantized"
    ls = d.left_shift
    xo, yo = a + d.input1_offset, b + d.input2_offset
    sx = int(quant.multiply_by_quantized_multiplier_array(np.array([xo << ls]), d.input1_multiplier,
                                                          d.input1_shift)[0])
    w.step("rescale input 1", f"MBQM({xo}·2^{ls}, {d.input1_multiplier}, {d.input1_shift})", sx)
    sy = int(quant.multiply_by_quantized_multiplier_array(np.array([yo << ls]), d.input2_multiplier,
                                                          d.input2_shift)[0])
    w.step("rescale input 2", f"MBQM({yo}·2^{ls}, {d.input2_multiplier}, {d.input2_shift})", sy)
    diff = w.step("difference", f"{sx} − {sy}", sx - sy)
    sq = w.step("square (int32)", f"{diff}²", _wrap32(diff * diff))
    w.step("output multiplier", f"{d.real_output_multiplier:.9g} = {d.output_multiplier}·2^({d.output_shift}−31)",
           (d.output_multiplier, d.output_shift))
    v = _mbqm(w, sq, d.output_multiplier, d.output_shift)
    return _finish(w, v, d.output_offset, -128, 127), (_real(s1, a, z1) - _real(s2, b, z2)) ** 2
