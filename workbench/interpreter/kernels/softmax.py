"""SOFTMAX over the last axis: exp(beta·x) / Σ exp(beta·x) — float32 and uint8 (v1), int8 (v2),
int16 (v3), float16 (v4).  ``beta`` comes from TFLite's parser view: an absent options table makes
it 0 (every output equal).

Every type first finds the row maximum and works on x − max (so the largest exp is exp(0) = 1).

float32 — ``Variant.float_activations`` (``_softmax.py`` says the arithmetic): the reference kernel
(``reference_ops::Softmax``) runs expf, a left-to-right sum and e / sum; litert's x86 build an Eigen
expression (packet exp, packet sums, e · (1 / sum)).  NaN / infinite betas compute as IEEE does.

float16 → float16 (litert runs TFLite's reference ``Softmax`` on half; matched bit for bit): per
row, e = expf((x − max)·beta) in float32; the output slot keeps e rounded to half while the sum
adds the unrounded e in float32, left to right; then out = half(out / sum) — the half-rounded
numerator over the float32 sum.  The maximum skips NaNs (``std::max`` from the lowest float); NaNs
come out of the float → half conversion as 0x7e00 with their sign.

uint8 / int8 inputs — uint8 → uint8, uint8 → int16, int8 → int8, int8 → int16 (``activations.cc``
SoftmaxEval; int8 → int8 needs output zero point −128 and scale 1/256 ±0.1 %) —
``Variant.softmax_8bit``:

* "float-table" (litert-x86, ``optimized_ops::Softmax``, ``PopulateSoftmaxLookupTable``): sum = Σ T(x) in
  float32; inv = 1 / (sum · out_scale); int8 / int16 outputs q = (int32)round_half_away(T(x) · inv)
  + out_zp; uint8 outputs q = (int32)(T(x) · inv + 0.5f) — x86 adds 0.5 and truncates, and IGNORES
  the output zero point.  NaN / infinite betas (measured on ai-edge-litert 2.3.0,
  tests/interpreter/quant/test_quantized_edge_parameters.py): the table holds NaN and x86 turns NaN
  (and anything beyond int32) into INT32_MIN (:func:`quant.softmax_output_int32_x86`), to which the
  zero point is added in int32 — int8 → int8 gives 127 everywhere, → int16 −32768, uint8 → uint8 0;
  a huge negative beta gives inf entries, an infinite sum and inf · 0 = NaN off the maximum.
* "fixed-point" (``reference_ops::Softmax<In, Out>``): sum = Σ Rescale<12>(exp) over the kept
  differences; (recip, bits) = GetReciprocal(sum); out = RoundingDivideByPOT(recip · exp, bits +
  31 − output bits) + the output type's minimum (the zero point is not read), clamped; a dropped
  difference gives the type's minimum.

int16 → int16 (``reference_ops::SoftmaxInt16`` in both builds, ranks 1 to 4, zero points 0, output
scale 1/32768 ±0.1 %): two 513-entry int16 tables built in prepare in double precision
(``LUTPopulate``): exp(x) on [−10, 0] and 1/(1 + x) on [0, 1].  (input_multiplier,
input_left_shift) = QuantizeMultiplier(in_scale·beta / (10/65535)) maps x − max onto [−65535, 0].
Per row: e = exp_lut(clamp(MBQM(x − max) + 32767)) (Q0.15); sum = Σ e; h = CLZ(sum); the sum
normalised to [1, 2) in Q0.15, ((sum << (h − 1)) + 2^13) >> 14, moved by −(2^15 + 2^16) and looked
up in the 1/(1+x) table; out = clamp((e · recip + 2^(30 − h)) >> (31 − h), 0, 32767).  Absurd
scales / betas (measured on 2.3.0): a NaN / infinite in_scale·beta makes the multiplier (0, 0);
shifts of 32 or more count modulo 32 and x·2^shift wraps in int32 (x86).

The speed layer: ``workbench/interpreter/fast/softmax.py``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F16, F32, I8, I16, U8
from ._softmax import (
    LOWEST,
    scaled_exps,
    softmax_float_eigen,
    softmax_float_libm,
    softmax_input_scaling,
    softmax_table,
    sum_of_exps,
    table_exps,
)
from ._unary import TYPE_RANGE, require_zero_points

PAIRS = {I8: (I8, I16), U8: (U8, I16), I16: (I16,)}      # input type → the output types SoftmaxEval takes


@opdata
class SoftmaxData(OpData):
    beta: float
    axis: int


@opdata
class SoftmaxFloat16Data(OpData):
    beta: float
    axis: int


@opdata
class SoftmaxInt8Data(OpData):
    """uint8 / int8 input on the float-table kernel (``SoftmaxParams.table`` / scale / zero_point)."""

    beta: float
    axis: int
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    table: object              # float32 [256]: table[255 - k] = expf(-input_scale * beta * k)
    dtype: str = "int8"
    output_dtype: str = "int8"


@opdata
class SoftmaxFixedPointData(OpData):
    """uint8 / int8 input on the reference kernel (``SoftmaxParams`` input_multiplier / shift / diff_min)."""

    beta: float
    axis: int
    input_scale: float
    input_multiplier: int
    input_left_shift: int
    diff_min: int
    dtype: str
    output_dtype: str


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


def softmax_8bit_table(x: np.ndarray, d: SoftmaxInt8Data) -> np.ndarray:
    """``optimized_ops::Softmax`` for uint8 / int8 inputs (the float table), every row at once."""
    out_dt = np.dtype(d.output_dtype)
    _, _, t, s = table_exps(x, d.table)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):    # NaN / inf betas: IEEE, as C
        inv = (np.float32(1.0) / (s * np.float32(d.output_scale))).astype(np.float32)
        p = (t * inv[:, None]).astype(np.float32)
    q = quant.softmax_output_int32_x86(p, d.output_zero_point, out_dt == U8)
    lo, hi = TYPE_RANGE[out_dt]
    return np.clip(q, lo, hi).astype(out_dt).reshape(x.shape)


def softmax_8bit_fixed_point(x: np.ndarray, d: SoftmaxFixedPointData) -> np.ndarray:
    """``reference_ops::Softmax<InputT, OutputT>`` (gemmlowp fixed point), every row at once."""
    out_dt = np.dtype(d.output_dtype)
    lo, hi = TYPE_RANGE[out_dt]
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    _, keep, _, exps = scaled_exps(rows, d.input_multiplier, d.input_left_shift, d.diff_min)
    recip, bits_over_unit = quant.get_reciprocal(sum_of_exps(keep, exps), 12)
    v = quant.rounding_divide_by_pot_array(quant.fp_srdhm(recip, exps, 32), bits_over_unit + 31 - 8 * out_dt.itemsize)
    return np.where(keep, np.clip(v + lo, lo, hi), lo).astype(out_dt).reshape(x.shape)


def softmax_int16(x: np.ndarray, d: SoftmaxInt16Data) -> np.ndarray:
    """``reference_ops::SoftmaxInt16``, every row at once."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    diff = rows - rows.max(axis=1, keepdims=True)
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


