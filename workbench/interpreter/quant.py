"""Fixed-point arithmetic of TFLite's int8 kernels, written so a learner can follow every bit.

A quantized tensor stores integers ``q`` that stand for real numbers ``scale * (q - zero_point)``
(TFLITE_FACTS §4.1).  An int8 convolution therefore multiplies integers, adds them up in int32
and must then turn the int32 sum into the int8 output.  In real numbers the step is a
multiplication by ``M = input_scale * filter_scale / output_scale`` (a float, usually < 1).
TFLite never multiplies by a float at run time; instead it writes ``M`` once as

    M = m * 2^shift      with m an int32 "mantissa" in [2^30, 2^31)  (i.e. m / 2^31 in [0.5, 1))

(:func:`quantize_multiplier`) and applies it with two integer roundings
(:func:`multiply_by_quantized_multiplier`):

1. ``saturating_rounding_doubling_high_mul(x * 2^left, m)``: the high 32 bits of the 64-bit
   product ``2 * x * m``, rounded to nearest (this is ARM's ``VQRDMULH`` instruction);
2. ``rounding_divide_by_pot(…, right)``: a right shift that rounds to nearest, ties away from 0.

Every function exists twice: a scalar version on Python ints (exact, slow, easy to read and to
step through) and an array version on numpy int64 (``*_array``) that the kernels use.  The numba
versions (``*_jit``) are the same arithmetic inside compiled loops.

Sources (facts only): ``tensorflow/lite/kernels/internal/quantization_util.cc``, ``common.h``,
gemmlowp ``fixedpoint/fixedpoint.h``, ``tensorflow/lite/kernels/kernel_util.cc``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np

from ._jit import njit

__all__ = [
    "INT32_MIN", "INT32_MAX", "quantize_multiplier", "quantize_multiplier_smaller_than_one_exp",
    "quantize_multiplier_greater_than_one", "saturating_rounding_doubling_high_mul", "rounding_divide_by_pot",
    "multiply_by_quantized_multiplier", "multiply_by_quantized_multiplier_array", "round_half_away",
    "quantize_float", "activation_range_quantized", "quant_params", "libm_float",
]

INT32_MIN = -(2 ** 31)
INT32_MAX = 2 ** 31 - 1


# ----------------------------------------------------------------------------------------------
# real multiplier → (int32 mantissa, shift)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """Write ``real`` as ``multiplier * 2^(shift - 31)`` with an int32 ``multiplier`` in [2^30, 2^31).

    TFLite's ``QuantizeMultiplier`` (TFLITE_FACTS §4.2):

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
    "away from zero" as :func:`rounding_divide_by_pot` does.  The single overflow, INT32_MIN * INT32_MIN = 2^62 → 2^31, saturates
    to INT32_MAX.

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
    >>> multiply_by_quantized_multiplier(5, *quantize_multiplier(0.5)), multiply_by_quantized_multiplier(-5, *quantize_multiplier(0.5))
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


@njit
def mbqm_jit(x, multiplier, shift):
    """:func:`multiply_by_quantized_multiplier` for int64 scalars inside numba loops."""
    if shift > 0:
        x = x << shift
    a = x
    b = np.int64(multiplier)
    if a == -2147483648 and b == -2147483648:
        h = np.int64(2147483647)
    else:
        p = a * b
        if p >= 0:
            v = p + 1073741824
            h = v >> 31
        else:
            v = p + (1 - 1073741824)
            h = -((-v) >> 31)
    if shift < 0:
        e = -shift
        mask = (np.int64(1) << e) - 1
        rem = h & mask
        thr = mask >> 1
        if h < 0:
            thr += 1
        h = h >> e
        if rem > thr:
            h += 1
    return h


@njit
def requantize_rows_jit(acc, bias, mult, shift, out_zp, lo, hi, out, half_up):
    """out[r, c] = clamp(MBQM(acc[r, c] + bias[c], mult[c], shift[c]) + out_zp) for 2-D acc (any
    numeric dtype holding exact integers) and a 2-D int8 ``out``.  ``half_up`` selects the final
    rounding shift of ruy / NEON code (ties toward +inf) instead of gemmlowp's (ties away from zero).

    Written without branches in the inner loop so that it vectorizes: for a multiplier ≥ 0,
    SRDHM(x, m) = (x·m + 2^30) >> 31 exactly (the nudge 1 − 2^30 and C's truncating division give
    the same floor), and the rounding shift becomes adds, masks and compares.
    """
    rows, cols = acc.shape
    left = np.empty(cols, np.int64)
    right = np.empty(cols, np.int64)
    mask = np.empty(cols, np.int64)
    nudge = np.empty(cols, np.int64)
    for c in range(cols):
        sh = shift[c]
        left[c] = sh if sh > 0 else 0
        right[c] = -sh if sh < 0 else 0
        mask[c] = (np.int64(1) << right[c]) - 1
        nudge[c] = mask[c] - (mask[c] >> 1)        # 2^(right-1), or 0 when right == 0
    for r in range(rows):
        for c in range(cols):
            x = (np.int64(acc[r, c]) + bias[c]) << left[c]
            h = (x * mult[c] + 1073741824) >> 31
            if half_up:
                h = (h + nudge[c]) >> right[c]
            else:
                m = mask[c]
                rem = h & m
                thr = (m >> 1) + (h < 0)
                h = (h >> right[c]) + (rem > thr)
            v = h + out_zp
            v = min(max(v, lo), hi)
            out[r, c] = v


def requantize_rows(acc, bias, mult, shift, out_zp, lo, hi, out, half_up=False) -> None:
    """numpy twin of :func:`requantize_rows_jit` (the reference kernels use this)."""
    v = np.asarray(acc).astype(np.int64) + bias
    v = multiply_by_quantized_multiplier_array(v, mult, shift, half_up) + out_zp
    out[...] = np.clip(v, lo, hi)


# ----------------------------------------------------------------------------------------------
# float → quantized (how TFLite rounds)


def round_half_away(x) -> np.ndarray:
    """``std::round`` elementwise (ties away from zero), exact for float32 inputs.

    numpy's ``np.round`` rounds ties to even (2.5 → 2), which is *not* what TFLite does.  The work
    is done in float64 so that adding 0.5 to a float32 value is exact.
    """
    x = np.asarray(x)
    a = np.abs(x.astype(np.float64))
    return np.copysign(np.floor(a + 0.5), x.astype(np.float64))


def quantize_float(f, scale: float, zero_point: int) -> int:
    """``zero_point + (int32)round(f / scale)`` with the division in float32 (kernel_util.cc)."""
    q = np.float32(f) / np.float32(scale)
    return int(zero_point) + int(round_half_away(q))


