"""What the uint8 / int16 element-wise and activation kernels share: TFLite's lookup tables, gemmlowp's
fixed-point functions on int16 / int32 raw values (vectorised on numpy int64) and a few integer helpers.
"""

from __future__ import annotations

import math

import numpy as np

from .fixed_point import (
    INT32_MIN,
    quantize_multiplier,
    rounding_divide_by_pot,
    rounding_divide_by_pot_array,
    srdhm_array,
)
from .prepare import libm_apply, round_half_away

# ----------------------------------------------------------------------------------------------
# element-wise (uint8/int16)
#
# What the uint8 / int16 element-wise and activation kernels share: lookup tables built the way
# TFLite builds them (``LUTPopulate`` for 8-bit and for int16), gemmlowp's fixed-point functions
# on int16 / int32 raw values (vectorised on int64 numpy arrays), and a few integer helpers
# (CheckedLog2, count-leading-zeros, GetReciprocal).  Sources (facts only):
# ``tensorflow/lite/kernels/internal/common.h``, ``quantization_util.cc``, gemmlowp
# ``fixedpoint/fixedpoint.h``.


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def lut_8bit(input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int,
             transform, dtype) -> np.ndarray:
    """TFLite's ``LUTPopulate<uint8_t / int8_t>``: 256 entries indexed by the input byte.

    For every input value v of ``dtype`` (uint8 or int8): d = in_scale·(v − in_zp) in float32;
    y = transform(d) (float32); q = round_half_away(y · (1/out_scale)) + out_zp with the
    additions in float32, turned into the type by :func:`lut_float_to_8bit` (what litert's x86
    build does with values beyond the type, infinities and NaNs from absurd scales).  The entry
    sits at index ``(uint8)v``, so an int8 table is ordered 0..127, −128..−1 and is read with
    ``table[x.view(np.uint8)]``.
    """
    dtype = np.dtype(dtype)
    lo, hi = (-128, 127) if dtype == np.int8 else (0, 255)
    v = np.arange(lo, hi + 1, dtype=np.int64)
    d = (np.float32(input_scale) * (v - int(input_zero_point)).astype(np.float32)).astype(np.float32)
    y = np.asarray(transform(d), np.float32)
    inv = np.float32(1.0) / np.float32(output_scale)
    r = round_half_away((y * inv).astype(np.float32)).astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        qf = (r + np.float32(output_zero_point)).astype(np.float32)
    table = np.empty(256, dtype)
    table[v & 0xFF] = lut_float_to_8bit(qf, dtype)
    return table


def lut_float_to_8bit(qf, dtype) -> np.ndarray:
    """The last step of an 8-bit LUT entry: the float32 value round(y/out_scale) + out_zp made an
    int8 / uint8, as litert's x86 build does it (measured on ai-edge-litert 2.3.0 with scales up
    to 3e38 and down to 1e-45, where the value becomes huge, infinite or NaN):

    * int8: the value is clamped to [−128, 127] while still a float (so +inf and anything
      ≥ 2^31 give 127, −inf gives −128), then truncated; a NaN passes the clamp, is converted to
      INT32_MIN (cvttss2si's "integer indefinite") and stored as its low byte: 0.
    * uint8: the value is first truncated to int32 (values outside the int32 range, ±inf and NaN
      become INT32_MIN) and then clamped to [0, 255]: all of those give 0.

    For finite values inside the int32 range both are truncation followed by the clamp.
    """
    dtype = np.dtype(dtype)
    qf = np.asarray(qf, np.float32)
    if dtype == np.int8:
        with np.errstate(invalid="ignore"):
            clamped = np.clip(qf, np.float32(-128), np.float32(127))
        out = np.zeros(qf.shape, np.int64)
        ok = ~np.isnan(clamped)
        out[ok] = np.trunc(clamped[ok]).astype(np.int64)
        return out
    return np.clip(float_to_int32(qf), 0, 255)


