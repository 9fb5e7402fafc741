"""SOFTMAX over the last axis — float32 and uint8 (v1), int8 (v2), int16 (v3), float16 (v4).

float32 (``optimized_ops::Softmax``, an Eigen expression over the tensor seen as one column per row;
matched bit for bit on ai-edge-litert 2.3.0, every beta, rows of 1 to 1000, 1-D to 4-D; see the
float32 section below and tests/interpreter/test_float_softmax_bitexact.py): per row m = Eigen's max of the row;
z = (x − m) · beta (beta rounded to float32, the difference rounded first); e = exp(z), where the
first 4·⌊N/4⌋ values of the whole tensor take Eigen's polynomial packet exp and the last N mod 4
the C library's expf; s = Eigen's sum of the row's e (packets of 4 in two accumulators, the values
before the row's first 16-byte-aligned slot and after its last whole packet added one by one at
the end); out = e · (1/s) — a reciprocal, then a product, not a division.  A row holding a NaN
comes out all NaN (which NaN payload / sign each output gets is not matched); a row of −inf gives
NaNs (−inf − (−inf)), an +inf in a row NaNs; a negative beta can make z large: the packet exp
saturates near 3.4e38 (finite) where expf gives inf.  This is litert's default single thread: with
``num_threads`` > 1 litert shares the rows among threads and the values at the edges of each piece
take expf (on 61×37 inputs 2 / 5 outputs change with 2 / 4 threads) — not modelled here.

``beta`` comes from TFLite's parser view: an absent options table makes it 0 (every output equal).
Float softmax computes with a NaN or infinite beta as IEEE arithmetic does (NaN outputs).  So do the
quantized ones, as litert's x86 build does (measured on ai-edge-litert 2.3.0, every input / output
pair, beta NaN / ±inf / ±1e38, input scale · beta beyond float32; tests/interpreter/quant/test_quantized_edge_parameters.py):
  * uint8 / int8 inputs: the float table holds NaN (expf(NaN), expf(±inf · 0)), so does every row
    sum, and the output step converts NaN — and anything outside int32 — to INT32_MIN
    (:func:`quant.softmax_output_int32_x86`); the zero point is then added in int32, so int8 → int8
    gives 127 everywhere (INT32_MIN − 128 wraps), → int16 −32768 and uint8 → uint8 0.  A huge
    negative beta gives inf entries, an infinite sum and inf · 0 = NaN for the non-maximum values.
  * int16: a NaN / infinite in_scale·beta makes the input multiplier (0, 0)
    (:func:`quant.quantize_multiplier_x86`): every row reads exp(0) and each output is
    round(32768 / row length).
An int16 input multiplier of 2^31 or more (absurd input scales or betas) is computed as litert's
x86 build does: the left shift by 32 or more counts modulo 32 and x·2^shift + 32767 wraps in int32
(measured on 2.3.0 for input scales up to 3e38).

Quantized types: uint8 → uint8, uint8 → int16, int8 → int8, int8 → int16 and int16 → int16 (the
pairs ``activations.cc`` SoftmaxEval takes).

uint8 / int8 inputs: TFLite's default CPU kernel, not the fixed-point reference (TFLITE_FACTS §4.9
#2).  Prepare fills a float table T[255 − k] = expf(−in_scale·beta·k), k = 0..255.  Per row:
max = row max; t(x) = T[255 − max + x]; sum = Σ t in float32, left to right;
inv = 1 / (sum · out_scale); then
  int8 / int16 output: q = (int32)round_half_away(t(x) · inv) + out_zp, clamped;
  uint8 output: q = (int32)(t(x) · inv + 0.5f) — x86 builds add 0.5 and truncate, and this path
  IGNORES the output zero point (``QuantizeSoftmaxOutput<uint8_t>`` off aarch64).
int8 → int8 needs output zero point −128 and scale 1/256 (±0.1 %).

int16 → int16 (``reference_ops::SoftmaxInt16``, inputs of rank 1 to 4; zero points 0, output scale
1/32768 ±0.1 %): two 513-entry int16 tables built in prepare in double precision
(``LUTPopulate``): exp(x) on [−10, 0] and 1/(1 + x) on [0, 1].  (input_multiplier,
input_left_shift) = QuantizeMultiplier(in_scale·beta / (10/65535)) maps x − max onto [−65535, 0]
≙ [−10, 0].  Per row: e = exp_lut(clamp(MBQM(x − max) + 32767)) (Q0.15); sum = Σ e (int32);
h = CLZ(sum); the sum is normalised to [1, 2) in Q0.15 ((sum << (h − 1)) + 2^13) >> 14, moved by
−(2^15 + 2^16) and looked up in the 1/(1+x) table; out = clamp((e · recip + 2^(30 − h)) >>
(31 − h), 0, 32767).

float16 → float16 (litert runs TFLite's reference ``Softmax`` on half; matched bit for bit): per
row, e = expf((x − max) · beta) in float32; the output slot keeps e rounded to half while the sum
adds the unrounded e in float32, left to right; then out = half(out / sum), i.e. the half-rounded
numerator over the float32 sum.  The row maximum skips NaNs (``std::max`` from the lowest float).
NaNs are those of x86 arithmetic — inf − inf gives the negative default NaN, an operation on one
NaN returns that NaN, a sum already NaN stays the first NaN it met — and come out of the float →
half conversion as 0x7e00 with their sign (so an infinite input makes its row negative NaNs, a NaN
input makes its row NaNs of its sign).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ...perf.jit import native, njit
from .. import quant
from ._common import F32
from ._unary import I8, I16, U8, TYPE_RANGE, eigen_exp_packet_f32, libm_f32, require_zero_points

# input type → the output types SoftmaxEval takes
PAIRS = {I8: (I8, I16), U8: (U8, I16), I16: (I16,)}


@opdata
class SoftmaxInt8Data(OpData):
    """uint8 / int8 input (int8 → int8 keeps this name; ``dtype`` / ``output_dtype`` say the pair)."""

    beta: float
    axis: int
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    table: object              # float32 [256]: table[255 - k] = expf(-input_scale * beta * k)
    impl: str = "numba"
    dtype: str = "int8"
    output_dtype: str = "int8"


@opdata
class SoftmaxInt16Data(OpData):
    """int16 → int16 (TFLite's ``SoftmaxParams`` for SoftmaxInt16)."""

    beta: float
    axis: int
    input_scale: float
    input_multiplier: int
    input_left_shift: int
    exp_lut: object = dataclasses.field(default=None, repr=False)                  # int16 [513]
    one_over_one_plus_x_lut: object = dataclasses.field(default=None, repr=False)  # int16 [513]
    impl: str = "numpy"


def softmax_table(input_scale: float, beta: float) -> np.ndarray:
    """PopulateSoftmaxLookupTable: scale = −in_scale·beta (float32), table[255 − v] = expf(scale · v)."""
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.float32(-np.float32(input_scale) * np.float32(beta))
    v = np.arange(256, dtype=np.float32)
    table = np.empty(256, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):     # absurd scales / betas: ±inf and NaN as in C
        table[255 - np.arange(256)] = quant.float_fn("expf", (scale * v).astype(np.float32))
    return table


@njit
def float_to_int32_x86_scalar(v):
    """(int32)v as x86 converts a float: truncation; NaN and values beyond int32 give INT32_MIN."""
    if v != v or v <= -2147483649.0 or v >= 2147483648.0:
        return np.int64(-2147483648)
    return np.int64(v)


@njit
def softmax_8bit_numba(x2, table, out_scale, out_zp, add_half, in_min, lo, hi, out2):
    rows, n = x2.shape
    for r in range(rows):
        mx = in_min
        for j in range(n):
            if x2[r, j] > mx:
                mx = np.int64(x2[r, j])
        off = 255 - mx
        s = np.float32(0.0)
        for j in range(n):
            s += table[off + x2[r, j]]
        inv = np.float32(1.0) / (s * out_scale)
        for j in range(n):
            p = table[off + x2[r, j]] * inv
            if add_half:
                q = float_to_int32_x86_scalar(np.float64(np.float32(p + np.float32(0.5))))
            else:
                a = np.floor(np.abs(np.float64(p)) + 0.5)
                q = float_to_int32_x86_scalar(a if p >= 0 else -a)
                q = ((q + out_zp + 2147483648) & 0xFFFFFFFF) - 2147483648     # int32 addition
            if q < lo:
                q = lo
            if q > hi:
                q = hi
            out2[r, j] = q


def reference_8bit(x, d) -> np.ndarray:
    """The float-table softmax for uint8 / int8 inputs, row by row in float32."""
    out_dt = np.dtype(d.output_dtype)
    x2 = x.reshape(-1, x.shape[-1]).astype(np.int64)
    t = d.table[255 - x2.max(axis=1, keepdims=True) + x2]
    s = np.zeros(x2.shape[0], np.float32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):    # NaN / inf betas: IEEE, as C
        for j in range(x2.shape[1]):                  # float32, left to right, as the C loop
            s = (s + t[:, j]).astype(np.float32)
        inv = (np.float32(1.0) / (s * np.float32(d.output_scale))).astype(np.float32)
        p = (t * inv[:, None]).astype(np.float32)
    # uint8 output: (int)(p + 0.5f); int8 / int16: (int)roundf(p) + zero point — x86's conversions
    q = quant.softmax_output_int32_x86(p, d.output_zero_point, out_dt == U8)
    lo, hi = TYPE_RANGE[out_dt]
    return np.clip(q, lo, hi).astype(out_dt).reshape(x.shape)


reference_int8 = reference_8bit       # the name the int8-only kernel used


def _exp_double(v):
    return quant.libm_apply("exp", v, double=True)


def _one_over_one_plus_x_double(v):
    return (1.0 / (1.0 + np.asarray(v, np.float64))).astype(np.float64)


def softmax_int16_row(row: np.ndarray, d: SoftmaxInt16Data) -> np.ndarray:
    """SoftmaxInt16 for one row (int64 in, int16 out) — the plain loop of the reference kernel."""
    mx = int(row.max())
    diff = row.astype(np.int64) - mx
    scaled = quant.multiply_by_quantized_multiplier_x86_array(diff, d.input_multiplier, d.input_left_shift)
    e = quant.lut_lookup_int16(np.clip(quant.wrap_bits(scaled + 32767, 32), -32768, 32767), d.exp_lut).astype(np.int64)
    total = int(e.sum())
    h = int(quant.count_leading_zeros32(total))
    shifted = ((total << (h - 1)) + (1 << 13)) >> 14
    recip = int(quant.lut_lookup_int16(np.clip(shifted - (1 << 15) - (1 << 16), -32768, 32767), d.one_over_one_plus_x_lut))
    right = 31 - h
    res = (e * recip + (1 << (right - 1))) >> right
    return np.clip(res, 0, 32767).astype(np.int16)


def softmax_int16(x: np.ndarray, d: SoftmaxInt16Data) -> np.ndarray:
    """SoftmaxInt16 on every row at once (vectorised)."""
    x2 = x.reshape(-1, x.shape[-1]).astype(np.int64)
    diff = x2 - x2.max(axis=1, keepdims=True)
    scaled = quant.multiply_by_quantized_multiplier_x86_array(diff, d.input_multiplier, d.input_left_shift)
    e = quant.lut_lookup_int16(np.clip(quant.wrap_bits(scaled + 32767, 32), -32768, 32767), d.exp_lut).astype(np.int64)
    total = e.sum(axis=1, keepdims=True)
    h = quant.count_leading_zeros32(total)
    shifted = ((total << (h - 1)) + (1 << 13)) >> 14
    recip = quant.lut_lookup_int16(np.clip(shifted - (1 << 15) - (1 << 16), -32768, 32767),
                                   d.one_over_one_plus_x_lut).astype(np.int64)
    right = 31 - h
    res = (e * recip + (np.int64(1) << (right - 1))) >> right
    return np.clip(res, 0, 32767).astype(np.int16).reshape(x.shape)


@opdata
class SoftmaxData(OpData):
    beta: float
    axis: int


@opdata
class SoftmaxFloat16Data(OpData):
    """float16 (v4): computed in float32, see the module docstring."""

    beta: float
    axis: int


F16 = np.dtype(np.float16)


LOWEST = np.finfo(np.float32).min


def _canonical_half_nans(y: np.ndarray) -> np.ndarray:
    """Eigen's float → half conversion: a NaN becomes 0x7e00 with its sign."""
    bits = y.view(np.uint16)
    return np.where(np.isnan(y), (bits & 0x8000) | 0x7E00, bits).astype(np.uint16).view(F16)


def softmax_float16(x: np.ndarray, beta: float) -> np.ndarray:
    """Every row at once: float32 exp, the float32 sum taken left to right (``cumsum``), the
    half-rounded numerator divided by it."""
    x32 = x.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        z = (x32 - np.fmax.reduce(x32, axis=-1, keepdims=True, initial=LOWEST)) * np.float32(beta)
        e = np.where(np.isnan(z), z, np.exp(z))               # exp keeps a NaN as it is (sign included)
        total = np.cumsum(e, axis=-1, dtype=np.float32)[..., -1:]
        return _canonical_half_nans((e.astype(F16).astype(np.float32) / total).astype(F16))


def reference_float16(x: np.ndarray, beta: float) -> np.ndarray:
    """TFLite's reference loop, one row at a time with float32 scalars."""
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty(rows.shape, F16)
    b = np.float32(beta)
    with np.errstate(invalid="ignore", over="ignore"):
        for r, row in enumerate(rows):
            mx = LOWEST
            for v in row:
                mx = max(mx, np.float32(v))                     # std::max: a NaN never wins
            total = np.float32(0.0)
            for j, v in enumerate(row):
                z = np.float32(np.float32(np.float32(v) - mx) * b)
                e = z if z != z else np.float32(np.exp(z))
                out[r, j] = F16.type(e)
                total = np.float32(total + e)
            for j in range(len(row)):
                out[r, j] = F16.type(np.float32(out[r, j]) / total)
    return _canonical_half_nans(out).reshape(x.shape)


# ----------------------------------------------------------------------------------------------
# float32: litert's Eigen code, bit for bit (SOFTMAX here, LOG_SOFTMAX's float path uses it too)
#
# Eigen works on packets of 4 floats (SSE).  Three pieces decide the bits:
#   * exp: a packet goes through Eigen's polynomial exp (``_unary.eigen_exp_packet_f32``), a single
#     value through the C library's expf.
#   * a reduction (sum or max) over a vector of n values whose first element lies ``offset`` floats
#     after a 16-byte boundary: ``head`` = (−offset) mod 4 leading values are skipped; when at least
#     one whole packet follows, the packets are folded into two accumulators (packets 0, 2, 4 ...
#     and 1, 3, 5 ...), the two are combined, an odd last packet is added, the 4 lanes are folded
#     as (l0 ∘ l2) ∘ (l1 ∘ l3), then the skipped head values and the tail values are added one by
#     one in order.  Fewer than 4 values after the head: a plain left-to-right fold.
#   * max is ``std::max(a, b)`` = (a < b) ? b : a on every lane (a NaN in b never wins); the last
#     lane folds are SSE's maxps(x, y) = (x > y) ? x : y.
# Tensor buffers are 16-byte aligned, so the offset of element k of a flat tensor is k.

F32_LANES = 4
_F0, _F1, _HALF = np.float32(0.0), np.float32(1.0), np.float32(0.5)
_EXP_HI, _EXP_LO = np.float32(88.723), np.float32(-104.0)
_LOG2E = np.float32(1.44269504088896341)
_LN2_HI, _LN2_LO = np.float32(-0.693359375), np.float32(2.12194440e-4)
_EP6, _EP5, _EP4, _EP3, _EP2 = (np.float32(c) for c in (1.37449637986719608306884765625e-3,
                                                         8.36894474923610687255859375e-3,
                                                         4.166965186595916748046875e-2,
                                                         0.16666518151760101318359375,
                                                         0.49999988079071044921875))


def head_count(offset: int, n: int) -> int:
    """Values of a vector starting ``offset`` floats after a 16-byte boundary that come before the
    first aligned one (at most n)."""
    return min((-offset) % F32_LANES, n)


def _max2(a, b):
    """std::max(a, b) (and Eigen's pmax): b only when a < b."""
    return b if a < b else a


def _maxps(a, b):
    """SSE maxps / maxss on one lane: a only when a > b."""
    return a if a > b else b


def eigen_redux_reference(v: np.ndarray, head: int, op: str) -> np.float32:
    """Eigen's reduction (``op`` "sum" or "max") of the float32 vector v, ``head`` values before the
    first aligned packet — the plain one-value-at-a-time version of :func:`eigen_redux`."""
    fold = (lambda a, b: np.float32(a + b)) if op == "sum" else _max2
    n = len(v)
    body = (n - head) // 8 * 8, (n - head) // 4 * 4
    with np.errstate(all="ignore"):
        if body[1] == 0:
            r = v[0]
            for k in range(1, n):
                r = fold(r, v[k])
            return np.float32(r)
        p = [list(v[head + 4 * i: head + 4 * i + 4]) for i in range(body[1] // 4)]
        acc0 = p[0]
        if len(p) > 1:
            acc1 = p[1]
            for i in range(2, body[0] // 4, 2):
                acc0 = [fold(a, b) for a, b in zip(acc0, p[i])]
                acc1 = [fold(a, b) for a, b in zip(acc1, p[i + 1])]
            acc0 = [fold(a, b) for a, b in zip(acc0, acc1)]
            if body[1] > body[0]:
                acc0 = [fold(a, b) for a, b in zip(acc0, p[-1])]
        last = fold if op == "sum" else _maxps
        r = last(last(acc0[0], acc0[2]), last(acc0[1], acc0[3]))
        for k in list(range(head)) + list(range(head + body[1], n)):
            r = fold(r, v[k])
        return np.float32(r)


def eigen_exp_split_reference(z: np.ndarray, packet_end: int) -> np.ndarray:
    """exp of the flat float32 z: Eigen's packet exp on z[:packet_end], expf on the rest."""
    z = np.asarray(z, np.float32)
    return np.concatenate([eigen_exp_packet_f32(z[:packet_end]), libm_f32("expf", z[packet_end:])]).astype(np.float32)


def reference(x: np.ndarray, beta: float) -> np.ndarray:
    """``optimized_ops::Softmax`` on float32, row by row: m = Eigen max of the row;
    z = (x − m) · float(beta); e = exp(z) (Eigen's packet exp on the first 4·⌊N/4⌋ values of the whole
    tensor, expf on the rest); s = Eigen sum of the row; out = e · (1 / s)."""
    n = x.shape[-1]
    rows = np.asarray(x, np.float32).reshape(-1, n)
    b = np.float32(beta)
    with np.errstate(all="ignore"):
        z = np.empty(rows.shape, np.float32)
        for r, row in enumerate(rows):
            m = eigen_redux_reference(row, head_count(r * n, n), "max")
            z[r] = (row - m).astype(np.float32) * b
        e = eigen_exp_split_reference(z.reshape(-1), z.size - z.size % F32_LANES).reshape(rows.shape)
        out = np.empty(rows.shape, np.float32)
        for r in range(len(rows)):
            s = eigen_redux_reference(e[r], head_count(r * n, n), "sum")
            out[r] = e[r] * np.float32(_F1 / s)
    return out.reshape(x.shape)


def log_softmax_reference(x: np.ndarray) -> np.ndarray:
    """``optimized_ops::LogSoftmax`` on float32, row by row: m = Eigen max of the row (its head from
    the row's address); s = Eigen sum of exp(x − m) — an expression, so its packets start at the
    row's first value: packet exp on the first 4·⌊n/4⌋ values of the row, expf on the rest;
    out = (x − m) − logf(s)."""
    n = x.shape[-1]
    rows = np.asarray(x, np.float32).reshape(-1, n)
    out = np.empty(rows.shape, np.float32)
    with np.errstate(all="ignore"):
        for r, row in enumerate(rows):
            m = eigen_redux_reference(row, head_count(r * n, n), "max")
            z = (row - m).astype(np.float32)
            s = eigen_redux_reference(eigen_exp_split_reference(z, n - n % F32_LANES), 0, "sum")
            out[r] = z - libm_f32("logf", np.float32(s))
    return out.reshape(x.shape)


# -- the fast paths: the same arithmetic in numba loops (float32 scalars round every operation).
# expf / logf: numba's math.exp / math.log on a float32 call the C library; without JIT the Python
# twins call it through ctypes.

@njit
def _expf_numba(v):
    return math.exp(v)


@njit
def _logf_numba(v):
    return math.log(v)


def _libm_one(name: str, v):
    return libm_f32(name, np.float32(v))[()]


@native(lambda: _expf_numba.compile())
def _expf(v):
    return _libm_one("expf", v)


@native(lambda: _logf_numba.compile())
def _logf(v):
    return _libm_one("logf", v)


@njit
def _pow2(k):
    return np.float32(2.0 ** k)


@njit
def _exp_packet(v):
    """One lane of Eigen's packet exp (see ``_unary.eigen_exp_packet_f32``)."""
    if v != v:
        return v
    if v < _EXP_LO:
        return _F0
    x = v if v < _EXP_HI else _EXP_HI
    m = np.float32(math.floor(x * _LOG2E + _HALF))
    r = m * _LN2_HI + x
    r = m * _LN2_LO + r
    r2 = r * r
    even = r2 * (r2 * _EP6 + _EP4) + _EP2
    odd = r2 * _EP5 + _EP3
    y = r2 * (r * odd + even) + (r + _F1)
    k = int(m)
    b = k >> 2                                      # pldexp: 2^b three times, then 2^(k − 3b)
    c = _pow2(b)
    e = y * c * c * c * _pow2(k - 3 * b)
    return v if e < v else e                        # pmax(e, x): +inf stays +inf


@njit
def _fold(a, b, is_max):
    if is_max:
        return b if a < b else a
    return a + b


@njit
def eigen_redux(v, head, is_max):
    """:func:`eigen_redux_reference` on a contiguous float32 vector (``is_max``: max, else sum)."""
    n = v.size
    if head > n:
        head = n
    body = (n - head) // 4 * 4
    if body == 0:
        r = v[0]
        for k in range(1, n):
            r = _fold(r, v[k], is_max)
        return r
    body2 = (n - head) // 8 * 8
    a0, a1, a2, a3 = v[head], v[head + 1], v[head + 2], v[head + 3]
    if body > 4:
        b0, b1, b2, b3 = v[head + 4], v[head + 5], v[head + 6], v[head + 7]
        for i in range(head + 8, head + body2, 8):
            a0 = _fold(a0, v[i], is_max)
            a1 = _fold(a1, v[i + 1], is_max)
            a2 = _fold(a2, v[i + 2], is_max)
            a3 = _fold(a3, v[i + 3], is_max)
            b0 = _fold(b0, v[i + 4], is_max)
            b1 = _fold(b1, v[i + 5], is_max)
            b2 = _fold(b2, v[i + 6], is_max)
            b3 = _fold(b3, v[i + 7], is_max)
        a0 = _fold(a0, b0, is_max)
        a1 = _fold(a1, b1, is_max)
        a2 = _fold(a2, b2, is_max)
        a3 = _fold(a3, b3, is_max)
        if body > body2:
            i = head + body2
            a0 = _fold(a0, v[i], is_max)
            a1 = _fold(a1, v[i + 1], is_max)
            a2 = _fold(a2, v[i + 2], is_max)
            a3 = _fold(a3, v[i + 3], is_max)
    if is_max:
        t0 = a0 if a0 > a2 else a2
        t1 = a1 if a1 > a3 else a3
        r = t0 if t0 > t1 else t1
    else:
        r = (a0 + a2) + (a1 + a3)
    for k in range(head):
        r = _fold(r, v[k], is_max)
    for k in range(head + body, n):
        r = _fold(r, v[k], is_max)
    return r


@njit
def softmax_f32_numba(x2, beta, out2):
    """SOFTMAX float32 over the rows of x2 (2-D, contiguous) into out2 (may be x2 itself)."""
    rows, n = x2.shape
    packet_end = rows * n - rows * n % 4
    for r in range(rows):
        base = r * n
        head = (4 - base % 4) % 4
        m = eigen_redux(x2[r], head, True)
        for j in range(n):
            z = (x2[r, j] - m) * beta
            out2[r, j] = _exp_packet(z) if base + j < packet_end else _expf(z)
        inv = _F1 / eigen_redux(out2[r], head, False)
        for j in range(n):
            out2[r, j] = out2[r, j] * inv


@njit
def log_softmax_f32_numba(x2, out2):
    """LOG_SOFTMAX float32 over the rows of x2 (2-D, contiguous) into out2 (may be x2 itself)."""
    rows, n = x2.shape
    packet_end = n - n % 4
    e = np.empty(n, np.float32)
    for r in range(rows):
        m = eigen_redux(x2[r], (4 - r * n % 4) % 4, True)
        for j in range(n):
            z = x2[r, j] - m
            e[j] = _exp_packet(z) if j < packet_end else _expf(z)
        log_sum = _logf(eigen_redux(e, 0, False))
        for j in range(n):
            out2[r, j] = (x2[r, j] - m) - log_sum


def _run_rows(fn, x: np.ndarray, out: np.ndarray, *args) -> None:
    n = x.shape[-1] if x.ndim else 1
    if x.size == 0 or n == 0:
        return
    x2 = np.ascontiguousarray(x, np.float32).reshape(-1, n)
    with np.errstate(all="ignore"):         # WORKBENCH_JIT=0: numpy scalars warn about inf and NaN
        if out.flags.c_contiguous and out.dtype == np.float32:
            fn(x2, *args, out.reshape(-1, n))
        else:
            res = np.empty(x2.shape, np.float32)
            fn(x2, *args, res)
            out[...] = res.reshape(out.shape)


def softmax_f32(x: np.ndarray, beta: float, out: np.ndarray) -> None:
    """The SOFTMAX float32 fast path into ``out``."""
    _run_rows(softmax_f32_numba, x, out, np.float32(beta))


def log_softmax_f32(x: np.ndarray, out: np.ndarray) -> None:
    """The LOG_SOFTMAX float32 fast path into ``out``."""
    _run_rows(log_softmax_f32_numba, x, out)


@kernel(BuiltinOperator.SOFTMAX, versions=(1, 2, 3, 4))
class Softmax(Kernel):
    name = "softmax"

    def prepare(self, context, node):
        x_t, y_t = node.inputs[0], node.outputs[0]
        dt = context.expect_dtype(node, x_t, (F32, F16, U8, I8, I16))
        shape = context.shape(x_t)
        if len(shape) < 1:
            raise UnsupportedOpError(f"SOFTMAX (node {node.index}): the input must have at least one dimension")
        beta = float(node.params["beta"])
        if dt == F32:
            context.set_output(y_t, shape, F32)
            return SoftmaxData(beta, len(shape) - 1)
        if dt == F16:
            if context.dtype(y_t) != F16:
                raise UnsupportedOpError(f"SOFTMAX (node {node.index}): float16 input with a {context.dtype(y_t)} "
                                         f"output; TFLite needs a float16 output")
            context.set_output(y_t, shape, F16)
            return SoftmaxFloat16Data(beta, len(shape) - 1)
        out_dt = context.dtype(y_t)
        if out_dt not in PAIRS[dt]:
            raise UnsupportedOpError(f"SOFTMAX (node {node.index}): {dt} input with {out_dt} output; TFLite takes "
                                     f"{' / '.join(str(t) for t in PAIRS[dt])} outputs for {dt} inputs")
        in_s, in_zp = quant.tensor_scale_zp(context, x_t)
        out_s, out_zp = quant.tensor_scale_zp(context, y_t)
        context.set_output(y_t, shape, out_dt)
        if dt == out_dt == I8:
            if out_zp != -128 or abs(np.float32(out_s) - np.float32(1 / 256)) > 0.001 / 256:
                raise UnsupportedOpError(f"SOFTMAX (node {node.index}): int8 output needs zero point -128 and scale "
                                         f"1/256 (got {out_zp}, {out_s:g})")
        if dt == I16:
            require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
            if abs(np.float32(out_s) - np.float32(1 / 32768)) > 0.001 / 32768:
                raise UnsupportedOpError(f"SOFTMAX (node {node.index}): int16 output needs scale 1/32768 "
                                         f"(got {out_s:g})")
            if not 1 <= len(shape) <= 4:
                raise UnsupportedOpError(f"SOFTMAX (node {node.index}): TFLite's int16 softmax takes inputs of rank "
                                         f"1 to 4, got {len(shape)}")
            with np.errstate(over="ignore", invalid="ignore"):     # a NaN / inf product: multiplier (0, 0)
                real = float(np.float32(np.float32(in_s) * np.float32(beta))) / (10.0 / 65535.0)
            # absurd scales: shifts above 31 as x86 runs them (count modulo 32, int32 wrap-around)
            m, sh = quant.quantize_multiplier_x86(real)
            exp_lut = quant.lut_int16(10.0 / 65535, 32767, 2.0 / 65535, 0, _exp_double, double=True)
            inv_lut = quant.lut_int16(1.0 / 65535, -32768, 2.0 / 65535, 0, _one_over_one_plus_x_double, double=True)
            return SoftmaxInt16Data(beta, len(shape) - 1, in_s, m, sh, exp_lut, inv_lut)
        return SoftmaxInt8Data(beta, len(shape) - 1, in_s, in_zp, out_s, out_zp, softmax_table(in_s, beta),
                               dtype=str(dt), output_dtype=str(out_dt))

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is SoftmaxInt8Data:
            n = x.shape[-1]
            lo, hi = TYPE_RANGE[np.dtype(d.output_dtype)]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):   # WORKBENCH_JIT=0: NaN betas
                softmax_8bit_numba(x.reshape(-1, n), d.table, np.float32(d.output_scale), d.output_zero_point,
                                   d.output_dtype == "uint8", TYPE_RANGE[np.dtype(d.dtype)][0], lo, hi,
                                   out.reshape(-1, n))
            return
        if type(d) is SoftmaxInt16Data:
            out[...] = softmax_int16(x, d)
            return
        if type(d) is SoftmaxFloat16Data:
            out[...] = softmax_float16(x, d.beta)
            return
        softmax_f32(x, d.beta, out)

    def invoke_reference(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is SoftmaxInt8Data:
            out[...] = reference_8bit(x, d)
            return
        if type(d) is SoftmaxInt16Data:
            rows = x.reshape(-1, x.shape[-1])
            out.reshape(-1, x.shape[-1])[...] = np.stack([softmax_int16_row(r, d) for r in rows]) if rows.size else rows
            return
        if type(d) is SoftmaxFloat16Data:
            out[...] = reference_float16(x, d.beta)
            return
        out[...] = reference(x, d.beta)