def activation_range_quantized(code: int, scale: float, zero_point: int, qmin: int = -128,
                               qmax: int = 127) -> tuple[int, int]:
    """``CalculateActivationRangeQuantized``: the int clamp a fused activation becomes (§4.4).

    RELU → [max(qmin, q(0)), qmax]; RELU6 → [max(qmin, q(0)), min(qmax, q(6))];
    RELU_N1_TO_1 → [max(qmin, q(-1)), min(qmax, q(1))]; NONE (and TANH, SIGN_BIT) → [qmin, qmax].
    """
    code = int(code)
    if code == 1:
        return max(qmin, quantize_float(0.0, scale, zero_point)), qmax
    if code == 3:
        return max(qmin, quantize_float(0.0, scale, zero_point)), min(qmax, quantize_float(6.0, scale, zero_point))
    if code == 2:
        return max(qmin, quantize_float(-1.0, scale, zero_point)), min(qmax, quantize_float(1.0, scale, zero_point))
    return qmin, qmax


def quant_params(context, t: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(scales float32 array, zero points int32 array, quantized_dimension) of tensor ``t``."""
    q = context.tensor_meta(t).quantization
    scales = np.asarray(tuple(q.scale or ()) if q is not None else (), np.float32)
    zps = np.asarray(tuple(q.zero_point or ()) if q is not None else (), np.int64)
    if len(zps) == 0:
        zps = np.zeros(max(len(scales), 1), np.int64)
    if not np.isfinite(scales).all():
        from ..errors import ModelError
        raise ModelError(f"tensor '{context.name(t)}' has a quantization scale that is not a finite number "
                         f"({scales.tolist()[:8]})")
    return scales, zps, int(q.quantized_dimension or 0) if q is not None else 0


# ----------------------------------------------------------------------------------------------
# the C library's float functions (lookup tables are built with expf / tanhf, not numpy's exp)

_LIBM = None


def libm_float(name: str):
    """The C math library's float function ``name`` (e.g. "expf"), or None when not loadable.

    TFLite builds its int8 LUTs with ``std::exp`` / ``std::tanh`` on float; numpy's float32 ``exp``
    is a different implementation that can differ in the last bit, which can move an output by one.
    """
    global _LIBM
    if _LIBM is None:
        path = ctypes.util.find_library("m")
        try:
            _LIBM = ctypes.CDLL(path) if path else False
        except OSError:
            _LIBM = False
    if not _LIBM:
        return None
    fn = getattr(_LIBM, name, None)
    if fn is None:
        return None
    fn.restype = ctypes.c_float
    fn.argtypes = [ctypes.c_float]
    return fn


def float_fn(name: str, values: np.ndarray) -> np.ndarray:
    """Apply libm's float function (``expf``, ``tanhf``) elementwise; numpy float64 as a fallback."""
    values = np.asarray(values, np.float32)
    fn = libm_float(name)
    if fn is not None:
        return np.array([fn(float(v)) for v in values.reshape(-1)], np.float32).reshape(values.shape)
    np_fn = {"expf": np.exp, "tanhf": np.tanh}[name]
    return np_fn(values.astype(np.float64)).astype(np.float32)


# ----------------------------------------------------------------------------------------------
# what conv / depthwise / fully-connected prepare share


I8 = np.dtype(np.int8)


def per_channel_multipliers(input_scale: float, filter_scales, output_scale: float, channels: int):
    """``PopulateConvolutionQuantizationParams``: per output channel c,
    effective_scale[c] = (double)in_scale * (double)filter_scale[c] / (double)out_scale, then
    :func:`quantize_multiplier`.  A per-tensor filter (one scale) broadcasts to every channel.

    Returns (effective_scale float64 [C], output_multiplier int64 [C], output_shift int64 [C]).
    """
    fs = np.asarray(filter_scales, np.float32).reshape(-1)
    if len(fs) == 1:
        fs = np.repeat(fs, channels)
    if len(fs) != channels:
        from ..errors import ModelError
        raise ModelError(f"{len(fs)} filter scales for {channels} output channels (a per-channel quantized "
                         f"filter needs one scale per channel, or one for all)")
    eff = np.array([float(np.float64(np.float32(input_scale)) * np.float64(s) / np.float64(np.float32(output_scale)))
                    for s in fs], np.float64)
    pairs = [quantize_multiplier(e) for e in eff]
    return eff, np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)


def exact_float_dtype(weights_abs_colsum_max: float, input_abs_max: int = 128) -> np.dtype:
    """The cheapest float type in which a matrix product of int8 data is *exactly* the int sum.

    Every partial sum of Σ w·x is an integer with |value| ≤ max|x| · Σ|w| (in any order, with or
    without fused multiply-add).  Integers up to 2^24 are exact in float32, up to 2^53 in float64, so
    when ``input_abs_max * max_over_outputs(Σ|w|) < 2^24`` single-precision BLAS is exact.
    """
    return np.dtype(np.float32) if input_abs_max * weights_abs_colsum_max < 2 ** 24 else np.dtype(np.float64)


def tensor_scale_zp(context, t: int) -> tuple[float, int]:
    scales, zps, _ = quant_params(context, t)
    if len(scales) == 0:
        from ..errors import UnsupportedOpError
        raise UnsupportedOpError(f"tensor '{context.name(t)}' is {context.dtype(t)} without quantization parameters")
    if not scales[0] > 0:
        from ..errors import ModelError
        raise ModelError(f"tensor '{context.name(t)}' has quantization scale {float(scales[0])}; it must be > 0")
    return float(scales[0]), int(zps[0])


def lut_int8(input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int,
             transform) -> np.ndarray:
    """TFLite's ``LUTPopulate<int8_t>``: a 256-entry table indexed by the input byte (as uint8).

    For every int8 v: d = in_scale·(v − in_zp) (float32); y = transform(d) (float32);
    q = (int32)(round_half_away(y · (1/out_scale)) + out_zp) (float32), clamped to [−128, 127].
    ``transform`` maps a float32 array to float32 (built on libm's expf / tanhf, see :func:`float_fn`).
    """
    v = np.arange(-128, 128, dtype=np.int64)
    d = (np.float32(input_scale) * (v - int(input_zero_point)).astype(np.float32)).astype(np.float32)
    y = np.asarray(transform(d), np.float32)
    inv = np.float32(1.0) / np.float32(output_scale)
    r = round_half_away((y * inv).astype(np.float32)).astype(np.float32)
    q = (r + np.float32(output_zero_point)).astype(np.float32).astype(np.int64)
    table = np.empty(256, np.int8)
    table[(v & 0xFF)] = np.clip(q, -128, 127)
    return table


def logistic_f32(d: np.ndarray) -> np.ndarray:
    """1.0f / (1.0f + expf(-d)) in float32."""
    e = float_fn("expf", (-np.asarray(d, np.float32)).astype(np.float32))
    return (np.float32(1.0) / (np.float32(1.0) + e).astype(np.float32)).astype(np.float32)


def tanh_f32(d: np.ndarray) -> np.ndarray:
    """tanhf(d) in float32."""
    return float_fn("tanhf", d)


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


@njit
def mbqm_int64_jit(x, multiplier, shift):
    """:func:`multiply_by_quantized_multiplier_int64` inside numba loops (int64 scalars)."""
    if multiplier < 0x7FFF0000:
        reduced = (np.int64(multiplier) + 32768) >> 16
    else:
        reduced = np.int64(0x7FFF)
    total = 15 - shift
    v = (np.int64(x) * reduced + (np.int64(1) << (total - 1))) >> total
    return ((v + 2147483648) & 0xFFFFFFFF) - 2147483648


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