def float_to_int32(x) -> np.ndarray:
    """``static_cast<int32_t>(float)`` as x86 does it: truncation, and INT32_MIN for NaN and for
    values outside the int32 range (the "integer indefinite" of cvttss2si)."""
    x = np.asarray(x, np.float64)
    ok = np.isfinite(x) & (x > -2147483649.0) & (x < 2147483648.0)
    out = np.full(x.shape, INT32_MIN, np.int64)
    out[ok] = np.trunc(x[ok]).astype(np.int64)
    return out


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def lut_int16(input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int,
              transform, double: bool = False) -> np.ndarray:
    """TFLite's ``LUTPopulateInt16``: a 513-entry int16 table with linear interpolation.

    The int16 input range is cut into 512 equal steps; entry i is transform(input_min + i·step)
    rescaled to the int16 output range, minus a bias that halves the error the linear
    interpolation would make at the step's midpoint; entry 512 is transform(input_max).
    The arithmetic is in float32 (``double=False``, the usual overload) or float64 (SOFTMAX's
    exp and 1/(1+x) tables).  ``transform`` maps an array of that float type to the same type.
    """
    ft = np.float64 if double else np.float32
    f = lambda x: ft(x)                                                           # noqa: E731
    in_s, out_s = f(input_scale), f(output_scale)
    in_min = f(in_s * f(-32768 - int(input_zero_point)))
    in_max = f(in_s * f(32767 - int(input_zero_point)))
    out_min = f(out_s * f(-32768 - int(output_zero_point)))
    out_max = f(out_s * f(32767 - int(output_zero_point)))
    step = f(f(in_max - in_min) / f(512))
    half_step = f(step / f(2))
    scaling_inv = f(f(65536) / f(out_max - out_min))
    i = np.arange(512).astype(ft)
    x0 = (in_min + (i * step).astype(ft)).astype(ft)
    xm = (x0 + half_step).astype(ft)
    x1 = (in_min + ((i + 1) * step).astype(ft)).astype(ft)
    val = np.asarray(transform(x0), ft)
    val_mid = np.asarray(transform(xm), ft)
    val_next = np.asarray(transform(x1), ft)
    sample = round_half_away((val * scaling_inv).astype(ft)).astype(ft)
    interp = round_half_away((((val_next * scaling_inv).astype(ft) + sample).astype(ft) / ft(2)).astype(ft))
    mid = round_half_away((val_mid * scaling_inv).astype(ft)).astype(ft)
    bias = round_half_away(((interp - mid).astype(ft) / ft(2)).astype(ft)).astype(ft)
    lut = np.empty(513, np.int16)
    lut[:512] = _lut16_entry((sample - bias).astype(ft))
    last = round_half_away((np.asarray(transform(np.array([in_max], ft)), ft) * scaling_inv).astype(ft))
    lut[512] = _lut16_entry(last)[0]
    return lut


def _lut16_entry(v) -> np.ndarray:
    """A float entry of the int16 table made an int16: clamped to [−32768, 32767] as a float (so
    ±inf saturate), a NaN passes the clamp and becomes INT32_MIN, whose low 16 bits are 0."""
    v = np.asarray(v, np.float64)
    with np.errstate(invalid="ignore"):
        c = np.clip(v, -32768.0, 32767.0)
    return np.where(np.isnan(c), 0.0, np.trunc(np.nan_to_num(c))).astype(np.int16)


def lut_lookup_int16(x, lut) -> np.ndarray:
    """TFLite's ``LUTLookup`` for int16: entry 256 + (x >> 7), plus the slope times the low 7 bits,
    rounded ((slope·offset + 64) >> 7), wrapped to int16.

    The slope lut[i + 1] − lut[i] is kept in an int16 and so wraps when the two entries are more
    than 32767 apart — which happens only in tables of absurd scales, where neighbouring entries
    sit at the two ends of the range (−32768 next to 32767 makes a slope of −1)."""
    x = np.asarray(x).astype(np.int64)
    index = 256 + (x >> 7)
    offset = x & 0x7F
    base = lut.astype(np.int64)[index]
    slope = wrap_bits(lut.astype(np.int64)[index + 1] - base, 16)
    return wrap_bits(base + ((slope * offset + 64) >> 7), 16)


