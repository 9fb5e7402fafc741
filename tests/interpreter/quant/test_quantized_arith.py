"""workbench.interpreter.quant: TFLite's fixed-point helpers, checked against exact rational arithmetic
and edge cases."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from workbench.interpreter import quant
from workbench.interpreter.fast import requantize
from workbench.interpreter.quant import (
    INT32_MAX,
    INT32_MIN,
    activation_range_quantized,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_array,
    quantize_multiplier,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
)


def round_away(fr: Fraction) -> int:
    """Nearest integer, ties away from zero, exactly."""
    n = math.floor(abs(fr) + Fraction(1, 2))
    return n if fr >= 0 else -n


def test_quantize_multiplier_basic_values():
    assert quantize_multiplier(0.0) == (0, 0)
    assert quantize_multiplier(0.5) == (1 << 30, 0)
    assert quantize_multiplier(1.0) == (1 << 30, 1)
    assert quantize_multiplier(0.25) == (1 << 30, -1)
    assert quantize_multiplier(-0.5) == (-(1 << 30), 0)


def test_quantize_multiplier_rounding_up_to_two_pow_31_bumps_the_shift():
    # q just below 1: q * 2^31 rounds to 2^31, which does not fit → 2^30 and shift + 1
    real = 1.0 - 2.0 ** -40
    m, s = quantize_multiplier(real)
    assert (m, s) == (1 << 30, 1)


def test_quantize_multiplier_flushes_tiny_values():
    assert quantize_multiplier(2.0 ** -40) == (0, 0)
    m, s = quantize_multiplier(2.0 ** -32)      # frexp exponent -31: kept
    assert (m, s) == (1 << 30, -31)


@pytest.mark.parametrize("real", [0.1, 0.3, 0.0078125, 1.7, 123.456, 3.0e-6])
def test_quantize_multiplier_reconstructs_real(real):
    m, s = quantize_multiplier(real)
    assert (1 << 30) <= m < (1 << 31)
    assert abs(m * 2.0 ** (s - 31) - real) <= real * 2.0 ** -30


def test_srdhm_saturates_int32_min_squared():
    assert saturating_rounding_doubling_high_mul(INT32_MIN, INT32_MIN) == INT32_MAX
    a = np.array([INT32_MIN, INT32_MIN, 5], np.int64)
    b = np.array([INT32_MIN, INT32_MAX, 7], np.int64)
    got = quant.srdhm_array(a, b).tolist()
    assert got == [saturating_rounding_doubling_high_mul(x, y) for x, y in zip(a.tolist(), b.tolist())]
    assert got[0] == INT32_MAX


def test_srdhm_matches_exact_rounding():
    rng = np.random.default_rng(1)
    a = rng.integers(INT32_MIN, INT32_MAX, 2000, endpoint=True)
    b = rng.integers(INT32_MIN, INT32_MAX, 2000, endpoint=True)
    # small values make ties likely
    a = np.concatenate([a, rng.integers(-4, 5, 200) << 29, [1 << 30, -(1 << 30), 1, -1, 3, -3]])
    b = np.concatenate([b, rng.integers(-4, 5, 200) << 1, [1, 1, 1 << 30, 1 << 30, 1 << 30, 1 << 30]])
    arr = quant.srdhm_array(a, b)
    for x, y, v in zip(a.tolist(), b.tolist(), arr.tolist()):
        want = INT32_MAX if x == y == INT32_MIN else math.floor(Fraction(x * y, 1 << 31) + Fraction(1, 2))
        assert saturating_rounding_doubling_high_mul(x, y) == want == v, (x, y)


def test_srdhm_ties_round_toward_plus_infinity():
    # the nudge 1 - 2^30 with truncating division: -0.5 → 0 and -1.5 → -1, while +0.5 → 1
    assert saturating_rounding_doubling_high_mul(-1, 1 << 30) == 0
    assert saturating_rounding_doubling_high_mul(1, 1 << 30) == 1
    assert saturating_rounding_doubling_high_mul(-3, 1 << 30) == -1
    assert saturating_rounding_doubling_high_mul(3, 1 << 30) == 2


def test_rounding_divide_by_pot_ties_and_shifts():
    assert rounding_divide_by_pot(5, 1) == 3
    assert rounding_divide_by_pot(-5, 1) == -3
    assert rounding_divide_by_pot(-6, 2) == -2      # -1.5 → -2
    assert rounding_divide_by_pot(6, 2) == 2        # 1.5 → 2
    assert rounding_divide_by_pot(-7, 2) == -2      # -1.75 → -2
    assert rounding_divide_by_pot(-5, 2) == -1      # -1.25 → -1
    assert rounding_divide_by_pot(123, 0) == 123
    assert rounding_divide_by_pot(INT32_MIN, 31) == -1
    assert rounding_divide_by_pot(INT32_MAX, 31) == 1
    with pytest.raises(ValueError):
        rounding_divide_by_pot(1, 32)
    rng = np.random.default_rng(2)
    x = rng.integers(INT32_MIN, INT32_MAX, 3000, endpoint=True)
    e = rng.integers(0, 32, 3000)
    arr = quant.rounding_divide_by_pot_array(x, e)
    for xi, ei, v in zip(x.tolist(), e.tolist(), arr.tolist()):
        assert rounding_divide_by_pot(xi, ei) == round_away(Fraction(xi, 1 << ei)) == v


@pytest.mark.parametrize("real", [0.00037, 0.0213, 0.5, 0.9999, 1.0, 2.5, 17.0])
def test_mbqm_scalar_array_and_jit_agree(real):
    m, s = quantize_multiplier(real)
    rng = np.random.default_rng(3)
    bound = 2 ** 31 // max(1, 1 << max(s, 0)) - 1
    x = rng.integers(-bound, bound, 500)
    x = np.concatenate([x, [0, 1, -1, 2, -2, bound, -bound]])
    arr = multiply_by_quantized_multiplier_array(x, m, s)
    jit = requantize.mbqm_jit
    for xi, v in zip(x.tolist(), arr.tolist()):
        assert multiply_by_quantized_multiplier(xi, m, s) == v == int(jit(np.int64(xi), np.int64(m), np.int64(s)))


def test_mbqm_double_rounding_differs_from_single_rounding_sometimes():
    # the default build rounds twice; the result is within 1 of the exact product and can differ
    # from a single rounding of x * M * 2^(shift-31)
    m, s = quantize_multiplier(0.1234)
    diffs = 0
    for x in range(-5000, 5000):
        exact = round_away(Fraction(x * m, 1 << (31 - s)))
        got = multiply_by_quantized_multiplier(x, m, s)
        assert abs(got - exact) <= 1
        diffs += got != exact
    assert diffs >= 0


def test_mbqm_per_channel_broadcast():
    mult = np.array([quantize_multiplier(r)[0] for r in (0.1, 0.02, 3.0)])
    shift = np.array([quantize_multiplier(r)[1] for r in (0.1, 0.02, 3.0)])
    acc = np.array([[100, 1000, 7], [-100, -1000, -7]])
    got = multiply_by_quantized_multiplier_array(acc, mult, shift)
    assert got.tolist() == [[10, 20, 21], [-10, -20, -21]]


def test_activation_range_quantized():
    # scale 0.1, zero point -10: 0 → -10, 6 → 50, -1 → -20, 1 → 0
    assert activation_range_quantized(0, 0.1, -10) == (-128, 127)
    assert activation_range_quantized(1, 0.1, -10) == (-10, 127)
    assert activation_range_quantized(3, 0.1, -10) == (-10, 50)
    assert activation_range_quantized(2, 0.1, -10) == (-20, 0)
    assert activation_range_quantized(3, 0.01, 0) == (0, 127)       # q(6) = 600 is clipped
    assert activation_range_quantized(4, 0.1, -10) == (-128, 127)   # TANH: no clamp


def test_round_half_away_is_not_numpy_round():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997], np.float32)
    assert quant.round_half_away(x).tolist() == [1, 2, 3, -1, -3, 0]
    assert np.round(x).tolist()[:3] == [0, 2, 2]


def test_libm_expf_available_or_fallback():
    v = quant.float_fn("expf", np.array([0.0, -1.0], np.float32))
    assert v[0] == 1.0 and abs(v[1] - math.exp(-1)) < 1e-6