# ----------------------------------------------------------------------------------------------
# element-wise (uint8/int16)
#
# What the uint8 / int16 element-wise and activation kernels share: lookup tables built the way
# TFLite builds them (``LUTPopulate`` for 8-bit and for int16), gemmlowp's fixed-point functions
# on int16 / int32 raw values (vectorised on int64 numpy arrays), and a few integer helpers
# (CheckedLog2, count-leading-zeros, GetReciprocal).  Sources (facts only):
# ``tensorflow/lite/kernels/internal/common.h``, ``quantization_util.cc``, gemmlowp
# ``fixedpoint/fixedpoint.h``.

_LIBM_DOUBLE: dict = {}


def libm_apply(name: str, values, double: bool = False) -> np.ndarray:
    """The C library's ``name`` (``expf``, ``erfcf``, ``log`` ...) applied elementwise.

    ``double=False`` calls the float version on float32 values (what ``std::exp(float)`` runs);
    ``double=True`` the double one on float64 values.  TFLite builds its lookup tables with these
    functions, whose last bit can differ from numpy's own implementations.  Without a loadable libm
    numpy's float64 function is used (and rounded to float32 for the float case).
    """
    dt = np.float64 if double else np.float32
    values = np.asarray(values, dt)
    if name in ("sqrt", "sqrtf"):                     # IEEE square roots are correctly rounded everywhere
        with np.errstate(invalid="ignore"):
            return np.sqrt(values).astype(dt)
    fn = None
    if double:
        fn = _LIBM_DOUBLE.get(name)
        if fn is None and libm_float("expf") is not None:       # loads the library
            f = getattr(_LIBM, name, None)
            if f is not None:
                f.restype = ctypes.c_double
                f.argtypes = [ctypes.c_double]
                _LIBM_DOUBLE[name] = fn = f
    else:
        fn = libm_float(name)
    if fn is not None:
        return np.array([fn(float(v)) for v in values.reshape(-1)], dt).reshape(values.shape)
    import math
    base = name[:-1] if (not double and name.endswith("f")) else name
    np_fn = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh,
             "erfc": np.frompyfunc(math.erfc, 1, 1)}[base]
    return np.asarray(np_fn(values.astype(np.float64)), np.float64).astype(dt)


