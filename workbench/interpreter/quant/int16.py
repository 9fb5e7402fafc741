"""Helpers of the matrix kernels with int16 activations and int8 weights ("16x8") and of the int8
TRANSPOSE_CONV / BATCH_MATMUL: the three requantization recipes, bias-type and symmetry checks.
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError
from .fixed_point import INT32_MAX, INT32_MIN, multiply_by_quantized_multiplier_array
from .prepare import quant_params, tensor_scale_zp

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

    The plain numpy form of :func:`workbench.interpreter.fast.requantize.requantize_int64_rows_jit`
    (``acc`` 2-D, exact integers)."""
    v = np.asarray(acc).astype(np.int64) + np.asarray(bias, np.int64)
    v = multiply_by_quantized_multiplier_int64_array(v, mult, shift) + out_zp
    out[...] = np.clip(v, lo, hi)


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
    return KernelError(f"{node.op_name} (node {node.index}): {message}")


def bias_type_16x8(node, context, b_t: int, params) -> tuple[str, str]:
    """TFLite's 16x8 bias checks (Prepare of conv.cc / fully_connected.cc / transpose_conv.cc).

    Returns (the bias's type: "int64" | "int32" | "none", the option: "unset" | "int32" | "int64").
    The option must be INT32, INT64 or absent (FLOAT32); anything else, also the 0 of a missing
    options table, fails TFLite's Prepare.  A set option must equal the bias type; the bias's zero
    point must be 0.
    """
    from ...errors import UnsupportedOpError

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
