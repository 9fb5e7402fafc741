"""SOFTMAX over the last axis — float32 and uint8 (v1), int8 (v2), int16 (v3), float16 (v4).

``beta`` comes from TFLite's parser view: an absent options table makes it 0 (every output equal).
Float softmax computes with a NaN or infinite beta as IEEE arithmetic does (NaN outputs).  So do the
quantized ones, as litert's x86 build does (measured on ai-edge-litert 2.3.0, every input / output
pair, beta NaN / ±inf / ±1e38, input scale · beta beyond float32; tests/test_quantized_edge_parameters.py):
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

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from .._jit import njit
from .. import quant
from ._common import F32
from ._unary import I8, I16, U8, TYPE_RANGE, require_zero_points

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


def reference(x: np.ndarray, beta: float) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):      # inf - inf = nan silently, as TFLite
        z = (x.astype(np.float64) - x.max(axis=-1, keepdims=True)) * beta
        e = np.exp(z)
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


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
        with np.errstate(over="ignore", invalid="ignore"):      # inf - inf = nan silently, as TFLite
            np.subtract(x, x.max(axis=-1, keepdims=True), out=out)
            if d.beta != 1.0:
                out *= np.float32(d.beta)
            np.exp(out, out=out)
            out /= out.sum(axis=-1, keepdims=True)

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
