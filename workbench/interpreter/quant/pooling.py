"""Helpers of the quantized pooling, reduction and data-movement kernels (uint8, int8, int16): integer
ranges, the int64 overload of MultiplyByQuantizedMultiplier and the inverse square root multiplier.
"""

from __future__ import annotations

import numpy as np

from .fixed_point import (
    INT32_MAX,
    INT32_MIN,
    _wrap_int32,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
)

# ----------------------------------------------------------------------------------------------
# pools / reductions (uint8/int16)
#
# Helpers of the quantized pooling, reduction and data-movement kernels (uint8, int8, int16).

QUANTIZED_RANGES = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127),
                    np.dtype(np.int16): (-32768, 32767)}


def quantized_range(dtype) -> tuple[int, int]:
    """(lowest, highest) value of a quantized integer type (uint8, int8 or int16)."""
    return QUANTIZED_RANGES[np.dtype(dtype)]


def is_quantized(context, t: int) -> bool:
    """True when tensor ``t`` carries affine quantization (at least one scale)."""
    q = context.tensor_meta(t).quantization
    return q is not None and len(tuple(q.scale or ())) > 0


def multiply_by_quantized_multiplier_int64(x: int, multiplier: int, shift: int) -> int:
    """TFLite's ``MultiplyByQuantizedMultiplier`` overload for an int64 ``x`` (|x| < 2^47).

    The multiplier is first cut to 16 bits, rounding: reduced = (M + 2^15) >> 16 (0x7FFF when
    M ≥ 0x7FFF0000); then one rounding shift: (x·reduced + 2^(14 − shift)) >> (15 − shift), ties
    toward +infinity; the result is kept as int32 (wraps like C).

    >>> m, s = quantize_multiplier(0.25)
    >>> multiply_by_quantized_multiplier_int64(1000, m, s), multiply_by_quantized_multiplier_int64(-6, m, s)
    (250, -1)
    """
    reduced = (int(multiplier) + (1 << 15)) >> 16 if multiplier < 0x7FFF0000 else 0x7FFF
    total = 15 - int(shift)
    return _wrap_int32((int(x) * reduced + (1 << (total - 1))) >> total)


def _srdhm_py(a: int, b: int) -> int:
    return saturating_rounding_doubling_high_mul(_wrap_int32(a), _wrap_int32(b))


def _saturating_shift_left(x: int, e: int) -> int:
    """gemmlowp's SaturatingRoundingMultiplyByPOT for a positive exponent: x·2^e, clamped to int32."""
    if x > (INT32_MAX >> e):
        return INT32_MAX
    if x < (INT32_MIN >> e):
        return INT32_MIN
    return x << e


def inv_sqrt_quantized_multiplier_exp(value: int, reverse_shift: int = -1) -> tuple[int, int]:
    """TFLite's ``GetInvSqrtQuantizedMultiplierExp``: 1/sqrt(value) as (int32 multiplier, shift).

    value ≤ 1 → (2^31 − 1, 0).  Otherwise the value is brought to [2^27, 2^29) by shifting pairs of
    bits (each pair changes the result's exponent by one), read as a fixed-point number with 3
    integer bits (raw/2), and five Newton-Raphson steps x ← 1.5·x − (v/2)·x³ from x = 1 (all
    products are gemmlowp's rounding doubling high multiplications, rescales saturate) give
    1/sqrt; times sqrt(2)/2 it is the multiplier.  A negative exponent is folded into the
    multiplier; the exponent is finally multiplied by ``reverse_shift`` (−1: a right shift).
    """
    value = int(value)
    if value <= 1:
        return INT32_MAX, 0
    shift = 11
    while value >= (1 << 29):
        value //= 4
        shift += 1
    lz = 32 - value.bit_length()                 # leading zeros of a positive int32
    pairs = (lz - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    one_f3 = 1 << 28                             # 1.0 with 3 integer bits
    half_input = rounding_divide_by_pot(value >> 1, 1)
    half_three = (1 << 28) + (1 << 27)           # 1.5 with 3 integer bits
    x = one_f3
    for _ in range(5):
        x2 = _srdhm_py(x, x)                     # 6 integer bits
        x3 = _saturating_shift_left(_srdhm_py(x2, x), 6)       # 9 → 3 integer bits
        t = _wrap_int32(_srdhm_py(half_three, x) - _srdhm_py(half_input, x3))   # 6 integer bits
        x = _saturating_shift_left(t, 3)
    x = _srdhm_py(x, 1518500250)                 # · sqrt(2)/2 (0 integer bits): stays 3 integer bits
    if shift < 0:
        x = _wrap_int32(x << -shift)
        shift = 0
    return x, shift * reverse_shift
