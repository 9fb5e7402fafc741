"""What the recurrent kernels (LSTM family, RNNs, SVDF) share: the integer LSTM's saturating int16 steps
and layer normalisation, Eigen's float32 sigmoid / tanh, NEON-order float32 dot products and sums, and
the tensor_utils routines of TFLite's recurrent kernels (last section) as litert's x86 build runs them.
"""

from __future__ import annotations

import numpy as np

from .fixed_point import _wrap_int32, multiply_by_quantized_multiplier_array
from .hybrid import apply_float_activation, asymmetric_quantize_rows, symmetric_quantize_rows, wrap_int32
from .pooling import inv_sqrt_quantized_multiplier_exp
from .prepare import float_fn

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
#   equal (tests/interpreter/quant/test_quantized_rnn.py).

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
# Measured against ai-edge-litert 2.3.0 (tests/interpreter/quant/test_quantized_svdf_bidirectional.py): every bit equal.


def _lanes_then_tail_f32(terms: np.ndarray) -> np.ndarray:
    """Σ over the last axis of float32 ``terms`` in the NEON order above."""
    terms = np.asarray(terms, np.float32)                  # float32 arithmetic below stays float32
    n = terms.shape[-1]
    body = n - (n & 3)
    acc = np.zeros(terms.shape[:-1] + (4,), np.float32)
    for k in range(0, body, 4):
        acc = acc + terms[..., k:k + 4]
    total = acc[..., 0] + acc[..., 1] + acc[..., 2] + acc[..., 3]          # ((l0 + l1) + l2) + l3
    for k in range(body, n):
        total = total + terms[..., k]
    return total


def neon_dot_f32(a, b) -> np.ndarray:
    """Row-wise float32 dot products of ``a`` and ``b`` (same shape [..., n]) in the NEON order.

    >>> x = np.float32([[1e8, 1, 0, 0, -1e8, 1, 0, 0]])       # left to right in float32: 1.0
    >>> float(neon_dot_f32(x, np.ones_like(x))[0])
    2.0
    """
    return _lanes_then_tail_f32(np.asarray(a, np.float32) * np.asarray(b, np.float32))


def neon_reduction_sum_f32(x, reduction_size: int) -> np.ndarray:
    """``NeonReductionSumVector``: sums of consecutive groups of ``reduction_size`` float32 values of
    the flat ``x``, each in the NEON order; returns len(x) / reduction_size sums."""
    x = np.asarray(x, np.float32).reshape(-1, int(reduction_size))
    return _lanes_then_tail_f32(x)


# ----------------------------------------------------------------------------------------------
# tensor_utils: the vector routines TFLite's recurrent kernels are written in (lstm_eval.cc,
# kernel_utils.cc's RnnBatchStep, svdf.h).  TFLite has no reference version of these kernels: LiteRT's
# BUILTIN_REF resolver registers the same LSTM / RNN / SVDF kernels as BUILTIN, so both arithmetic
# variants compute what litert's x86 build computes -- NEON code through NEON_2_SSE for the float
# products, SSE for the int8 ones (quant.sse_row_sums), Eigen for sigmoid and tanh (above).