def _canonical_half_nans(y: np.ndarray) -> np.ndarray:
    """Eigen's float → half conversion: a NaN becomes 0x7e00 with its sign."""
    bits = y.view(np.uint16)
    return np.where(np.isnan(y), (bits & 0x8000) | 0x7E00, bits).astype(np.uint16).view(F16)


def softmax_float16(x: np.ndarray, beta: float) -> np.ndarray:
    """``reference_ops::Softmax`` on half: float32 exp, the float32 sum taken left to right
    (``cumsum``), the half-rounded numerator divided by it."""
    x32 = x.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        z = (x32 - np.fmax.reduce(x32, axis=-1, keepdims=True, initial=LOWEST)) * np.float32(beta)
        e = np.where(np.isnan(z), z, np.exp(z))               # exp keeps a NaN as it is (sign included)
        total = np.cumsum(e, axis=-1, dtype=np.float32)[..., -1:]
        return _canonical_half_nans((e.astype(F16).astype(np.float32) / total).astype(F16))


def _exp_double(v):
    return quant.libm_apply("exp", v, double=True)


def _one_over_one_plus_x_double(v):
    return (1.0 / (1.0 + np.asarray(v, np.float64))).astype(np.float64)


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
            return self.prepare_int16(node, shape, beta, in_s, in_zp, out_s, out_zp)
        if context.variant.softmax_8bit == "fixed-point":
            m, shift, diff_min = softmax_input_scaling(in_s, beta)
            return SoftmaxFixedPointData(beta, len(shape) - 1, in_s, m, shift, diff_min, str(dt), str(out_dt))
        return SoftmaxInt8Data(beta, len(shape) - 1, in_s, in_zp, out_s, out_zp, softmax_table(in_s, beta),
                               dtype=str(dt), output_dtype=str(out_dt))

    @staticmethod
    def prepare_int16(node, shape, beta, in_s, in_zp, out_s, out_zp) -> SoftmaxInt16Data:
        require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
        if abs(np.float32(out_s) - np.float32(1 / 32768)) > 0.001 / 32768:
            raise UnsupportedOpError(f"SOFTMAX (node {node.index}): int16 output needs scale 1/32768 (got {out_s:g})")
        if not 1 <= len(shape) <= 4:
            raise UnsupportedOpError(f"SOFTMAX (node {node.index}): TFLite's int16 softmax takes inputs of rank "
                                     f"1 to 4, got {len(shape)}")
        with np.errstate(over="ignore", invalid="ignore"):     # a NaN / inf product: multiplier (0, 0)
            real = float(np.float32(np.float32(in_s) * np.float32(beta))) / (10.0 / 65535.0)
        m, sh = quant.quantize_multiplier_x86(real)       # shifts above 31 as x86 runs them
        exp_lut = quant.lut_int16(10.0 / 65535, 32767, 2.0 / 65535, 0, _exp_double, double=True)
        inv_lut = quant.lut_int16(1.0 / 65535, -32768, 2.0 / 65535, 0, _one_over_one_plus_x_double, double=True)
        return SoftmaxInt16Data(beta, len(shape) - 1, in_s, m, sh, exp_lut, inv_lut)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if x.size == 0:
            return
        out[...] = REFERENCE[type(d)](x, d, context.variant)


def _softmax_float(x, d, variant):
    """float32: Eigen's vectorized exp or libm's expf, as ``Variant.float_activations`` says."""
    return (softmax_float_eigen if variant.float_activations == "eigen" else softmax_float_libm)(x, d.beta)


# OpData class → its teaching routine, run as (x, d, variant) → y.
REFERENCE = {
    SoftmaxData: _softmax_float,
    SoftmaxFloat16Data: lambda x, d, variant: softmax_float16(x, d.beta),
    SoftmaxInt8Data: lambda x, d, variant: softmax_8bit_table(x, d),
    SoftmaxFixedPointData: lambda x, d, variant: softmax_8bit_fixed_point(x, d),
    SoftmaxInt16Data: lambda x, d, variant: softmax_int16(x, d),
}