def lut_8bit(input_scale: float, input_zero_point: int, output_scale: float, output_zero_point: int,
             transform, dtype) -> np.ndarray:
    """TFLite's ``LUTPopulate<uint8_t / int8_t>``: 256 entries indexed by the input byte.

    For every input value v of ``dtype`` (uint8 or int8): d = in_scale·(v − in_zp) in float32;
    y = transform(d) (float32); q = (int32)(round_half_away(y · (1/out_scale)) + out_zp) with the
    additions in float32, clamped to the type.  The entry sits at index ``(uint8)v``, so an int8
    table is ordered 0..127, −128..−1 and is read with ``table[x.view(np.uint8)]``.
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
    q = float_to_int32(qf)
    table = np.empty(256, dtype)
    table[v & 0xFF] = np.clip(q, lo, hi)
    return table


def float_to_int32(x) -> np.ndarray:
    """``static_cast<int32_t>(float)`` as x86 does it: truncation, and INT32_MIN for NaN and for
    values outside the int32 range (the "integer indefinite" of cvttss2si)."""
    x = np.asarray(x, np.float64)
    ok = np.isfinite(x) & (x > -2147483649.0) & (x < 2147483648.0)
    out = np.full(x.shape, INT32_MIN, np.int64)
    out[ok] = np.trunc(x[ok]).astype(np.int64)
    return out


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
    lut[:512] = np.clip((sample - bias).astype(ft), -32768, 32767).astype(np.int16)
    last = round_half_away((np.asarray(transform(np.array([in_max], ft)), ft) * scaling_inv).astype(ft))
    lut[512] = np.int16(np.clip(last[0], -32768, 32767))
    return lut


def lut_lookup_int16(x, lut) -> np.ndarray:
    """TFLite's ``LUTLookup`` for int16: entry 256 + (x >> 7), plus the slope times the low 7 bits,
    rounded ((slope·offset + 64) >> 7), wrapped to int16."""
    x = np.asarray(x).astype(np.int64)
    index = 256 + (x >> 7)
    offset = x & 0x7F
    base = lut.astype(np.int64)[index]
    slope = lut.astype(np.int64)[index + 1] - base
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
    """A real number a kernel's prepare works with — an option (SOFTMAX's ``beta``, LEAKY_RELU's
    ``alpha``) or a float made from the scales — must be finite.  TFLite computes on with a NaN or
    an infinity (its float → int conversions are then undefined, litert writes whatever x86 makes of
    them); the workbench refuses with a ModelError that names the node and the value."""
    v = float(value)
    if not math.isfinite(v):
        from ..errors import ModelError
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
        from ..errors import ModelError
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
# 16x8 (int16 activations)
#
# Helpers of the matrix kernels with int16 activations and int8 weights ("16x8": CONV_2D,
# DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, BATCH_MATMUL) and of the int8
# TRANSPOSE_CONV / BATCH_MATMUL.  Which TFLite kernel runs decides how an integer sum becomes the
# output; there are three recipes (what litert runs on x86 was measured, see each kernel's
# docstring):
#
#   "int64"   reference kernels with an int64 accumulator: the int64 overload of
#             MultiplyByQuantizedMultiplier (multiplier cut to 16 bits, ONE rounding, ties up);
#   "int32"   an int32 accumulator that wraps around (ruy, NEON code, int32 reference kernels),
#             then the usual double rounding; its final rounding shift sends ties up (ruy, NEON
#             vrshl) or away from zero (reference / scalar code), which can differ per channel;
#   "double"  the reference FULLY_CONNECTED 16x8: round(acc · effective_scale) in double.

INT16_MIN = -(2 ** 15)
INT16_MAX = 2 ** 15 - 1


def wrap_int32_array(x) -> np.ndarray:
    """Keep the low 32 bits of int64 values, read as signed: what an int32 accumulator holds after
    it overflowed (two's complement wrap-around, as the hardware does)."""
    x = np.asarray(x, np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def multiply_by_quantized_multiplier_int64_array(x, multiplier, shift) -> np.ndarray:
    """:func:`multiply_by_quantized_multiplier_int64` on int64 arrays; multiplier/shift broadcast.

    reduced = (M + 2^15) >> 16 (0x7FFF when M ≥ 0x7FFF0000), then (x·reduced + 2^(14 − shift))
    >> (15 − shift) with an arithmetic (flooring) shift, kept as int32.  |x| < 2^47 keeps
    x·reduced inside int64.
    """
    x = np.asarray(x, np.int64)
    m = np.asarray(multiplier, np.int64)
    total = 15 - np.asarray(shift, np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, np.int64(0x7FFF))
    return wrap_int32_array((x * reduced + (np.int64(1) << (total - 1))) >> total)


def requantize_int64_rows(acc, bias, mult, shift, out_zp, lo, hi, out) -> None:
    """out[r, c] = clamp(MBQM_int64(acc[r, c] + bias[c], mult[c], shift[c]) + out_zp, lo, hi).

    The plain numpy form of :func:`requantize_int64_rows_jit` (``acc`` 2-D, exact integers)."""
    v = np.asarray(acc).astype(np.int64) + np.asarray(bias, np.int64)
    v = multiply_by_quantized_multiplier_int64_array(v, mult, shift) + out_zp
    out[...] = np.clip(v, lo, hi)


@njit
def requantize_int64_rows_jit(acc, bias, mult, shift, out_zp, lo, hi, out):
    """:func:`requantize_int64_rows` compiled: ``acc`` 2-D (int64, or floats holding exact integers
    from a BLAS product), ``bias`` int64 [C], ``out`` 2-D int16 (or int8)."""
    rows, cols = acc.shape
    reduced = np.empty(cols, np.int64)
    total = np.empty(cols, np.int64)
    nudge = np.empty(cols, np.int64)
    for c in range(cols):
        m = np.int64(mult[c])
        reduced[c] = (m + 32768) >> 16 if m < 0x7FFF0000 else np.int64(0x7FFF)
        total[c] = 15 - np.int64(shift[c])
        nudge[c] = np.int64(1) << (total[c] - 1)
    for r in range(rows):
        for c in range(cols):
            x = np.int64(acc[r, c]) + bias[c]
            v = (x * reduced[c] + nudge[c]) >> total[c]
            v = ((v + 2147483648) & 0xFFFFFFFF) - 2147483648 + out_zp
            out[r, c] = min(max(v, lo), hi)


def requantize_int32_rows(acc, bias, mult, shift, out_zp, lo, hi, out, up_channels: int) -> None:
    """The "int32" recipe in plain numpy: v = wrap32(acc + bias); double rounding with the final
    shift rounding ties up for channels c < ``up_channels`` and away from zero for the others;
    + out_zp; clamp.  ``acc`` is 2-D [rows, C] of exact integers."""
    v = wrap_int32_array(np.asarray(acc).astype(np.int64) + np.asarray(bias, np.int64))
    up = multiply_by_quantized_multiplier_array(v, mult, shift, True)
    away = multiply_by_quantized_multiplier_array(v, mult, shift, False)
    cols = v.shape[-1]
    res = np.where(np.arange(cols) < up_channels, up, away) + out_zp
    out[...] = np.clip(res, lo, hi)


@njit
def requantize_int32_rows_jit(acc, bias, mult, shift, out_zp, lo, hi, out, up_channels):
    """:func:`requantize_int32_rows` compiled (same arguments; ``acc`` int64 or exact floats).

    For a multiplier ≥ 0, SRDHM(x, m) = (x·m + 2^30) >> 31 (see :func:`requantize_rows_jit`); the
    left shift of a multiplier > 1 is done on int32 and wraps, as in TFLite."""
    rows, cols = acc.shape
    left = np.empty(cols, np.int64)
    right = np.empty(cols, np.int64)
    mask = np.empty(cols, np.int64)
    for c in range(cols):
        sh = np.int64(shift[c])
        left[c] = sh if sh > 0 else 0
        right[c] = -sh if sh < 0 else 0
        mask[c] = (np.int64(1) << right[c]) - 1
    for r in range(rows):
        for c in range(cols):
            x = np.int64(acc[r, c]) + bias[c]
            x = ((x + 2147483648) & 0xFFFFFFFF) - 2147483648
            x = x << left[c]
            x = ((x + 2147483648) & 0xFFFFFFFF) - 2147483648
            h = (x * np.int64(mult[c]) + 1073741824) >> 31
            m = mask[c]
            if c < up_channels:
                h = (h + (m - (m >> 1))) >> right[c]
            else:
                rem = h & m
                thr = (m >> 1) + (h < 0)
                h = (h >> right[c]) + (rem > thr)
            v = h + out_zp
            out[r, c] = min(max(v, lo), hi)


def round_half_away_double(x) -> np.ndarray:
    """C's ``round`` on doubles, exactly: to the nearest integer, halves away from zero.

    (``floor(|x| + 0.5)`` is not exact in double: 0.49999999999999994 + 0.5 rounds to 1.0.)
    """
    x = np.asarray(x, np.float64)
    t = np.trunc(x)
    return t + np.sign(x) * (np.abs(x - t) >= 0.5)


def scale_by_double(acc, effective_scale, out_zp, lo, hi) -> np.ndarray:
    """The "double" recipe: (int32)round((double)acc · effective_scale) + out_zp, clamped.

    ``effective_scale`` is double(input_scale)·double(filter_scale)/double(output_scale) (one per
    output channel, broadcast over the last axis).  A rounded value outside int32 becomes INT32_MIN,
    which is what converting an out-of-range double to int32 gives on x86 (cvttsd2si) — measured on
    litert: such outputs come out as the lowest int16.
    """
    v = round_half_away_double(np.asarray(acc).astype(np.float64) * np.asarray(effective_scale, np.float64))
    ok = (v >= INT32_MIN) & (v <= INT32_MAX)
    q = np.where(ok, v, INT32_MIN).astype(np.int64)
    return np.clip(q + out_zp, lo, hi)


def exact_matmul_dtype(input_abs_max: int, weights_abs_colsum_max: float):
    """The cheapest float type whose matrix product of integer data is exactly the integer sum, or
    None.  Every partial sum is bounded by ``input_abs_max · Σ|w|``; integers below 2^24 are exact
    in float32, below 2^53 in float64 (int16 × int8 data: float64 is exact while Σ|w| < 2^38)."""
    bound = float(input_abs_max) * float(weights_abs_colsum_max)
    if bound < 2 ** 24:
        return np.dtype(np.float32)
    if bound < 2 ** 53:
        return np.dtype(np.float64)
    return None


# what TFLite's parser stores for the quantized_bias_type option (runtime TfLiteType codes); FLOAT32
# is what an options table without the field gives, i.e. "not set"
BIAS_OPTION_NAMES = {1: "unset", 2: "int32", 4: "int64"}


def _kernel_error(node, message: str):
    from .kernels._elementwise import KernelError
    return KernelError(f"{node.op_name} (node {node.index}): {message}")


def bias_type_16x8(node, context, b_t: int, params) -> tuple[str, str]:
    """TFLite's 16x8 bias checks (Prepare of conv.cc / fully_connected.cc / transpose_conv.cc).

    Returns (the bias's type: "int64" | "int32" | "none", the option: "unset" | "int32" | "int64").
    The option must be INT32, INT64 or absent (FLOAT32); anything else, also the 0 of a missing
    options table, fails TFLite's Prepare.  A set option must equal the bias type; the bias's zero
    point must be 0.
    """
    from ..errors import UnsupportedOpError

    code = int(params.get("quantized_bias_type", 0))
    if code not in BIAS_OPTION_NAMES:
        raise _kernel_error(node, f"quantized_bias_type is TfLiteType {code}; TFLite's 16x8 kernels accept only "
                                  f"INT32 or INT64 there (or the field left out)")
    option = BIAS_OPTION_NAMES[code]
    if b_t < 0:
        return "none", option
    dt = context.dtype(b_t)
    if dt not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): bias '{context.name(b_t)}' is "
                                 f"{dt}; a 16x8 kernel takes an int64 or int32 bias")
    _, zps, _ = quant_params(context, b_t)
    if np.any(zps != 0):
        raise _kernel_error(node, f"bias zero point {zps.tolist()[:4]} is not 0 (TFLite requires 0)")
    name = "int64" if dt == np.dtype(np.int64) else "int32"
    if option not in ("unset", name):
        raise _kernel_error(node, f"the bias is {name} but quantized_bias_type says {option}; TFLite's Prepare "
                                  f"refuses the mismatch")
    return name, option


