"""The int8 core: a real multiplier as (int32 mantissa, shift) and the fixed-point arithmetic that
applies it, twice over: on Python ints (exact, easy to step through) and on numpy int64 arrays
(``*_array``); the speed layer compiles it into numba loops (:mod:`workbench.interpreter.fast.requantize`).
See the package docstring for the whole story.
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN = -(2 ** 31)
INT32_MAX = 2 ** 31 - 1


# ----------------------------------------------------------------------------------------------
# real multiplier → (int32 mantissa, shift)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """Write ``real`` as ``multiplier * 2^(shift - 31)`` with an int32 ``multiplier`` in [2^30, 2^31).

    TFLite's ``QuantizeMultiplier`` (``kernels/internal/quantization_util.cc``):

    1. 0 → (0, 0);
    2. ``frexp``: real = q * 2^shift with q in [0.5, 1);
    3. q_fixed = round(q * 2^31), rounding half away from zero (``std::round``);
    4. rounding can reach 2^31 exactly (q was just below 1): then q_fixed = 2^30, shift + 1;
    5. shift < -31 flushes to (0, 0) (the multiplier is too small to matter).

    >>> quantize_multiplier(0.5)
    (1073741824, 0)
    >>> quantize_multiplier(0.75)      # 0.75 = 0.75 * 2^0 → 0.75 * 2^31
    (1610612736, 0)
    >>> quantize_multiplier(3.0)       # 3 = 0.75 * 2^2: positive shift = left shift
    (1610612736, 2)
    """
    real = float(real)
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = _round_half_away_scalar(q * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return int(q_fixed), int(shift)


def quantize_multiplier_smaller_than_one_exp(real: float) -> tuple[int, int]:
    """``QuantizeMultiplierSmallerThanOneExp``: for 0 < real < 1; the shift is ≤ 0 (a right shift)."""
    if not 0.0 < real < 1.0:
        raise ValueError(f"expected 0 < real < 1, got {real}")
    m, shift = quantize_multiplier(real)
    if shift > 0:
        raise ValueError(f"{real} rounds to a multiplier ≥ 1 (shift {shift})")
    return m, shift


def quantize_multiplier_greater_than_one(real: float) -> tuple[int, int]:
    """``QuantizeMultiplierGreaterThanOne``: for real > 1; the shift is ≥ 0 (a left shift)."""
    if not real > 1.0:
        raise ValueError(f"expected real > 1, got {real}")
    m, shift = quantize_multiplier(real)
    if shift < 0:
        raise ValueError(f"{real}: negative shift {shift}")
    return m, shift


def _round_half_away_scalar(x: float) -> int:
    """``std::round``: to the nearest integer, halves away from zero (2.5 → 3, -2.5 → -3)."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


# ----------------------------------------------------------------------------------------------
# scalar fixed-point (Python ints, exact)


def _wrap_int32(v: int) -> int:
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def saturating_rounding_doubling_high_mul(a: int, b: int) -> int:
    """gemmlowp ``SaturatingRoundingDoublingHighMul``: round(a * b / 2^31) for int32 a, b.

    The 64-bit product ``a*b`` is divided by 2^31 (= doubled, then the high 32 bits kept), rounding
    to nearest: add 2^30 (or 1 - 2^30 for a negative product), then divide with C's truncating
    division.  Net effect on a tie: toward +infinity (1.5 → 2, but -1.5 → -1, -0.5 → 0) — not
    "away from zero" as :func:`rounding_divide_by_pot` does.  The single overflow,
    INT32_MIN * INT32_MIN = 2^62 → 2^31, saturates to INT32_MAX.

    >>> saturating_rounding_doubling_high_mul(1 << 30, 1 << 30)     # 0.5 * 0.5 in Q0.31
    536870912
    >>> saturating_rounding_doubling_high_mul(-2**31, -2**31)
    2147483647
    """
    a, b = int(a), int(b)
    if a == INT32_MIN and b == INT32_MIN:
        return INT32_MAX
    p = a * b
    nudge = (1 << 30) if p >= 0 else 1 - (1 << 30)
    v = p + nudge
    q = abs(v) >> 31                 # C division truncates toward zero
    return q if v >= 0 else -q


def rounding_divide_by_pot(x: int, exponent: int) -> int:
    """gemmlowp ``RoundingDivideByPOT``: x / 2^exponent rounded to nearest, ties away from zero.

    mask = 2^e - 1, remainder = x & mask, threshold = mask >> 1 (+1 when x < 0);
    result = (x >> e) + (remainder > threshold).  ``>>`` is an arithmetic shift (floor).

    >>> rounding_divide_by_pot(5, 1), rounding_divide_by_pot(-5, 1), rounding_divide_by_pot(-6, 2)
    (3, -3, -2)
    """
    x, e = int(x), int(exponent)
    if not 0 <= e <= 31:
        raise ValueError(f"exponent {e} outside [0, 31]")
    mask = (1 << e) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if remainder > threshold else 0)


