"""What SOFTMAX and LOG_SOFTMAX share: their arithmetic over the rows of the last axis, per build.

float32 — ``Variant.float_activations``:

* "libm" (``reference_ops::Softmax`` / ``LogSoftmax``): m = the row maximum (``std::max`` from the
  lowest float: a NaN never wins); e = expf(z), z = (x − m)·beta; sum = Σ e left to right;
  SOFTMAX e / sum, LOG_SOFTMAX z − logf(sum).
* "eigen" (``optimized_ops``, Eigen expressions; matched bit for bit on ai-edge-litert 2.3.0,
  tests/interpreter/test_float_softmax_bitexact.py): Eigen works on packets of 4 floats.  exp is
  Eigen's polynomial packet exp on a packet and the C library's expf on a single value: SOFTMAX
  runs it over the whole tensor (the first 4·⌊N/4⌋ values take the packet), LOG_SOFTMAX over each
  row.  A sum of n values whose first lies ``head`` floats before a 16-byte boundary
  (:func:`eigen_sums`): the packets after the head folded into two accumulators (packets 0, 2, 4 …
  and 1, 3, 5 …), combined, an odd last packet added, the lanes folded as (l0 + l2) + (l1 + l3),
  then the head and the tail values one by one.  Tensor buffers are 16-byte aligned, so row r of
  a flat SOFTMAX input starts r·n floats in; LOG_SOFTMAX sums a row expression (head 0).  SOFTMAX
  then multiplies by 1 / sum.  A row holding a NaN comes out all NaN (payloads not matched); a
  negative beta can make z large, where the packet exp saturates near 3.4e38 and expf gives inf.
  This is litert's default single thread: with ``num_threads`` > 1 litert shares SOFTMAX's rows
  among threads and the values at the edges of each piece take expf (on 61×37 inputs 2 / 5
  outputs change with 2 / 4 threads) — not modelled.

uint8 / int8 inputs — ``Variant.softmax_8bit``:

* "float-table" (``optimized_ops::Softmax`` / ``LogSoftmax``): prepare fills
  T[255 − k] = expf(−in_scale·beta·k) (``PopulateSoftmaxLookupTable``, :func:`softmax_table`); a
  row reads exp(x − max) as T[255 − max + x] and sums it in float32, left to right.
* "fixed-point" (``reference_ops::Softmax<In, Out>`` / ``LogSoftmax``, gemmlowp): prepare turns
  in_scale·beta into a multiplier for Q5.26 differences (``PreprocessSoftmaxScaling``,
  :func:`softmax_input_scaling`); differences below ``diff_min`` count as exp = 0; the others go
  through ``exp_on_negative_values``; the sum is Q12.19.
"""

from __future__ import annotations

import numpy as np

from .. import quant
from ._unary import eigen_exp_packet_f32, libm_f32

F32 = np.float32
LANES = 4
LOWEST = np.finfo(np.float32).min


# ----------------------------------------------------------------------------------------------
# float32


def row_max_std(rows: np.ndarray) -> np.ndarray:
    """max over each row as ``std::max`` from the lowest float: a NaN never wins."""
    return np.fmax.reduce(rows, axis=1, keepdims=True, initial=LOWEST)


def eigen_exp(z: np.ndarray, packet_end: int) -> np.ndarray:
    """exp of the flat float32 z: Eigen's packet exp on z[:packet_end], expf on the rest."""
    z = np.asarray(z, F32).reshape(-1)
    return np.concatenate([eigen_exp_packet_f32(z[:packet_end]), libm_f32("expf", z[packet_end:])]).astype(F32)