def wrap_bits(x, bits: int) -> np.ndarray:
    """Two's-complement wrap of integer values to ``bits`` bits (what storing into int16/int32 does)."""
    x = np.asarray(x, np.int64)
    half = np.int64(1) << (bits - 1)
    return ((x + half) & ((half << 1) - 1)) - half


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLite's ``CheckedLog2``: (is ``x`` within 1e-3 of a power of two in log2, rounded log2).

    log2 is computed as logf(x)·(1/logf(2)) in float32 and rounded half away from zero.
    """
    x_log2 = np.float32(libm_apply("logf", [x])[0] * (np.float32(1.0) / libm_apply("logf", [2.0])[0]))
    rounded = np.float32(round_half_away(x_log2))
    frac = np.float32(x_log2 - rounded)
    return bool(abs(float(frac)) < 1e-3), int(rounded)


def count_leading_zeros32(x) -> np.ndarray:
    """Leading zero bits of uint32 values (32 for 0)."""
    x = np.asarray(x, np.int64) & 0xFFFFFFFF
    _, e = np.frexp(x.astype(np.float64))                   # exact: x < 2^53
    return np.where(x == 0, 32, 32 - e).astype(np.int64)


def count_leading_sign_bits32(x) -> np.ndarray:
    """``CountLeadingSignBits`` for int32 values: redundant sign bits (31 for 0 and for −1)."""
    x = np.asarray(x, np.int64)
    return np.where(x >= 0, count_leading_zeros32(x) - 1, count_leading_zeros32(~x) - 1)


def require_finite(node, what: str, value) -> float:
    """A real number made from the scales that a kernel's prepare cannot use unless finite: a
    ModelError naming the node and the value.  (SOFTMAX's ``beta`` and LEAKY_RELU's ``alpha`` are no
    longer refused: litert computes on with NaN and inf there and the kernels reproduce what x86
    makes of them, see tests/interpreter/quant/test_quantized_edge_parameters.py.)"""
    v = float(value)
    if not math.isfinite(v):
        from ...errors import ModelError
        raise ModelError(f"{node.op_name} (node {node.index}): {what} is {v!r}; it must be a finite number")
    return v


def checked_quantize_multiplier(node, what: str, real) -> tuple[int, int]:
    """:func:`quantize_multiplier` of a kernel's real multiplier, refusing what its integer arithmetic
    cannot apply: a NaN or infinite value (a NaN / inf option, or float32 scale products that
    overflow) and a shift above 31 (a multiplier of 2^31 or more: TFLite would shift an int32 left
    by 32 or more, undefined in C)."""
    real = require_finite(node, what, real)
    m, shift = quantize_multiplier(real)
    if shift > 31:
        from ...errors import ModelError
        raise ModelError(f"{node.op_name} (node {node.index}): {what} {real:.6g} is 2^{shift - 1} or more; the "
                         f"integer kernel cannot apply it (a left shift by {shift} of an int32)")
    return m, shift


# gemmlowp fixed point, vectorised.  A raw value is an int64 array holding a ``bits``-bit signed
# integer (16 or 32); a fixed-point number with m integer bits stands for raw / 2^(bits − 1 − m).

def fp_const(int32_value: int, bits: int) -> int:
    """``RescaleConstantInitializer``: gemmlowp writes constants as 32-bit raw values; a 16-bit
    raw type gets them rounding-shifted right by 16."""
    return int(int32_value) if bits == 32 else rounding_divide_by_pot(int(int32_value), 32 - bits)


def fp_srdhm(a, b, bits: int) -> np.ndarray:
    """``SaturatingRoundingDoublingHighMul`` on ``bits``-bit raw values (the fixed-point product)."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    if bits == 32:
        return srdhm_array(a, b)
    p = a * b
    v = p + np.where(p >= 0, np.int64(1 << 14), np.int64(1 - (1 << 14)))
    q = np.where(v >= 0, v >> 15, -((-v) >> 15))
    return np.where((a == -32768) & (b == -32768), np.int64(32767), q)


def fp_sat_mul_pot(x, exponent: int, bits: int) -> np.ndarray:
    """``SaturatingRoundingMultiplyByPOT``: x·2^e saturating for e > 0 (gemmlowp saturates once
    |x| exceeds 2^(bits−1−e) − 1), a rounding right shift for e < 0."""
    x = np.asarray(x, np.int64)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot_array(x, -exponent)
    threshold = (1 << (bits - 1 - exponent)) - 1
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return np.where(x > threshold, hi, np.where(x < -threshold, lo, x << exponent))


def fp_rescale(x, src_integer_bits: int, dst_integer_bits: int, bits: int) -> np.ndarray:
    """``Rescale<dst>``: change the number of integer bits (saturating / rounding)."""
    return fp_sat_mul_pot(x, src_integer_bits - dst_integer_bits, bits)


def fp_add(a, b, bits: int) -> np.ndarray:
    return wrap_bits(np.asarray(a, np.int64) + np.asarray(b, np.int64), bits)


def fp_sub(a, b, bits: int) -> np.ndarray:
    return wrap_bits(np.asarray(a, np.int64) - np.asarray(b, np.int64), bits)


def fp_one(integer_bits: int, bits: int) -> int:
    """``FixedPoint::One()``: the largest raw value for 0 integer bits, else 2^fractional_bits."""
    return (1 << (bits - 1)) - 1 if integer_bits == 0 else 1 << (bits - 1 - integer_bits)