def symmetric_int16_scales(node, context, x_t: int, y_t: int) -> tuple[float, float]:
    """(input scale, output scale) of int16 activations, whose zero points must be 0 (TFLite: 'Quantization
    should be symmetric'; it refuses anything else in Prepare)."""
    in_s, in_zp = tensor_scale_zp(context, x_t)
    out_s, out_zp = tensor_scale_zp(context, y_t)
    if in_zp != 0 or out_zp != 0:
        raise _kernel_error(node, f"int16 input/output zero points are {in_zp}/{out_zp}; TFLite's int16 kernels "
                                  f"require 0 (symmetric quantization)")
    return in_s, out_s


def check_symmetric_filter(node, context, f_t: int) -> None:
    """int8 filters of CONV_2D / DEPTHWISE / TRANSPOSE_CONV must have every zero point 0 (TFLite's Prepare)."""
    _, zps, _ = quant_params(context, f_t)
    if np.any(zps != 0):
        raise _kernel_error(node, f"filter zero points {zps.tolist()[:4]} are not 0; TFLite requires symmetric "
                                  f"int8 weights here")


# ----------------------------------------------------------------------------------------------
# uint8 / hybrid (matrix ops)
#
# What the uint8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / TRANSPOSE_CONV kernels and the
# hybrid ("dynamic range": float32 activations, int8 weights, float32 output) FULLY_CONNECTED,
# CONV_2D, DEPTHWISE_CONV_2D and BATCH_MATMUL kernels share.
#
# uint8 graphs keep TFLite's legacy per-tensor multiplier: input_scale·filter_scale is a float32
# product, divided by the output scale in double (``GetQuantizedConvolutionMultipler``).
#
# A hybrid kernel quantizes its float input at run time, one row at a time (one row = one
# FULLY_CONNECTED / BATCH_MATMUL input vector, or one whole image of a CONV_2D / DEPTHWISE batch),
# computes int32 dot products with the int8 weights and scales them back to float.  Every float
# operation below happens in float32 in the order litert's x86 build performs it:
#
# * symmetric rows (``SymmetricQuantizeFloats``): range = max(|min|, |max|); scaling factor =
#   range / 127 and its inverse 127 / range (float32 divisions); q = round(x · inverse) clamped to
#   ±127; an all-zero row gives q = 0 and scaling factor 1;
# * asymmetric rows (``AsymmetricQuantizeFloats``): rmin = min(0, min x), rmax = max(0, max x);
#   scale = double(float32(rmax − rmin)) / 255; the zero point comes from whichever end has the
#   smaller error (−128 − rmin/scale or 127 − rmax/scale, in double), rounded half away from zero and
#   kept in [−128, 127]; the scaling factor is float32(scale), the inverse float32(1.0 / scale);
#   q = round(x · inverse) + zero point, clamped to [−128, 127];
# * the rounding of x · inverse is not the same everywhere in a row: litert's x86 kernels are the
#   NEON ones translated to SSE (NEON_2_SSE), which round the first 8·⌊K/8⌋ values of a row with
#   trunc(t ± 0.5) computed in float32 (so 0.49999997 becomes 1, not 0) and only the last K mod 8
#   values with std::round (:func:`neon_round_to_nearest`, :func:`round_half_away`);
# * the sums of the weight rows that asymmetric inputs need (``row_sums``) are added up by an SSE
#   routine in eight int16 lanes that wrap around (:func:`sse_row_sums`): for rows longer than about
#   2000 values they can differ from the true sums, and TFLite uses them as they are.
#
# The float tails are plain float32 products and sums, never fused into an FMA (an FMA would change
# the last bit of many outputs).  Measured against ai-edge-litert 2.3.0 (tests/test_quantized_hybrid.py);
# the portable C++ kernels (std::round everywhere) would round 0.49999997 differently.

def legacy_conv_multiplier(input_scale: float, filter_scale: float, output_scale: float) -> tuple[float, int, int]:
    """TFLite's uint8 ``GetQuantizedConvolutionMultipler``: real = float32(in_scale · filter_scale)
    / out_scale (the division in double), then :func:`quantize_multiplier`.

    Returns (real multiplier, output_multiplier, output_shift).  (Per-channel int8 uses
    :func:`per_channel_multipliers`, whose product is in double: the two can differ in the last bit.)
    """
    product = np.float32(input_scale) * np.float32(filter_scale)
    real = float(product) / float(np.float32(output_scale))
    m, s = quantize_multiplier(real)
    return real, m, s


def legacy_bias_scale_ok(input_scale: float, filter_scale: float, bias_scale: float, output_scale: float) -> bool:
    """The check TFLite's uint8 prepare makes on the bias: |in·filter − bias_scale| / out ≤ 0.02
    (products and quotient in double).  A model failing it does not load in TFLite."""
    product = float(np.float32(input_scale)) * float(np.float32(filter_scale))
    return abs(product - float(np.float32(bias_scale))) / float(np.float32(output_scale)) <= 0.02


def _round_half_away_exact(x: float) -> float:
    """C's round() on a double, exactly (floor, then compare the fraction)."""
    a = abs(x)
    r = math.floor(a)
    if a - r >= 0.5:
        r += 1.0
    return math.copysign(r, x)


def neon_round_to_nearest(t) -> np.ndarray:
    """x86 litert's ``RoundToNearest`` on float32 values: trunc(t + (t < 0 ? −0.5 : 0.5)), the sum in
    float32.  Equal to round-half-away-from-zero except where the sum itself rounds (0.49999997 → 1).

    >>> neon_round_to_nearest(np.float32([2.5, -2.5, 0.49999997, -0.49999997])).tolist()
    [3, -3, 1, -1]
    """
    t = np.asarray(t, np.float32)
    half = np.where(t < 0, np.float32(-0.5), np.float32(0.5)).astype(np.float32)
    return np.trunc((t + half).astype(np.float32)).astype(np.int64)