def multiply_by_quantized_multiplier(x: int, multiplier: int, shift: int) -> int:
    """TFLite's ``MultiplyByQuantizedMultiplier`` (double rounding, the default build).

    ``x * multiplier * 2^(shift - 31)``, rounded the way TFLite rounds: a positive ``shift`` first
    multiplies ``x`` by 2^shift (exactly; the kernels guarantee it fits in int32), then
    :func:`saturating_rounding_doubling_high_mul`, then a rounding right shift by ``-shift``.

    >>> m, s = quantize_multiplier(0.3)
    >>> multiply_by_quantized_multiplier(1000, m, s)      # 300
    300
    >>> (multiply_by_quantized_multiplier(5, *quantize_multiplier(0.5)),
    ...  multiply_by_quantized_multiplier(-5, *quantize_multiplier(0.5)))
    (3, -2)

    (-2.5 becomes -2: the high multiply's nudge for a negative product is 1 − 2^30, so its ties go
    toward +infinity; the final rounding shift, here by 0, is the part that rounds away from zero.)
    """
    left = shift if shift > 0 else 0
    right = -shift if shift < 0 else 0
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(_wrap_int32(int(x) * (1 << left)), multiplier),
                                  right)


def rounding_right_shift_half_up(x: int, exponent: int) -> int:
    """ruy's rounding right shift (its x86 AVX2/AVX-512 kernels): (x + 2^(e-1)) >> e, e ≥ 1.

    Ties go toward +infinity (-6.5 → -6), where :func:`rounding_divide_by_pot` goes away from zero
    (-6.5 → -7).  This is the one place where TFLite's matrix-multiply kernels (ruy) differ from its
    reference kernels.
    """
    x, e = int(x), int(exponent)
    if e <= 0:
        return x
    return (x + (1 << (e - 1))) >> e


def multiply_by_quantized_multiplier_ruy(x: int, multiplier: int, shift: int) -> int:
    """What ruy (the matrix-multiply library behind TFLite's CONV_2D and FULLY_CONNECTED on x86)
    computes for :func:`multiply_by_quantized_multiplier`: the same left shift and
    :func:`saturating_rounding_doubling_high_mul`, then :func:`rounding_right_shift_half_up`.

    >>> m, s = 1575127402, -8
    >>> multiply_by_quantized_multiplier(-2269, m, s), multiply_by_quantized_multiplier_ruy(-2269, m, s)
    (-7, -6)
    """
    left = shift if shift > 0 else 0
    right = -shift if shift < 0 else 0
    return rounding_right_shift_half_up(saturating_rounding_doubling_high_mul(_wrap_int32(int(x) * (1 << left)),
                                                                              multiplier), right)


# ----------------------------------------------------------------------------------------------
# numpy versions (int64 arrays; every intermediate fits)


def srdhm_array(a: np.ndarray, b) -> np.ndarray:
    """:func:`saturating_rounding_doubling_high_mul` on int64 arrays holding int32 values."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    p = a * b                                           # |p| ≤ 2^62: fits int64
    v = p + np.where(p >= 0, np.int64(1 << 30), np.int64(1 - (1 << 30)))
    q = np.where(v >= 0, v >> 31, -((-v) >> 31))        # truncating division by 2^31
    return np.where((a == INT32_MIN) & (b == INT32_MIN), np.int64(INT32_MAX), q)


def rounding_divide_by_pot_array(x: np.ndarray, exponent) -> np.ndarray:
    """:func:`rounding_divide_by_pot` on int64 arrays (``exponent`` scalar or broadcastable)."""
    x = np.asarray(x, np.int64)
    e = np.asarray(exponent, np.int64)
    mask = (np.int64(1) << e) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> e) + (remainder > threshold)


def multiply_by_quantized_multiplier_array(x: np.ndarray, multiplier, shift, half_up: bool = False) -> np.ndarray:
    """:func:`multiply_by_quantized_multiplier` on an int64 array; multiplier/shift broadcast.

    Per-channel requantization passes arrays of shape [channels] that broadcast over the last axis.
    ``half_up=True`` is ruy's variant (:func:`multiply_by_quantized_multiplier_ruy`).
    """
    x = np.asarray(x, np.int64)
    shift = np.asarray(shift, np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    scaled = x << left
    scaled = ((scaled + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)      # int32 wrap-around, as C would
    high = srdhm_array(scaled, multiplier)
    if half_up:
        nudge = np.where(right > 0, np.int64(1) << np.maximum(right - 1, 0), 0)
        return (high + nudge) >> right
    return rounding_divide_by_pot_array(high, right)


# ----------------------------------------------------------------------------------------------
# numba versions (the same arithmetic, scalar, for compiled loops)


def requantize_rows(acc, bias, mult, shift, out_zp, lo, hi, out, half_up=False) -> None:
    """numpy twin of :func:`workbench.interpreter.fast.requantize.requantize_rows_jit`
    (the reference kernels use this)."""
    v = np.asarray(acc).astype(np.int64) + bias
    v = multiply_by_quantized_multiplier_array(v, mult, shift, half_up) + out_zp
    out[...] = np.clip(v, lo, hi)