def _eigen_sum_head(v: np.ndarray, head: int) -> np.ndarray:
    """Eigen's sum of each row of v (rows, n), every row ``head`` values before its first packet."""
    rows, n = v.shape
    head = min(head, n)
    body = (n - head) // LANES * LANES
    if body == 0:                                   # no whole packet: one value at a time
        return np.cumsum(v, axis=1, dtype=F32)[:, -1]
    packets = v[:, head:head + body].reshape(rows, body // LANES, LANES)
    paired = body // (2 * LANES) * 2                # packets folded in two accumulators
    if paired == 0:
        acc = packets[:, 0]
    else:                                           # cumsum: float32, one addition after the other
        acc = (np.cumsum(packets[:, 0:paired:2], axis=1, dtype=F32)[:, -1]
               + np.cumsum(packets[:, 1:paired:2], axis=1, dtype=F32)[:, -1]).astype(F32)
        if packets.shape[1] > paired:
            acc = (acc + packets[:, -1]).astype(F32)
    lanes = ((acc[:, 0] + acc[:, 2]).astype(F32) + (acc[:, 1] + acc[:, 3]).astype(F32)).astype(F32)
    rest = np.concatenate([lanes[:, None], v[:, :head], v[:, head + body:]], axis=1)
    return np.cumsum(rest, axis=1, dtype=F32)[:, -1]


def eigen_sums(v: np.ndarray, flat_rows: bool) -> np.ndarray:
    """Eigen's sum of each row of the float32 matrix v; ``flat_rows``: row r starts r·n floats
    into an aligned buffer (else every row starts aligned)."""
    rows, n = v.shape
    if not flat_rows:
        return _eigen_sum_head(v, 0)
    heads = (-np.arange(rows) * n) % LANES
    out = np.empty(rows, F32)
    for head in np.unique(heads):
        out[heads == head] = _eigen_sum_head(v[heads == head], int(head))
    return out


def softmax_float_eigen(x: np.ndarray, beta: float) -> np.ndarray:
    """``optimized_ops::Softmax`` on float32: e · (1 / Eigen sum), exp split over the whole tensor."""
    rows = np.asarray(x, F32).reshape(-1, x.shape[-1])
    with np.errstate(all="ignore"):
        z = ((rows - rows.max(axis=1, keepdims=True)).astype(F32) * F32(beta)).astype(F32)
        e = eigen_exp(z, z.size - z.size % LANES).reshape(rows.shape)
        inv = (F32(1) / eigen_sums(e, flat_rows=True)).astype(F32)
        return (e * inv[:, None]).astype(F32).reshape(x.shape)


def log_softmax_float_eigen(x: np.ndarray) -> np.ndarray:
    """``optimized_ops::LogSoftmax`` on float32: (x − m) − logf(Eigen sum of exp(x − m)), the exp
    split per row."""
    n = x.shape[-1]
    rows = np.asarray(x, F32).reshape(-1, n)
    with np.errstate(all="ignore"):
        z = (rows - rows.max(axis=1, keepdims=True)).astype(F32)
        packet = n - n % LANES
        e = np.concatenate([eigen_exp_packet_f32(z[:, :packet]).reshape(len(z), packet),
                            libm_f32("expf", z[:, packet:])], axis=1).astype(F32)
        log_sum = libm_f32("logf", eigen_sums(e, flat_rows=False))
        return (z - log_sum[:, None]).astype(F32).reshape(x.shape)


def softmax_float_libm(x: np.ndarray, beta: float) -> np.ndarray:
    """``reference_ops::Softmax`` on float32: expf((x − m)·beta), summed left to right, e / sum."""
    rows = np.asarray(x, F32).reshape(-1, x.shape[-1])
    with np.errstate(all="ignore"):
        e = libm_f32("expf", ((rows - row_max_std(rows)).astype(F32) * F32(beta)).astype(F32))
        return (e / np.cumsum(e, axis=1, dtype=F32)[:, -1:]).astype(F32).reshape(x.shape)


def log_softmax_float_libm(x: np.ndarray) -> np.ndarray:
    """``reference_ops::LogSoftmax`` on float32: (x − m) − logf(Σ expf(x − m)), left to right."""
    rows = np.asarray(x, F32).reshape(-1, x.shape[-1])
    with np.errstate(all="ignore"):
        z = (rows - row_max_std(rows)).astype(F32)
        log_sum = libm_f32("logf", np.cumsum(libm_f32("expf", z), axis=1, dtype=F32)[:, -1:])
        return (z - log_sum).astype(F32).reshape(x.shape)


# ----------------------------------------------------------------------------------------------
# uint8 / int8 inputs: the float table


def softmax_table(input_scale: float, beta: float) -> np.ndarray:
    """``PopulateSoftmaxLookupTable``: scale = −in_scale·beta (float32), table[255 − v] = expf(scale·v)."""
    with np.errstate(over="ignore", invalid="ignore"):     # absurd scales / betas: ±inf and NaN as in C
        scale = F32(-F32(input_scale) * F32(beta))
        v = np.arange(256, dtype=F32)
        table = np.empty(256, F32)
        table[255 - np.arange(256)] = libm_f32("expf", (scale * v).astype(F32))
    return table


def table_exps(x: np.ndarray, table: np.ndarray):
    """(rows as int64, row maxima, T[255 − max + x], Σ of each row in float32 left to right)."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    mx = rows.max(axis=1, keepdims=True)
    t = table[255 - mx + rows]
    with np.errstate(over="ignore", invalid="ignore"):
        return rows, mx, t, np.cumsum(t, axis=1, dtype=F32)[:, -1]


# ----------------------------------------------------------------------------------------------
# uint8 / int8 inputs: gemmlowp fixed point (the reference kernels)

SCALED_DIFF_BITS = 5                 # the differences are Q5.26
ACCUMULATION_BITS = 12               # the sum of the exps is Q12.19
INT32_MAX, INT32_MIN = (1 << 31) - 1, -(1 << 31)


def softmax_input_scaling(input_scale: float, beta: float) -> tuple[int, int, int]:
    """``PreprocessSoftmaxScaling`` (5 integer bits) and ``CalculateInputRadius``: (input_multiplier,
    input_left_shift, diff_min), the multiplier of min(beta·in_scale·2^26, 2^31 − 1) in double."""
    with np.errstate(over="ignore", invalid="ignore"):
        real = min(float(np.float64(beta) * np.float64(F32(input_scale)) * 2.0 ** 26), 2.0 ** 31 - 1)
    multiplier, shift = quant.quantize_multiplier_x86(real)
    radius = np.floor((2 ** SCALED_DIFF_BITS - 1) * 2.0 ** (31 - SCALED_DIFF_BITS) / 2.0 ** shift)
    return multiplier, shift, -int(radius)


def _shl(x, shift: int):
    """x · (1 << shift) in int32 (the left shift of MultiplyByQuantizedMultiplierGreaterThanOne)."""
    return quant.wrap_bits(np.asarray(x, np.int64) * quant.wrap_bits(np.int64(1) << (shift & 31), 32), 32)


def scaled_exps(rows: np.ndarray, multiplier: int, shift: int, diff_min: int):
    """(differences x − max, mask of those ≥ diff_min, the kept ones rescaled to Q5.26
    (``MultiplyByQuantizedMultiplierGreaterThanOne``), their exp in Q0.31)."""
    diff = rows - rows.max(axis=1, keepdims=True)
    keep = diff >= diff_min
    rescaled = quant.fp_srdhm(_shl(np.where(keep, diff, 0), shift), multiplier, 32)
    return diff, keep, rescaled, quant.fp_exp_on_negative_values(rescaled, SCALED_DIFF_BITS, 32)


def sum_of_exps(keep: np.ndarray, exps: np.ndarray) -> np.ndarray:
    """Σ Rescale<12>(exp) over the kept values of each row (Q12.19)."""
    return np.where(keep, quant.rounding_divide_by_pot_array(exps, ACCUMULATION_BITS), 0).sum(axis=1, keepdims=True)


def _sat(v):
    return np.clip(v, INT32_MIN, INT32_MAX)


def _sat_shl(x, exponent):
    """``SaturatingRoundingMultiplyByPOTParam`` for exponents ≥ 0 (per element)."""
    x, exponent = np.asarray(x, np.int64), np.asarray(exponent, np.int64)
    return _sat(x << exponent)


def log_x_ge_1(x, input_bits: int = ACCUMULATION_BITS, output_bits: int = SCALED_DIFF_BITS) -> np.ndarray:
    """``log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>``: log of a Q12.19 value (≥ 1) as Q5.26,
    from the leading zeros and a rational approximation on [1/sqrt 2, sqrt 2) in Q0.31."""
    srdhm = lambda a, b: quant.fp_srdhm(a, b, 32)                           # noqa: E731
    accum_bits = output_bits + 1
    log_2, sqrt_sqrt_half, sqrt_half, one_quarter = 1488522236, 1805811301, 1518500250, 536870912
    alpha_n, alpha_d, alpha_i, alpha_f = 117049297, 127690142, 1057819769, 638450708
    shifted_quarter = quant.rounding_divide_by_pot(one_quarter, accum_bits)
    z_a = np.asarray(x, np.int64)
    za_head = quant.count_leading_zeros32(z_a)
    r_a = _sat_shl(srdhm(_sat_shl(z_a, za_head - 1), sqrt_half), 1)
    za_adj = _sat(_sat_shl(input_bits - za_head, 31 - accum_bits) + shifted_quarter)
    z_b = srdhm(z_a, sqrt_half)
    zb_head = quant.count_leading_zeros32(z_b) - 1
    r_b = _sat_shl(z_a, zb_head)
    zb_adj = _sat(_sat_shl(input_bits - zb_head, 31 - accum_bits) - shifted_quarter)
    r = np.minimum(r_a, r_b)
    z_adj = np.maximum(za_adj, zb_adj)
    t = r + sqrt_sqrt_half                                            # RoundingHalfSum(r, sqrt_sqrt_half):
    t = t + np.where(t >= 0, 1, -1)                                   # (sum ± 1) / 2, C's division
    p = np.where(t >= 0, t >> 1, -((-t) >> 1))
    q = quant.wrap_bits(2 * (r - sqrt_sqrt_half), 32)
    sq = srdhm(q, q)
    num = quant.wrap_bits(srdhm(q, r) + srdhm(srdhm(q, sq), alpha_n), 32)
    inner = quant.wrap_bits(alpha_i + q + srdhm(alpha_d, sq), 32)
    denom_minus_one = quant.wrap_bits(srdhm(p, inner) + srdhm(alpha_f, q), 32)
    recip = quant.fp_one_over_one_plus_x(denom_minus_one, 32)
    num_scaled = quant.rounding_divide_by_pot_array(num, accum_bits)
    total = quant.wrap_bits(srdhm(z_adj, log_2) + srdhm(num_scaled, recip), 32)
    return quant.fp_rescale(total, accum_bits, output_bits, 32)