def _round_row(t: np.ndarray) -> np.ndarray:
    """A quantized row's rounding: NEON-style for the first 8·⌊K/8⌋ values, std::round for the rest."""
    k = t.shape[0]
    n = (k // 8) * 8
    out = np.empty(k, np.int64)
    out[:n] = neon_round_to_nearest(t[:n])
    out[n:] = round_half_away(t[n:]).astype(np.int64)
    return out


def symmetric_quantize_rows(x2d) -> tuple[np.ndarray, np.ndarray]:
    """TFLite's ``SymmetricQuantizeFloats`` on every row of ``x2d`` (see the section comment).

    Returns (q int8 [rows, K], scaling_factors float32 [rows]): row r stands for q[r] · scaling_factors[r].

    >>> q, s = symmetric_quantize_rows(np.float32([[127.0, 2.5, -1.0, 0.0]]))
    >>> q.tolist(), s.tolist()
    ([[127, 3, -1, 0]], [1.0])
    """
    x2d = np.asarray(x2d, np.float32)
    rows, k = x2d.shape
    q = np.zeros((rows, k), np.int8)
    sf = np.ones(rows, np.float32)
    for r in range(rows):
        if k == 0:
            continue
        rng = np.float32(max(abs(x2d[r].min()), abs(x2d[r].max())))
        if rng == 0:
            continue
        sf[r] = np.float32(rng / np.float32(127.0))
        inv = np.float32(np.float32(127.0) / rng)
        q[r] = np.clip(_round_row((x2d[r] * inv).astype(np.float32)), -127, 127)
    return q, sf


def asymmetric_quantize_rows(x2d) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TFLite's ``AsymmetricQuantizeFloats`` on every row of ``x2d`` (see the section comment).

    Returns (q int8 [rows, K], scaling_factors float32 [rows], input_offsets int32 [rows]): row r
    stands for (q[r] − input_offsets[r]) · scaling_factors[r].

    >>> q, s, z = asymmetric_quantize_rows(np.float32([[-28.0, 227.0, 0.5, 3.0]]))
    >>> q.tolist(), s.tolist(), z.tolist()
    ([[-128, 127, -99, -97]], [1.0], [-100])
    """
    x2d = np.asarray(x2d, np.float32)
    rows, k = x2d.shape
    q = np.zeros((rows, k), np.int8)
    sf = np.ones(rows, np.float32)
    zp = np.zeros(rows, np.int32)
    for r in range(rows):
        if k == 0:
            continue
        rmin = min(np.float32(0.0), x2d[r].min())
        rmax = max(np.float32(0.0), x2d[r].max())
        if rmin == rmax:
            continue
        scale = float(np.float32(rmax - rmin)) / 255.0
        from_min = -128.0 - float(rmin) / scale
        from_max = 127.0 - float(rmax) / scale
        err_min = 128.0 + abs(float(rmin) / scale)
        err_max = 127.0 + abs(float(rmax) / scale)
        zd = from_min if err_min < err_max else from_max
        z = -128 if zd <= -128.0 else (127 if zd >= 127.0 else int(_round_half_away_exact(zd)))
        sf[r] = np.float32(scale)
        zp[r] = z
        inv = np.float32(1.0 / float(sf[r]))
        q[r] = np.clip(_round_row((x2d[r] * inv).astype(np.float32)) + z, -128, 127)
    return q, sf, zp


@njit
def quantize_rows_jit(x2d, asymmetric, q, sf, zp):
    """:func:`symmetric_quantize_rows` / :func:`asymmetric_quantize_rows` in one compiled loop,
    writing into ``q`` (int8 [rows, K]), ``sf`` (float32 [rows]) and ``zp`` (int32 [rows])."""
    rows, k = x2d.shape
    n_vec = (k // 8) * 8
    for r in range(rows):
        sf[r] = np.float32(1.0)
        zp[r] = 0
        if k == 0:
            continue
        mn = x2d[r, 0]
        mx = x2d[r, 0]
        for i in range(1, k):
            v = x2d[r, i]
            if v < mn:
                mn = v
            if v > mx:
                mx = v
        if asymmetric:
            rmin = mn if mn < np.float32(0.0) else np.float32(0.0)
            rmax = mx if mx > np.float32(0.0) else np.float32(0.0)
            if rmin == rmax:
                for i in range(k):
                    q[r, i] = 0
                continue
            scale = np.float64(np.float32(rmax - rmin)) / 255.0
            from_min = -128.0 - np.float64(rmin) / scale
            from_max = 127.0 - np.float64(rmax) / scale
            err_min = 128.0 + abs(np.float64(rmin) / scale)
            err_max = 127.0 + abs(np.float64(rmax) / scale)
            zd = from_min if err_min < err_max else from_max
            if zd <= -128.0:
                z = -128
            elif zd >= 127.0:
                z = 127
            else:
                a = abs(zd)
                fl = np.floor(a)
                if a - fl >= 0.5:
                    fl += 1.0
                z = int(fl) if zd >= 0 else -int(fl)
            sf[r] = np.float32(scale)
            zp[r] = z
            inv = np.float32(1.0 / np.float64(sf[r]))
            lo = -128
            hi = 127
        else:
            amn = -mn if mn < np.float32(0.0) else mn
            amx = -mx if mx < np.float32(0.0) else mx
            rng = amx if amx > amn else amn
            if rng == np.float32(0.0):
                for i in range(k):
                    q[r, i] = 0
                continue
            sf[r] = rng / np.float32(127.0)
            inv = np.float32(127.0) / rng
            z = 0
            lo = -127
            hi = 127
        for i in range(k):
            t = x2d[r, i] * inv
            if i < n_vec:
                if t < np.float32(0.0):
                    s = t + np.float32(-0.5)
                else:
                    s = t + np.float32(0.5)
                v = int(s)
            else:
                a = abs(np.float64(t))
                fl = np.floor(a + 0.5)
                v = int(fl) if t >= 0 else -int(fl)
            v += z
            if v < lo:
                v = lo
            if v > hi:
                v = hi
            q[r, i] = v


def sse_row_sums(w2d) -> np.ndarray:
    """The row sums of an int8 matrix as litert's ``SseReductionSumVector`` computes them.

    Blocks of 16 values are added pairwise into eight int16 lanes (then one block of 8 into the same
    lanes); the lanes wrap around at ±2^15, are added up in int32, and the last (K mod 8) values are
    added one by one.  For K up to about 2000 this is the true sum; beyond, it can wrap — and TFLite
    uses the wrapped sums.

    >>> sse_row_sums(np.full((1, 4096), 127, np.int8)).tolist(), int(4096 * 127)
    ([-4096], 520192)
    """
    w = np.asarray(w2d).astype(np.int64)
    rows, k = w.shape
    n16 = k & ~15
    lanes = np.zeros((rows, 8), np.int64)
    if n16:
        lanes += w[:, :n16].reshape(rows, -1, 8, 2).sum(axis=(1, 3))
    col = n16
    if col < (k & ~7):
        lanes += w[:, col:col + 8]
        col += 8
    lanes = ((lanes + 32768) & 0xFFFF) - 32768          # int16 wrap-around (sum mod 2^16)
    return lanes.sum(axis=1) + w[:, col:].sum(axis=1)


def wrap_int32(x) -> np.ndarray:
    """int64 values wrapped to int32 the way C's int32 arithmetic wraps (two's complement)."""
    x = np.asarray(x, np.int64)
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def uint8_matrix_scales(node, context, x_t, w_t, b_t, y_t):
    """(in_s, in_zp, w_s, w_zp, out_s, out_zp, real, multiplier, shift) of a uint8 matrix op, with
    TFLite's checks: one weight scale (per-channel uint8 is refused: TFLite's uint8 kernels would use
    only the first), an int32 bias whose scale is close to in_s·w_s (``GetQuantizedConvolutionMultipler``)."""
    from ..errors import ModelError, UnsupportedOpError

    in_s, in_zp = tensor_scale_zp(context, x_t)
    out_s, out_zp = tensor_scale_zp(context, y_t)
    w_s, w_zp = tensor_scale_zp(context, w_t)
    for t, zp in ((x_t, in_zp), (w_t, w_zp), (y_t, out_zp)):
        if not 0 <= zp <= 255:
            raise ModelError(f"{node.op_name} (node {node.index}): uint8 tensor '{context.name(t)}' has zero point "
                             f"{zp}, outside [0, 255]")
    scales, _, _ = quant_params(context, w_t)
    if len(scales) > 1:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): uint8 weights with {len(scales)} scales; "
                                 f"TFLite's uint8 kernels are per-tensor (they would use only the first scale)")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.int32,), "bias")
        b_scales, _, _ = quant_params(context, b_t)
        if len(b_scales) and not legacy_bias_scale_ok(in_s, w_s, float(b_scales[0]), out_s):
            raise ModelError(f"{node.op_name} (node {node.index}): bias scale {float(b_scales[0]):.6g} is not "
                             f"input_scale·filter_scale = {in_s * w_s:.6g} (TFLite's prepare requires "
                             f"|difference| / output_scale ≤ 0.02)")
    real, m, s = legacy_conv_multiplier(in_s, w_s, out_s)
    return in_s, in_zp, w_s, w_zp, out_s, out_zp, real, m, s


def hybrid_filter_scales(node, context, w_t, channels: int, axis: int, what: str = "weights"):
    """(float32 scales [1] or [channels], per_channel) of a hybrid op's int8 weights.  Refused: no
    scale, a scale count that is neither 1 nor ``channels`` (on ``axis``), a non-zero weight zero point
    (hybrid kernels take the weights as symmetric)."""
    from ..errors import ModelError, UnsupportedOpError

    scales, zps, qdim = quant_params(context, w_t)
    if len(scales) == 0:
        raise ModelError(f"{node.op_name} (node {node.index}): int8 {what} '{context.name(w_t)}' have no "
                         f"quantization scale")
    if len(scales) > 1 and (len(scales) != channels or qdim != axis):
        raise ModelError(f"{node.op_name} (node {node.index}): {len(scales)} scales on axis {qdim} for int8 "
                         f"{what} with {channels} output channels on axis {axis}")
    if np.any(zps != 0):
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): int8 {what} with zero point "
                                 f"{zps.tolist()[:4]}; hybrid kernels take the weights as symmetric (zero point 0)")
    return np.asarray(scales, np.float32), len(scales) > 1


def std_max(x, lo):
    """``std::max(x, lo)`` elementwise on float32 (x is kept when equal or NaN)."""
    return np.where(x < lo, np.float32(lo), x).astype(np.float32)


def std_min(x, hi):
    """``std::min(x, hi)`` elementwise on float32 (x is kept when equal or NaN)."""
    return np.where(hi < x, np.float32(hi), x).astype(np.float32)


def apply_float_activation(x: np.ndarray, code: int) -> np.ndarray:
    """TFLite's ``ApplyActivationToVector`` (hybrid FULLY_CONNECTED): NONE leaves the values alone;
    RELU = std::max(0, x), RELU_N1_TO_1 = std::max(−1, std::min(x, 1)), RELU6 = std::max(0,
    std::min(x, 6)) — so −0 and NaN become 0 under RELU."""
    code = int(code)
    if code == 0:
        return x
    lo, hi = {1: (0.0, None), 2: (-1.0, 1.0), 3: (0.0, 6.0)}[code]
    m = x if hi is None else np.where(np.float32(hi) < x, np.float32(hi), x)
    return np.where(np.float32(lo) < m, m, np.float32(lo)).astype(np.float32)


# ----------------------------------------------------------------------------------------------
# recurrent (integer LSTM)
#
# What the quantized recurrent kernels (LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_
# LSTM, the RNNs, SVDF) share beyond the helpers above:
#
# * the integer ("8x8_16") LSTM's element-wise steps (TFLite's portable tensor_utils, which litert's
#   x86 build runs for these): int16 gate arithmetic that saturates after every addition, products
#   rounded by a power of two, a layer normalisation in integers;
# * the float activations of the hybrid LSTM.  TFLite applies sigmoid and tanh to a float vector
#   with Eigen (``array().logistic()`` / ``.tanh()``), which does not call the C library: tanh is a
#   [9/8] rational function of x (input clamped to ±7.90738964; the same arithmetic for a single
#   value and a 4-float SSE packet), and logistic is exp(x)/(1 + exp(x)) where a packet computes
#   exp(x/2) with a degree-5 polynomial and squares it, while a single value uses the C library's
#   expf.  Which values go through the single-value path depends on the output buffer's address:
#   Eigen handles values one by one until the address is 16-byte aligned, then 4 at a time, then the
#   rest one by one.  Measured against ai-edge-litert 2.3.0 (SSE4 build, no FMA): every float bit
#   equal (tests/test_quantized_rnn.py).

_EIGEN_TANH_P = (1.394553628e-8, 2.102733560e-5, 3.520756727e-3, 1.340216100e-1)
_EIGEN_TANH_Q = (8.015776984e-7, 3.326951409e-4, 2.597254514e-2, 4.673548340e-1, 1.0)
_EIGEN_TANH_CLAMP = 7.90738964080810547


def _horner_f32(x: np.ndarray, coefficients) -> np.ndarray:
    """c0·x^n + … + cn by Horner's rule, every multiplication and addition rounded to float32."""
    p = np.full(x.shape, np.float32(coefficients[0]), np.float32)
    for c in coefficients[1:]:
        p = ((p * x).astype(np.float32) + np.float32(c)).astype(np.float32)
    return p


