"""LOG_SOFTMAX over the last axis: x − max − log Σ exp(x − max) — float32 (v1), uint8 (v1), int8 (v2).

float32 — ``Variant.float_activations`` (``_softmax.py`` says the arithmetic): the reference kernel
(``reference_ops::LogSoftmax``) sums expf left to right and subtracts logf(sum); litert's x86 build
(``optimized_ops::LogSoftmax``, Eigen) sums a row expression — Eigen's packet exp on the row's
first 4·⌊n/4⌋ values, expf on the rest, packet sums — then (x − m) − logf(s).  A row holding a
NaN comes out all NaN (payload / sign not matched).

uint8 / int8 (``activations.cc`` LogSoftmaxPrepare): the output must have scale 16/256 and zero
point 255 (uint8) / 127 (int8), so it holds [−16, 0) in steps of 1/16.  ``Variant.softmax_8bit``:

* "float-table" (litert-x86, ``optimized_ops::LogSoftmax``): prepare fills the softmax table
  T[255 − k] = expf(−in_scale·k) (beta 1).  Per row, in float32: sum = Σ T[255 − max + x];
  log_sum = logf(sum); scale = in_scale/out_scale; precomputed = (in_scale·max + log_sum) /
  out_scale; q = (int32)(rint(scale·x − precomputed) + out_zp) (rint: ties to even), clamped.
  Absurd input scales (measured on ai-edge-litert 2.3.0, scales 1e-45 to 3e38): from about 1e30
  on, the products overflow to ±inf or NaN and x86's float → int32 conversion makes them INT32_MIN
  (:func:`quant.log_softmax_output_int32_x86`), so those outputs are the type's minimum.
* "fixed-point" (``reference_ops::LogSoftmax`` for uint8, ``reference_integer_ops::LogSoftmax`` for
  int8, gemmlowp): the Q12.19 sum of the exps of the kept differences (as SOFTMAX's reference
  kernel), its log as Q5.26 (``log_x_for_x_greater_than_or_equal_to_1``); a difference above
  max(diff_min − 1, (log_sum − 2^31) rescaled back to input units) gives
  RoundingDivideByPOT(rescaled difference − log_sum, 22) + zero point, clamped; smaller ones the
  type's minimum.

The speed layer: ``workbench/interpreter/fast/softmax.py``.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, U8
from ._softmax import (
    INT32_MIN,
    log_softmax_float_eigen,
    log_softmax_float_libm,
    log_x_ge_1,
    scaled_exps,
    softmax_input_scaling,
    softmax_table,
    sum_of_exps,
    table_exps,
)
from ._unary import TYPE_RANGE, check_same_type, libm_f32


@opdata
class LogSoftmaxData(OpData):
    shape: tuple


@opdata
class LogSoftmaxQuantizedData(OpData):
    """TFLite's ``LogSoftmaxOpData`` on its optimized path (``SoftmaxParams`` table / scale / zero_point)."""

    shape: tuple
    dtype: str
    input_scale: float
    output_scale: float
    output_zero_point: int
    table: object              # float32 [256]: table[255 - k] = expf(-input_scale * k)


@opdata
class LogSoftmaxFixedPointData(OpData):
    """TFLite's ``SoftmaxParams`` for the reference kernels (``PreprocessLogSoftmaxScalingExp``)."""

    shape: tuple
    dtype: str
    input_scale: float
    input_multiplier: int
    input_left_shift: int
    reverse_scaling_divisor: int
    reverse_scaling_right_shift: int
    diff_min: int
    output_zero_point: int


def log_softmax_8bit_table(x: np.ndarray, d: LogSoftmaxQuantizedData) -> np.ndarray:
    """``optimized_ops::LogSoftmax`` for uint8 / int8 (the float table), every row at once."""
    rows, mx, _, s = table_exps(x, d.table)
    log_sum = libm_f32("logf", s)
    in_s, out_s = np.float32(d.input_scale), np.float32(d.output_scale)
    with np.errstate(over="ignore", invalid="ignore"):        # absurd scales: IEEE ±inf / NaN, as TFLite
        scale = np.float32(in_s / out_s)
        pre = (((in_s * mx[:, 0].astype(np.float32)).astype(np.float32) + log_sum).astype(np.float32) / out_s)
        lp = ((scale * rows.astype(np.float32)).astype(np.float32) - pre.astype(np.float32)[:, None]).astype(np.float32)
    q = quant.log_softmax_output_int32_x86(lp, d.output_zero_point)
    lo, hi = TYPE_RANGE[np.dtype(d.dtype)]
    return np.clip(q, lo, hi).astype(d.dtype).reshape(x.shape)