def fp_exp_on_interval(a, bits: int) -> np.ndarray:
    """gemmlowp ``exp_on_interval_between_negative_one_quarter_and_0_excl`` (0 integer bits):
    a 4th-order Taylor expansion of exp around −1/8."""
    constant_term = fp_const(1895147668, bits)
    one_third = fp_const(715827883, bits)
    x = fp_add(a, 1 << (bits - 4), bits)                                 # a + 1/8
    x2 = fp_srdhm(x, x, bits)
    x3 = fp_srdhm(x2, x, bits)
    x4 = fp_srdhm(x2, x2, bits)
    x4_over_4 = fp_sat_mul_pot(x4, -2, bits)
    poly = fp_sat_mul_pot(fp_add(fp_srdhm(fp_add(x4_over_4, x3, bits), one_third, bits), x2, bits), -1, bits)
    s = fp_srdhm(constant_term, fp_add(x, poly, bits), bits)
    if bits == 16:
        return np.clip(constant_term + s, -32768, 32767)                  # AddSaturatingIf16Bit
    return wrap_bits(constant_term + s, bits)


_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535),
               (3, 720401), (4, 242))


def fp_exp_on_negative_values(a, integer_bits: int, bits: int) -> np.ndarray:
    """gemmlowp ``exp_on_negative_values``: exp(a) for a ≤ 0 with ``integer_bits`` integer bits,
    result with 0 integer bits.  a = −(multiple of 1/4) + r, r in [−1/4, 0): exp(r) by Taylor,
    then one multiplication by a constant exp(−2^k) for every set bit of the multiple."""
    a = np.asarray(a, np.int64)
    frac = bits - 1 - integer_bits
    quarter = 1 << (frac - 2)
    a_mod = fp_sub(a & (quarter - 1), quarter, bits)
    result = fp_exp_on_interval(fp_rescale(a_mod, integer_bits, 0, bits), bits)
    remainder = fp_sub(a_mod, a, bits)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            m = fp_const(multiplier, bits)
            bit = np.int64(1) << (frac + exponent)
            result = np.where((remainder & bit) != 0, fp_srdhm(result, m, bits), result)
    if integer_bits > 5:
        clamp = fp_const(-(1 << (36 - integer_bits)), bits)
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, fp_one(0, bits), result)


def _rounding_half_sum(a, b) -> np.ndarray:
    s = np.asarray(a, np.int64) + np.asarray(b, np.int64)
    t = s + np.where(s >= 0, 1, -1)
    return np.where(t >= 0, t >> 1, -((-t) >> 1))


def _newton_reciprocal_f2(a, bits: int) -> np.ndarray:
    """The three Newton-Raphson steps shared by 1/(1+x) and (1−x)/(1+x): x ≈ 1/((1+a)/2), 2 integer bits."""
    half_denominator = _rounding_half_sum(a, fp_one(0, bits))
    c48_17 = fp_const(1515870810, bits)
    c_neg32_17 = fp_const(-1010580540, bits)
    x = fp_add(c48_17, fp_srdhm(half_denominator, c_neg32_17, bits), bits)
    one_f2 = fp_one(2, bits)
    for _ in range(3):
        hd_x = fp_srdhm(half_denominator, x, bits)
        one_minus = fp_sub(one_f2, hd_x, bits)
        x = fp_add(x, fp_rescale(fp_srdhm(x, one_minus, bits), 4, 2, bits), bits)
    return x


def fp_one_over_one_plus_x(a, bits: int) -> np.ndarray:
    """gemmlowp ``one_over_one_plus_x_for_x_in_0_1`` (0 integer bits in and out)."""
    return fp_rescale(_newton_reciprocal_f2(a, bits), 1, 0, bits)


def fp_one_minus_x_over_one_plus_x(a, bits: int) -> np.ndarray:
    """gemmlowp ``one_minus_x_over_one_plus_x_for_x_in_0_1`` (0 integer bits in and out)."""
    return fp_rescale(fp_sub(_newton_reciprocal_f2(a, bits), fp_one(2, bits), bits), 2, 0, bits)


def fp_logistic(a, integer_bits: int, bits: int) -> np.ndarray:
    """gemmlowp ``logistic``: 1/(1 + exp(−a)), result with 0 integer bits."""
    a = np.asarray(a, np.int64)
    positive = a > 0
    abs_a = np.where(positive, a, wrap_bits(-a, bits))
    pos = fp_one_over_one_plus_x(fp_exp_on_negative_values(wrap_bits(-abs_a, bits), integer_bits, bits), bits)
    neg = fp_sub(fp_one(0, bits), pos, bits)
    return np.where(a == 0, fp_const(1 << 30, bits), np.where(positive, pos, neg))


def fp_tanh(a, integer_bits: int, bits: int) -> np.ndarray:
    """gemmlowp ``tanh``: (1 − exp(−2|a|)) / (1 + exp(−2|a|)) with the sign of a, 0 integer bits."""
    a = np.asarray(a, np.int64)
    negative = a < 0
    n = np.where(negative, a, wrap_bits(-a, bits))
    t = fp_one_minus_x_over_one_plus_x(fp_exp_on_negative_values(n, integer_bits + 1, bits), bits)
    return np.where(a == 0, 0, np.where(negative, wrap_bits(-t, bits), t))