def eigen_tanh_f32(x) -> np.ndarray:
    """Eigen's float tanh (``ptanh_float`` with EIGEN_FAST_MATH, no FMA): clamp to ±7.90738964,
    then x + x³·P(x²) over Q(x²)."""
    x = np.asarray(x, np.float32)
    c = np.float32(_EIGEN_TANH_CLAMP)
    xc = np.maximum(np.minimum(x, c), -c).astype(np.float32)
    x2 = (xc * xc).astype(np.float32)
    x3 = (x2 * xc).astype(np.float32)
    p = ((x3 * _horner_f32(x2, _EIGEN_TANH_P)).astype(np.float32) + xc).astype(np.float32)
    return (p / _horner_f32(x2, _EIGEN_TANH_Q)).astype(np.float32)


def eigen_logistic_packet_f32(x) -> np.ndarray:
    """Eigen's float logistic on a packet: e = exp(min(x, 16.6355324)/2)² by Cephes' range reduction
    and a degree-5 polynomial, then e / (1 + e); below −104 the result is 0."""
    x = np.asarray(x, np.float32)
    f = np.float32
    h = (np.minimum(x, f(16.6355324)) * f(0.5)).astype(np.float32)
    m = np.floor(((h * f(1.44269504088896341)).astype(np.float32) + f(0.5)).astype(np.float32))
    r = ((m * f(-0.693359375)).astype(np.float32) + h).astype(np.float32)
    r = ((m * f(2.12194440e-4)).astype(np.float32) + r).astype(np.float32)
    r2 = (r * r).astype(np.float32)
    p_even = ((r2 * f(4.1898667812347412109375e-2)).astype(np.float32) + f(0.49999141693115234375)).astype(np.float32)
    p_odd = ((r2 * f(8.33471305668354034423828125e-3)).astype(np.float32) + f(0.16666877269744873046875)).astype(
        np.float32)
    p = ((r * p_odd).astype(np.float32) + p_even).astype(np.float32)
    p = ((r2 * p).astype(np.float32) + (r + f(1.0)).astype(np.float32)).astype(np.float32)
    e = np.ldexp(p, m.astype(np.int32)).astype(np.float32)
    e = (e * e).astype(np.float32)
    return np.where(x < f(-104.0), f(0.0), (e / (f(1.0) + e)).astype(np.float32)).astype(np.float32)


