"""TANH — float32 (v1), uint8 (v1), int8 (v2), int16 (v3).

uint8 / int8: a 256-entry LUT of tanhf built in prepare (``LUTPopulate``) and read at run time, in
both builds; no constraint on the output scale.

int16 (``activations.cc`` TanhPrepare / TanhEval): zero points 0, output scale 2^-15.  Prepare as
LOGISTIC's (``logistic.int16_scaling``), except that input scales 2^-12 and 2^-11
(input_left_shift 0 or 1) are the power-of-two case.

* ``reference_integer_ops::Tanh`` (:func:`tanh_int16_table`): x on the 1/(3·4096) grid as for
  LOGISTIC, tanh(x) = 2·sigmoid(2x) − 1 read from the sigmoid table with 8 fraction bits.
* ``optimized_ops::Tanh`` (:func:`tanh_int16_gemmlowp`): gemmlowp's fixed-point ``tanh`` on the
  input read with 3 integer bits (first doubled with saturation when input_left_shift is not 0).
* ``Variant.int16_logistic_tanh`` (``logistic.int16_uses_table``): the reference kernels take the
  table for every scale; litert's x86 build only for a multiplier > 0, so the power-of-two scales
  and the absurd ones (multiplier INT32_MIN above about 1.7e5, 0 below about 3.8e-14 — then
  input_left_shift is 31 and the input is doubled) go to gemmlowp (matched on every int16 value).

float32 — ``Variant.float_activations``: ``reference_ops::Tanh`` calls tanhf; litert's x86 build
(``optimized_ops::Tanh``) evaluates Eigen's ``tanh`` — a [9/8] rational function of x clamped to
±7.90738964 (:func:`quant.eigen_tanh_f32`), the same arithmetic on packets and single values.

The speed layer: ``workbench/interpreter/fast/activations.py``.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, U8
from ._unary import LutData, UnaryData, check_same_type, eigen_tanh_f32, libm_f32, lut_lookup, prepare_lut
from .logistic import int16_scaling, int16_uses_table, on_sigmoid_grid

_SIGMOID = quant.sigmoid_table_uint16()


@opdata
class TanhInt16Data(OpData):
    shape: tuple
    input_scale: float
    input_multiplier: int          # 0 on the power-of-two path
    input_left_shift: int
    power_of_two: bool             # True: the scale is 2^-12 or 2^-11 (the multiplier stays 0)


def tanh_int16_table(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """``reference_integer_ops::Tanh`` for int16 (sigmoid table, 8 fraction bits)."""
    v = on_sigmoid_grid(x, multiplier, left_shift)
    a = np.abs(v)
    uh, ut = a >> 8, a & 0xFF
    idx = np.minimum(uh, 254)
    ua, ub = _SIGMOID[idx], _SIGMOID[idx + 1]
    result = np.where(uh >= 255, 0xFFFF << 8, (ua << 8) + ut * (ub - ua))
    result = np.where(v >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1)
    return quant.wrap_bits(result >> 8, 16).astype(np.int16)


def tanh_int16_gemmlowp(x: np.ndarray, left_shift: int) -> np.ndarray:
    """``optimized_ops::Tanh`` for int16: gemmlowp tanh, Q3.12 in (after a saturating doubling when
    input_left_shift is not 0), Q0.15 out."""
    v = x.astype(np.int64)
    if left_shift != 0:
        v = quant.fp_sat_mul_pot(v, 1, 16)
    return quant.fp_tanh(v, 3, 16).astype(np.int16)


@kernel(BuiltinOperator.TANH, versions=(1, 2, 3))
class Tanh(Kernel):
    name = "tanh"

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, (F32, U8, I8, I16))
        shape = context.shape(x)
        if dt == F32:
            context.set_output(node.outputs[0], shape, F32)
            return UnaryData(shape)
        check_same_type(context, node, dt)
        if dt == I16:
            d = TanhInt16Data(shape, *int16_scaling(context, node, 1))
        else:
            d = prepare_lut(context, node, dt, quant.tanh_f32)
        context.set_output(node.outputs[0], shape, dt)
        return d

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is TanhInt16Data:
            if int16_uses_table(context.variant, d.input_multiplier):
                out[...] = tanh_int16_table(x, d.input_multiplier, d.input_left_shift)
            else:
                out[...] = tanh_int16_gemmlowp(x, d.input_left_shift)
        elif type(d) is LutData:
            out[...] = lut_lookup(x, d)
        elif context.variant.float_activations == "eigen":
            out[...] = eigen_tanh_f32(x)
        else:
            out[...] = libm_f32("tanhf", x)
