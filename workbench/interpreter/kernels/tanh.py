"""TANH — float32 (v1), uint8 (v1), int8 (v2), int16 (v3).

uint8 / int8: a 256-entry LUT of tanhf built in prepare (``LUTPopulate``, TFLite's default
kernel; no constraint on the output scale).

int16 (``activations.cc`` TanhPrepare / TanhEval): zero points 0, output scale 2^-15.

* input scale 2^-12 or 2^-13 (input_left_shift = 12 + log2(scale) is 0 or 1): gemmlowp's
  fixed-point ``tanh`` on the input read with 3 integer bits (for 2^-13 first doubled with
  saturation) — ``optimized_ops::Tanh``, what litert runs.
* any other scale: the input is moved to a 1/(3·4096) grid with input_multiplier /
  input_left_shift (as for LOGISTIC) and tanh(x) = 2·sigmoid(2x) − 1 is read from the sigmoid
  table with 8 fraction bits (``reference_integer_ops::Tanh``).  As for LOGISTIC, x·input_multiplier
  wraps in int32 for large input scales.
* absurd input scales (multiplier INT32_MIN above about 1.7e5, 0 below about 3.8e-14, see
  LOGISTIC): TanhEval runs the table kernel only for ``input_multiplier > 0``, so these go to
  ``optimized_ops::Tanh`` — gemmlowp tanh on the input read as Q3.12, doubled first because
  input_left_shift is not 0 for the small ones (31).  Matched to litert on every int16 value.

float32 (``optimized_ops::Tanh``): Eigen's ``tanh`` over the tensor, not tanhf — a [9/8] rational
function of x clamped to ±7.90738964 (:func:`quant.eigen_tanh_f32`), the same arithmetic on
packets and on single values.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import OpData, kernel, opdata
from .. import quant
from ._unary import I8, I16, U8, UnaryKernel, eigen_tanh_f32, invoke_quantized, run_float_unary
from .logistic import int16_scaling

_SIGMOID = quant.sigmoid_table_uint16()


@opdata
class TanhInt16Data(OpData):
    shape: tuple
    input_scale: float
    input_multiplier: int          # 0 on the power-of-two path
    input_left_shift: int
    power_of_two: bool             # True: gemmlowp fixed-point tanh; False: sigmoid table
    table: object = dataclasses.field(default=None, repr=False)
    impl: str = "table"


def tanh_int16_reference(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """``reference_integer_ops::Tanh`` for int16 (sigmoid table, 8 fraction bits)."""
    if multiplier == 0:
        multiplier, left_shift = 3 << left_shift, 0
    rnd = (1 << (left_shift - 1)) if left_shift > 0 else 0
    v = quant.wrap_bits(x.astype(np.int64) * multiplier + rnd, 32) >> left_shift      # int32 arithmetic
    a = np.abs(v)
    uh = a >> 8
    ut = a & 0xFF
    idx = np.minimum(uh, 254)
    ua = _SIGMOID[idx]
    ub = _SIGMOID[idx + 1]
    result = np.where(uh >= 255, 0xFFFF << 8, (ua << 8) + ut * (ub - ua))
    result = np.where(v >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1)
    return quant.wrap_bits(result >> 8, 16).astype(np.int16)


def tanh_int16_gemmlowp(x: np.ndarray, left_shift: int) -> np.ndarray:
    """``optimized_ops::Tanh`` for int16: gemmlowp tanh, Q3.12 in (after a saturating doubling when
    input_left_shift is not 0 — 1 for scale 2^-13, 31 for the absurdly small scales that reach this
    kernel), Q0.15 out."""
    v = x.astype(np.int64)
    if left_shift != 0:
        v = quant.fp_sat_mul_pot(v, 1, 16)
    return quant.fp_tanh(v, 3, 16).astype(np.int16)


def reference(x):
    """Eigen's float tanh, as litert runs it on a float32 tensor."""
    return eigen_tanh_f32(x)


@kernel(BuiltinOperator.TANH, versions=(1, 2, 3))
class Tanh(UnaryKernel):
    name = "tanh"
    qtypes = (U8, I8, I16)
    lut = staticmethod(quant.tanh_f32)

    def prepare_quantized(self, context, node, dt):
        if dt == I16:
            in_s, m, sh, pot = int16_scaling(context, node, 1)
            return TanhInt16Data(context.shape(node.inputs[0]), in_s, m, sh, pot)
        return super().prepare_quantized(context, node, dt)

    def reference_quantized(self, x, d):
        if type(d) is TanhInt16Data:
            if d.input_multiplier <= 0:          # TanhEval: the reference kernel only for a multiplier > 0
                return tanh_int16_gemmlowp(x, d.input_left_shift)
            return tanh_int16_reference(x, d.input_multiplier, d.input_left_shift)
        return super().reference_quantized(x, d)

    def invoke(self, context, node, d):
        if invoke_quantized(self, context, node, d):
            return
        run_float_unary("tanh", context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