def log_softmax_8bit_fixed_point(x: np.ndarray, d: LogSoftmaxFixedPointData) -> np.ndarray:
    """``reference_ops::LogSoftmax`` (uint8) / ``reference_integer_ops::LogSoftmax`` (int8), every row at once."""
    lo, hi = TYPE_RANGE[np.dtype(d.dtype)]
    rows = x.reshape(-1, x.shape[-1]).astype(np.int64)
    diff, keep, rescaled, exps = scaled_exps(rows, d.input_multiplier, d.input_left_shift, d.diff_min)
    log_sum = log_x_ge_1(sum_of_exps(keep, exps))
    back = quant.multiply_by_quantized_multiplier_array(log_sum + INT32_MIN, d.reverse_scaling_divisor,
                                                        -d.reverse_scaling_right_shift)
    used = diff > np.maximum(d.diff_min - 1, back)
    v = quant.rounding_divide_by_pot_array(rescaled - log_sum, 31 - 5 - 4) + d.output_zero_point
    return np.where(used, np.clip(v, lo, hi), lo).astype(d.dtype).reshape(x.shape)


def log_softmax_scaling(input_scale: float) -> tuple[int, int, int, int, int]:
    """``PreprocessLogSoftmaxScalingExp`` (beta 1): (input_multiplier, input_left_shift, reverse_scaling_divisor,
    reverse_scaling_right_shift, diff_min); the divisor is 2^(31 − left_shift) / input_multiplier."""
    m, shift, diff_min = softmax_input_scaling(input_scale, 1.0)
    with np.errstate(divide="ignore"):
        real = float(np.float64(2.0 ** (31 - shift)) / np.float64(m)) if m else float("inf")
    divisor, reverse_shift = quant.quantize_multiplier_x86(real)
    return m, shift, divisor, -reverse_shift, diff_min


@kernel(BuiltinOperator.LOG_SOFTMAX, versions=(1, 2))
class LogSoftmax(Kernel):
    name = "log_softmax"

    def prepare(self, context, node):
        x, y = node.inputs[0], node.outputs[0]
        dt = context.expect_dtype(node, x, (F32, U8, I8))
        shape = context.shape(x)
        if dt == F32:
            context.set_output(y, shape, F32)
            return LogSoftmaxData(shape)
        check_same_type(context, node, dt)
        in_s, _ = quant.tensor_scale_zp(context, x)
        out_s, out_zp = quant.tensor_scale_zp(context, y)
        want_zp = 255 if dt == U8 else 127
        if float(np.float32(out_s)) != 16.0 / 256 or out_zp != want_zp:
            raise UnsupportedOpError(f"LOG_SOFTMAX (node {node.index}): a {dt} output needs scale 16/256 and zero "
                                     f"point {want_zp} (got {out_s:g}, {out_zp})")
        context.set_output(y, shape, dt)
        if context.variant.softmax_8bit == "fixed-point":
            return LogSoftmaxFixedPointData(shape, str(dt), in_s, *log_softmax_scaling(in_s), out_zp)
        return LogSoftmaxQuantizedData(shape, str(dt), in_s, out_s, out_zp, softmax_table(in_s, 1.0))

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if x.size == 0:
            return
        if type(d) is LogSoftmaxQuantizedData:
            out[...] = log_softmax_8bit_table(x, d)
        elif type(d) is LogSoftmaxFixedPointData:
            out[...] = log_softmax_8bit_fixed_point(x, d)
        elif context.variant.float_activations == "eigen":
            out[...] = log_softmax_float_eigen(x)
        else:
            out[...] = log_softmax_float_libm(x)