def get_reciprocal(x, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite's ``GetReciprocal``: 1/x for positive int32 ``x`` with ``x_integer_digits`` integer
    bits, as (Q0.31 raw value, num_bits_over_unit): x is normalised into [1, 2), 1/(1 + (x − 1))
    comes from gemmlowp's Newton-Raphson, and the result stands for raw·2^(−num_bits_over_unit)."""
    x = np.asarray(x, np.int64)
    headroom_plus_one = count_leading_zeros32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted_minus_one = wrap_bits(((x & 0xFFFFFFFF) << headroom_plus_one) - (1 << 31), 32)
    return fp_one_over_one_plus_x(shifted_minus_one, 32), num_bits_over_unit


# TFLite's ``sigmoid_table_uint16`` (kernels/internal/common.h): sigmoid(i/24) for i = 0..255 in
# unsigned 0.16 fixed point.  The published values are not round(65536·sigmoid(i/24)) everywhere
# (43 entries are one higher, presumably tuned for the linear interpolation between entries), so
# they are data here, not a formula.
_SIGMOID_TABLE_UINT16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], np.int64)


def rounding_divide_by_pot_x86(x, exponent) -> np.ndarray:
    """gemmlowp ``RoundingDivideByPOT`` as compiled for x86, also for exponents above 31 (undefined
    behaviour in C that some kernels reach): the mask (2^e − 1) is cut to 32 bits and the
    arithmetic shift count is taken modulo 32 (what the ``sar`` instruction does).  For
    0 ≤ e ≤ 31 this is :func:`rounding_divide_by_pot_array`."""
    x = np.asarray(x, np.int64)
    e = np.asarray(exponent, np.int64)
    with np.errstate(over="ignore"):
        mask = wrap_bits((np.int64(1) << (e & 63)) - 1, 32)        # 64-bit shl counts modulo 64
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> (e & 31)) + (remainder > threshold)


def sigmoid_table_uint16() -> np.ndarray:
    """The 256-entry sigmoid table of the int16 LOGISTIC and TANH kernels (a copy, int64)."""
    return _SIGMOID_TABLE_UINT16.copy()


# ----------------------------------------------------------------------------------------------
# absurd scales (element-wise activations)
#
# With scales of 1e30 and more or 1e-30 and less, the real multipliers of the activation kernels
# overflow to ±inf, become NaN or need shifts far beyond 31.  TFLite computes on: its conversions
# are then undefined in C, and litert's x86 build gives them fixed meanings, measured on
# ai-edge-litert 2.3.0 (tests/interpreter/quant/test_quantized_extreme_scales.py).


def quantize_multiplier_x86(real: float) -> tuple[int, int]:
    """``QuantizeMultiplier`` for any double, as litert's x86 build computes it.

    Finite values: :func:`quantize_multiplier` (the shift may exceed 31).  ±inf and NaN: glibc's
    ``frexp`` leaves the exponent 0 and ``static_cast<int64_t>`` of the non-finite q·2^31 is
    INT64_MIN, whose low 32 bits make the int32 multiplier 0 — so (0, 0): the multiplication
    gives 0."""
    real = float(real)
    if not math.isfinite(real):
        return 0, 0
    return quantize_multiplier(real)


def multiply_by_quantized_multiplier_x86_array(x, multiplier, shift) -> np.ndarray:
    """``MultiplyByQuantizedMultiplier`` (int32 x) for any shift, as litert's x86 build runs it:
    x·(1 << left_shift) takes the shift count modulo 32 (``shl``) and wraps in int32; then SRDHM and
    the rounding right shift, which for counts above 31 is :func:`rounding_divide_by_pot_x86`.
    For shifts in [−31, 31] this is :func:`multiply_by_quantized_multiplier_array`."""
    x = np.asarray(x, np.int64)
    shift = int(shift)
    left = (shift & 31) if shift > 0 else 0
    scaled = wrap_bits(x << left, 32)
    return rounding_divide_by_pot_x86(srdhm_array(scaled, int(multiplier)), max(-shift, 0))