def eigen_logistic_scalar_f32(x) -> np.ndarray:
    """Eigen's float logistic on a single value: e = expf(min(x, 16.6355324)) (the C library), e / (1 + e)."""
    x = np.asarray(x, np.float32)
    e = float_fn("expf", np.minimum(x, np.float32(16.6355324)))
    return (e / (np.float32(1.0) + e)).astype(np.float32)


def eigen_apply_f32(name: str, x, address_floats: int = 0) -> np.ndarray:
    """Apply Eigen's ``tanh`` or ``logistic`` to a flat float32 vector written to a buffer that starts
    ``address_floats`` floats after a 16-byte boundary: the values before the first aligned slot and
    after the last whole packet of 4 take the single-value path (only logistic differs there)."""
    x = np.asarray(x, np.float32).reshape(-1)
    if name == "tanh":
        return eigen_tanh_f32(x)
    out = eigen_logistic_packet_f32(x)
    n = x.shape[0]
    head = min((-int(address_floats)) % 4, n)
    body = ((n - head) // 4) * 4
    scalar = np.zeros(n, bool)
    scalar[:head] = True
    scalar[head + body:] = True
    if scalar.any():
        out[scalar] = eigen_logistic_scalar_f32(x[scalar])
    return out


def saturate_int16(x) -> np.ndarray:
    return np.clip(np.asarray(x, np.int64), -32768, 32767)


def lstm_layer_norm_int16(x, weights, bias, scale_a: int, scale_b: int, variance_guard: int) -> np.ndarray:
    """TFLite's integer ``ApplyLayerNorm`` on int16 rows [batch, n] (int64 arrays in and out).

    mean = ⌊Σx·1024 / n⌋ (C division), variance = (Σx²·⌊2^20/n⌋ − mean²) / 2^20 (C division; below
    1 it becomes ``variance_guard``), 1/sqrt(variance) as a quantized multiplier
    (:func:`inv_sqrt_quantized_multiplier_exp`), then per value: MBQM(1024·x − mean) · weight + bias
    (int32 arithmetic), divided by 1024 rounding half away from zero, MBQM(·, scale_a, scale_b + 12),
    saturated to int16.
    """
    x = np.asarray(x, np.int64)
    rows, n = x.shape
    w = np.asarray(weights, np.int64)
    b = np.asarray(bias, np.int64)
    out = np.empty_like(x)
    temp = (1 << 20) // n
    for r in range(rows):
        s = int(x[r].sum())
        s2 = int((x[r] * x[r]).sum())
        mean = _c_div(s * 1024, n)
        variance = s2 * temp - mean * mean
        v2 = _c_div(variance, 1 << 20)
        v2 = _wrap_int32(v2)
        if v2 < 1:
            v2 = int(variance_guard)
        inv_a, inv_b = inv_sqrt_quantized_multiplier_exp(v2, -1)
        shifted = wrap_int32(1024 * x[r] - mean)
        rescaled = multiply_by_quantized_multiplier_array(shifted, inv_a, inv_b)
        val3 = wrap_int32(wrap_int32(rescaled * w) + b)
        val4 = np.where(val3 > 0, (val3 + 512) // 1024, -((-(val3 - 512)) // 1024))
        val5 = multiply_by_quantized_multiplier_array(val4, scale_a, scale_b + 12)
        out[r] = saturate_int16(val5)
    return out


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncation toward zero)."""
    q = abs(int(a)) // abs(int(b))
    return q if (a >= 0) == (b > 0) else -q


# ----------------------------------------------------------------------------------------------
# recurrent (hybrid, more)
#
# What the float and hybrid SVDF add: float32 dot products and sums as litert's x86 build computes them.  Its
# NEON routines (run through NEON_2_SSE) keep four float32 partial sums: element k of a row goes to
# lane k mod 4 for the first 4·⌊n/4⌋ elements, the lanes are added as ((l0 + l1) + l2) + l3, and the
# last n mod 4 elements are added one by one.  Products and sums are rounded to float32 separately
# (no FMA).  ``NeonVectorVectorDotProduct`` (the SVDF's state · weights_time), the float
# ``NeonMatrixBatchVectorMultiplyAccumulate`` (weights_feature · input) and ``NeonReductionSumVector``
# (the sum of ``rank`` filters into one unit) follow this order.
# Measured against ai-edge-litert 2.3.0 (tests/test_quantized_rnn_more.py): every bit equal.


def _lanes_then_tail_f32(terms: np.ndarray) -> np.ndarray:
    """Σ over the last axis of float32 ``terms`` in the NEON order above."""
    terms = np.asarray(terms, np.float32)
    n = terms.shape[-1]
    body = n - (n & 3)
    acc = np.zeros(terms.shape[:-1] + (4,), np.float32)
    for k in range(0, body, 4):
        acc = (acc + terms[..., k:k + 4]).astype(np.float32)
    total = (((acc[..., 0] + acc[..., 1]).astype(np.float32) + acc[..., 2]).astype(np.float32)
             + acc[..., 3]).astype(np.float32)
    for k in range(body, n):
        total = (total + terms[..., k]).astype(np.float32)
    return total


def neon_dot_f32(a, b) -> np.ndarray:
    """Row-wise float32 dot products of ``a`` and ``b`` (same shape [..., n]) in the NEON order.

    >>> x = np.float32([[1e8, 1, 0, 0, -1e8, 1, 0, 0]])       # left to right in float32: 1.0
    >>> float(neon_dot_f32(x, np.ones_like(x))[0])
    2.0
    """
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    return _lanes_then_tail_f32((a * b).astype(np.float32))


def neon_reduction_sum_f32(x, reduction_size: int) -> np.ndarray:
    """``NeonReductionSumVector``: sums of consecutive groups of ``reduction_size`` float32 values of
    the flat ``x``, each in the NEON order; returns len(x) / reduction_size sums."""
    x = np.asarray(x, np.float32).reshape(-1, int(reduction_size))
    return _lanes_then_tail_f32(x)