def matrix_batch_vector_multiply_accumulate(matrix, vectors, result) -> np.ndarray:
    """Float ``MatrixBatchVectorMultiplyAccumulate`` (``NeonMatrixBatchVectorMultiplyAccumulate``):
    result [B, R] + matrix [R, C] · vectors [B, C].  For every (b, r): four float32 lanes sum the
    products of the first 4·⌊C/4⌋ columns (column c goes to lane c mod 4), result += ((l0 + l1) + l2)
    + l3, then result += matrix[r, c] · vectors[b, c] for each remaining column, in order."""
    matrix = np.asarray(matrix, np.float32)                # float32 arithmetic below stays float32
    vectors = np.asarray(vectors, np.float32)
    rows, cols = matrix.shape
    products = vectors[:, None, :] * matrix                                      # [B, R, C]
    body = cols - cols % 4
    total = np.float32(0.0)                                                      # four lanes at +0.0
    if body:                                                                     # one float32 add at a time
        lanes = np.cumsum(products[..., :body].reshape(len(vectors), rows, body // 4, 4), axis=2,
                          dtype=np.float32)[:, :, -1]
        lanes = lanes + np.float32(0.0)                    # a lane starts at +0.0: 0 + (−0) is +0
        total = lanes[..., 0] + lanes[..., 1] + lanes[..., 2] + lanes[..., 3]      # ((l0 + l1) + l2) + l3
    out = np.asarray(result, np.float32) + total
    for c in range(body, cols):
        out = out + products[..., c]
    return out


def quantize_rows(v, asymmetric: bool):
    """``BatchQuantizeFloats``: each row of v [B, K] to int8 with its own scaling factor (and zero
    point when ``asymmetric``); returns (q, scaling_factors, zero_points) -- zero points 0 if symmetric."""
    if asymmetric:
        return asymmetric_quantize_rows(v)
    q, sf = symmetric_quantize_rows(v)
    return q, sf, np.zeros(len(sf), np.int32)


def hybrid_matrix_batch_vector_multiply_accumulate(result, quantized, matrix, matrix_scale, row_sums=None):
    """Int8 ``MatrixBatchVectorMultiplyAccumulate`` with scaling factors (the SSE kernel): for every
    (b, r), result += float32(Σ q[b]·matrix[r] − zp[b]·row_sums[r]) · float32(sf[b] · matrix_scale);
    the int32 dot product is exact, the zero-point term (given ``row_sums``: asymmetric inputs) wraps
    in int32."""
    q, sf, zp = quantized
    acc = q.astype(np.int64) @ matrix.astype(np.int64).T
    if row_sums is not None:
        acc = wrap_int32(acc - zp.astype(np.int64)[:, None] * row_sums[None, :])
    scale = sf * np.float32(matrix_scale)                                        # float32
    return result + acc.astype(np.float32) * scale[:, None]


def apply_activation_to_vector(v, code: int, address_floats: int = 0) -> np.ndarray:
    """``tensor_utils::ApplyActivationToVector`` on float32 values written ``address_floats`` floats after
    a 16-byte boundary: TANH and SIGMOID (code 6, the gates') are Eigen's (see :func:`eigen_apply_f32`),
    RELU / RELU_N1_TO_1 / RELU6 std::max / std::min, SIGN_BIT 1.0 for a set sign bit, NONE the values."""
    v = np.asarray(v, np.float32)
    if code == 4:
        return eigen_tanh_f32(v)
    if code == 6:
        return eigen_apply_f32("logistic", v, address_floats).reshape(v.shape)
    if code == 5:
        return np.signbit(v).astype(np.float32)
    return apply_float_activation(v, code)


def mean_stddev_normalization(v: np.ndarray) -> np.ndarray:
    """``MeanStddevNormalization`` on float32 rows: (v − mean) · 1/sqrt(variance + 1e-8), both sums
    taken left to right in float32."""
    n = np.float32(v.shape[-1])
    total = np.cumsum(v, axis=-1, dtype=np.float32)[..., -1:]
    mean = (total / n).astype(np.float32)
    diff = (v - mean).astype(np.float32)
    sq = np.cumsum((diff * diff).astype(np.float32), axis=-1, dtype=np.float32)[..., -1:]
    variance = (sq / n).astype(np.float32)
    inv = (np.float32(1.0) / np.sqrt((variance + np.float32(1e-8)).astype(np.float32))).astype(np.float32)
    return (diff * inv).astype(np.float32)


def cwise_clipping(v, limit: float) -> np.ndarray:
    """``CwiseClipping``: std::max(std::min(limit, v), −limit) in float32."""
    lim = np.float32(limit)
    m = np.where(v < lim, v, lim)
    return np.where(m < -lim, -lim, m).astype(np.float32)