def rounding_divide_by_pot_int16(x, exponent: int) -> np.ndarray:
    """gemmlowp ``RoundingDivideByPOT`` on int16 values, also for exponents of 16 and more (absurd
    scales reach them): the mask 2^e − 1 is stored in an int16 (all ones from e = 16 on), so the
    "remainder" is x itself and the result is +1 for x ≥ 0 and −1 below — not the ≈ 0 that the
    division would give.  For 0 ≤ e ≤ 15 this is :func:`rounding_divide_by_pot_array`."""
    x = np.asarray(x, np.int64)
    e = int(exponent)
    mask = int(wrap_bits(np.int64((1 << e) - 1), 16))
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> e) + (remainder > threshold)


# ----------------------------------------------------------------------------------------------
# softmax / leaky_relu edge parameters
#
# A NaN or infinite SOFTMAX ``beta`` (or an input scale · beta beyond float32), LOG_SOFTMAX input
# scales so large that in_scale·255 is infinite, a NaN or infinite LEAKY_RELU ``alpha``: TFLite's
# prepare accepts all of them and computes on.  The float32 arithmetic of the 8-bit softmax
# kernels then meets NaN and ±inf, and the last step — a float turned into an int32 — is x86's
# ``cvttss2si``: NaN and values outside the int32 range become INT32_MIN (:func:`float_to_int32`).
# LEAKY_RELU needs nothing new: its alpha multiplier is (0, 0) (:func:`quantize_multiplier_x86`).
# Measured on ai-edge-litert 2.3.0 (tests/interpreter/quant/test_quantized_edge_parameters.py).


