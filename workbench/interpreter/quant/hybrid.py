"""What the uint8 matrix kernels (legacy per-tensor multiplier) and the hybrid ("dynamic range") matrix
kernels share: run-time row quantization, row sums and float activations, in litert's x86 float order.
"""

from __future__ import annotations

import math

import numpy as np

from .fixed_point import quantize_multiplier
from .prepare import quant_params, round_half_away, tensor_scale_zp

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
# the last bit of many outputs).  Measured against ai-edge-litert 2.3.0
# (tests/interpreter/quant/test_quantized_hybrid.py);
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
    from ...errors import ModelError, UnsupportedOpError

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
    from ...errors import ModelError, UnsupportedOpError

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