def softmax_output_int32_x86(p, zero_point: int, add_half: bool) -> np.ndarray:
    """The 8-bit-input SOFTMAX's output step (``QuantizeSoftmaxOutput``) in int32, before the clamp,
    for any float32 p = t(x)·inv, NaN and ±inf included.

    * ``add_half`` (uint8 output on x86): (int32)(p + 0.5f) — the zero point is not used;
    * otherwise (int8 / int16 output): (int32)roundf(p) + zero_point, the addition in int32 (so
      INT32_MIN from a NaN plus a negative zero point wraps to a large positive value).
    """
    p = np.asarray(p, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        if add_half:
            return float_to_int32((p + np.float32(0.5)).astype(np.float32))
        return wrap_bits(float_to_int32(round_half_away(p)) + int(zero_point), 32)


def log_softmax_output_int32_x86(log_prob, zero_point: int) -> np.ndarray:
    """The 8-bit LOG_SOFTMAX's output step in int32, before the clamp: rintf(log_prob) (ties to
    even) plus the zero point, both in float32, then (int32) as x86 converts (NaN, ±inf and values
    beyond int32 → INT32_MIN, which the clamp makes the type's minimum)."""
    lp = np.asarray(log_prob, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        return float_to_int32((np.rint(lp) + np.float32(zero_point)).astype(np.float32))


# ----------------------------------------------------------------------------------------------
# litert's vector loops for quantized ADD / SUB / MUL (Variant.neon_narrowing)
#
# TFLite's optimized ADD and MUL are NEON code; litert's x86 build compiles it through NEON_2_SSE.
# Where those loops compute differently from the reference kernels (reference_integer_ops::Add / Mul,
# reference_ops::Add / Sub / Mul), the functions below say which outputs they write and what they
# write there.  ``_binary.prepare`` asks :func:`vector_loop_mask` for the outputs (under
# ``Variant.neon_narrowing``; SUB's compiler-vectorised loop in both variants) and the kernels take
# the values from :func:`add_8bit_neon`, :func:`mul_8bit_neon` and :func:`add_int16_neon` there.
# Measured on ai-edge-litert 2.3.0 (tests/interpreter/kernels/test_add_mul.py, test_sub.py).

# (elementwise loop, scalar-broadcast loop) widths of litert's NEON 8-bit ADD / MUL
NEON_8BIT_BLOCKS = {("add", "int8"): (16, 8), ("add", "uint8"): (8, 8), ("mul", "int8"): (16, 16),
                    ("mul", "uint8"): (8, 8)}
INT16_ADD_BLOCK = 16        # litert's int16 ADD (general scales, no broadcast): values per vector step
SUB_LANES = 4               # the compiler's vectorisation of the SUB loops (SSE, int32 × 4)

from .fixed_point import multiply_by_quantized_multiplier_array as _mbqm_array  # noqa: E402


def _padded_shapes(shape_a, shape_b):
    """Both shapes padded with leading 1s to one rank (as ``ProcessBroadcastShapes`` compares them)
    and the output shape."""
    n = max(len(shape_a), len(shape_b))
    ea = (1,) * (n - len(shape_a)) + tuple(shape_a)
    eb = (1,) * (n - len(shape_b)) + tuple(shape_b)
    return ea, eb, tuple(max(x, y) for x, y in zip(ea, eb))


def _run_prefix(out_shape, run: int, block: int) -> np.ndarray:
    """The outputs a vector loop writes when the output is cut into runs of ``run`` values and each
    run's first ⌊run/block⌋·block values go through the loop (the rest through the scalar tail)."""
    size = int(np.prod(out_shape, dtype=np.int64))
    pos = np.arange(size, dtype=np.int64) % max(run, 1)
    return (pos < run // block * block).reshape(out_shape)


def neon_block_mask(shape_a, shape_b, block: int, scalar_block: int | None = None):
    """(mask, scalar_broadcast): which outputs TFLite's optimized 8-bit ADD / MUL compute in a vector
    loop (``block`` wide for the elementwise loop, ``scalar_block`` for the scalar-broadcast loop) —
    or None where it runs the reference loop.

    ``ProcessBroadcastShapes`` decides: equal shapes → one elementwise run over the whole tensor;
    a broadcast that collapses to the "five-fold" pattern → elementwise runs of the innermost
    common size y4 (or scalar-broadcast runs of y3 when y4 = 1); anything else → the reference loop."""
    ea, eb, out = _padded_shapes(shape_a, shape_b)
    if ea == eb:
        return _run_prefix(out, int(np.prod(out, dtype=np.int64)), block), False
    n = len(ea)
    first = None
    for i in range(n - 1, -1, -1):
        if ea[i] != eb[i]:
            first = True if ea[i] == 1 else False if eb[i] == 1 else None
            break
    if first is None:
        return None
    sa, sb = (ea, eb) if first else (eb, ea)
    y = [1, 1, 1, 1, 1]          # y0 … y4, innermost last
    i = n - 1
    while i >= 0 and sa[i] == sb[i]:
        y[4] *= sb[i]
        i -= 1
    while i >= 0 and sa[i] == 1:
        y[3] *= sb[i]
        i -= 1
    while i >= 0 and sa[i] == sb[i]:
        y[2] *= sa[i]
        i -= 1
    while i >= 0 and sb[i] == 1:
        y[1] *= sa[i]
        i -= 1
    while i >= 0 and sa[i] == sb[i]:
        y[0] *= sb[i]
        i -= 1
    if i >= 0:
        return None
    scalar = y[4] == 1
    return _run_prefix(out, y[4] if y[4] > 1 else y[3], scalar_block if scalar and scalar_block else block), scalar


def int16_add_vector_mask(shape_a, shape_b):
    """The outputs litert's int16 ADD computes in its vector loop (``AddElementwiseInt16``): with
    equal shapes the first ⌊size/16⌋·16 values; any broadcast runs the reference loop (None)."""
    ea, eb, out = _padded_shapes(shape_a, shape_b)
    return _run_prefix(out, int(np.prod(out, dtype=np.int64)), INT16_ADD_BLOCK) if ea == eb else None


def sub_vector_mask(shape_a, shape_b, int16: bool, optimized_broadcast: bool):
    """The outputs of a SUB that litert computes in a compiler-vectorised loop (which matters only with
    an output multiplier ≥ 1, see ``_binary.add_sub_general``).  Equal shapes: the whole tensor is
    one run — in both builds.  A broadcast: none for 8-bit types, and none for int16 in the reference
    kernels; litert's builtin int16 SUB (``optimized_broadcast``) vectorises every run of the trailing
    dimensions the two inputs share.  Each run's first ⌊run/4⌋·4 values are vectorised."""
    ea, eb, out = _padded_shapes(shape_a, shape_b)
    if ea == eb:
        run = int(np.prod(out, dtype=np.int64))
    elif not (int16 and optimized_broadcast):
        return None
    else:
        run = 1
        for x, y in zip(reversed(ea), reversed(eb)):
            if x != y:
                break
            run *= x
    return _run_prefix(out, run, SUB_LANES)


def vector_loop_mask(kind: str, dtype: str, shape_a, shape_b, output_shift: int, neon: bool):
    """The policy of ``Variant.neon_narrowing`` (``neon``) for a quantized ADD / SUB / MUL on the
    general path: (mask of the outputs a vector loop writes, whether it is the scalar-broadcast loop),
    or (None, False) when every output is the reference arithmetic's.

    * 8-bit ADD / MUL, ``neon``: litert's NEON loops (:func:`neon_block_mask`);
    * int16 ADD, ``neon``: litert's ``AddElementwiseInt16`` (:func:`int16_add_vector_mask`);
    * SUB with an output shift > 0 (a multiplier ≥ 1): the compiler-vectorised loop, in both variants
      (:func:`sub_vector_mask`)."""
    if kind == "sub":
        mask = sub_vector_mask(shape_a, shape_b, dtype == "int16", neon) if output_shift > 0 else None
        return (mask, False) if mask is not None and mask.any() else (None, False)
    if not neon:
        return None, False
    if (kind, dtype) in NEON_8BIT_BLOCKS:
        found = neon_block_mask(shape_a, shape_b, *NEON_8BIT_BLOCKS[(kind, dtype)])
    else:
        found = (int16_add_vector_mask(shape_a, shape_b), False) if (kind, dtype) == ("add", "int16") else None
    if found is None or found[0] is None or not found[0].any():
        return None, False
    return found


def _vshl(x, n: int):
    """NEON ``vshl`` by a signed count: left for n ≥ 0, arithmetic (truncating) right otherwise."""
    return x << n if n >= 0 else x >> -n


def _type_range(dtype: str) -> tuple[int, int]:
    return {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}[dtype]


def add_8bit_neon(a, b, p, scalar_broadcast: bool = False) -> np.ndarray:
    """litert's NEON ADD for uint8 / int8 (``AddElementwise`` / ``AddScalarBroadcast``), before the
    activation clamp.  ``p``: the ADD's ``ArithmeticParams`` (``_binary.BinaryQuantizedData``).

    The input scaling's right shift truncates (uint8, and int8's scalar-broadcast loop) or is folded
    into the left shift (int8 elementwise: one rounding instead of two); the requantized sum is
    narrowed to int16 by truncation (``vmovn``), the zero point added in int16 (wrapping), then
    saturated to the 8-bit type.  A sum that does not fit int16 (an output scale far below the
    inputs') lands at the other end of the range."""
    srdhm = srdhm_array
    x = np.asarray(a).astype(np.int64) + p.input1_offset
    y = np.asarray(b).astype(np.int64) + p.input2_offset
    if scalar_broadcast or p.dtype == "uint8":     # a truncating right shift after the multiply
        sx = srdhm(wrap_bits(x << p.left_shift, 32), p.input1_multiplier) >> -p.input1_shift
        sy = srdhm(wrap_bits(y << p.left_shift, 32), p.input2_multiplier) >> -p.input2_shift
    else:                                          # the input shift folded into the left shift (vshl)
        sx = srdhm(wrap_bits(_vshl(x, p.left_shift + p.input1_shift), 32), p.input1_multiplier)
        sy = srdhm(wrap_bits(_vshl(y, p.left_shift + p.input2_shift), 32), p.input2_multiplier)
    r = rounding_divide_by_pot_array(srdhm(wrap_bits(sx + sy, 32), p.output_multiplier), -p.output_shift)
    v = wrap_bits(wrap_bits(r, 16) + p.output_offset, 16)
    return np.clip(v, *_type_range(p.output_dtype))


def mul_8bit_neon(a, b, p, saturate16: bool = True) -> np.ndarray:
    """litert's NEON MUL for uint8 / int8, before the activation clamp: the requantized product is
    narrowed to int16 saturating (``vqmovn``; ``saturate16=False``: truncating, uint8's scalar-broadcast
    loop), the zero point added in int16 (wrapping), then saturated to the 8-bit type."""
    prod = (np.asarray(a).astype(np.int64) + p.input1_offset) * (np.asarray(b).astype(np.int64) + p.input2_offset)
    r = _mbqm_array(wrap_bits(prod, 32), p.output_multiplier, p.output_shift)
    r16 = np.clip(r, -32768, 32767) if saturate16 else wrap_bits(r, 16)
    return np.clip(wrap_bits(r16 + p.output_offset, 16), *_type_range(p.output_dtype))


def add_int16_neon(a, b, p) -> np.ndarray:
    """litert's int16 ADD vector loop (``AddElementwiseInt16``), before the activation clamp: each
    input's rescale shifts by ``left_shift + input_shift`` in one go (``vshl``: a truncating right
    shift when negative) and takes one SRDHM — one rounding where the reference rounds twice.  The
    sum is requantized as in the reference and the zero point added in int32.  Only where the
    reference's second rounding meets an exact tie that the single rounding does not see does an
    output move by one (one of 2048 values of the int16 ADD in ``mobilenet_v3_block_aeq_a16w8``)."""
    x = np.asarray(a).astype(np.int64) + p.input1_offset
    y = np.asarray(b).astype(np.int64) + p.input2_offset
    sx = srdhm_array(wrap_bits(_vshl(x, p.left_shift + p.input1_shift), 32), p.input1_multiplier)
    sy = srdhm_array(wrap_bits(_vshl(y, p.left_shift + p.input2_shift), 32), p.input2_multiplier)
    r = rounding_divide_by_pot_array(srdhm_array(wrap_bits(sx + sy, 32), p.output_multiplier), -p.output_shift)
    return r + p.output_offset

