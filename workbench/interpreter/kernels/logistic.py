"""LOGISTIC: 1 / (1 + exp(−x)) — float32 (v1), uint8 (v1), int8 (v2), int16 (v3).

uint8 / int8: TFLite builds a 256-entry LUT in prepare (``LUTPopulate``: 1.0f / (1.0f + expf(−d))
in float32, ``activations.cc`` SigmoidPrepare) and reads it at run time; the output scale must be exactly 1/256
(the zero point is not checked on this path).  Both builds do this.

int16 (``activations.cc`` SigmoidPrepare / SigmoidEval): input and output zero points 0, output
scale 1/32768.  Prepare sets input_left_shift = 12 + log2(in_scale); unless that is 0 for a
power-of-two scale (2^-12), it computes input_multiplier = (int)(in_scale·4096·3·2^k), doubling
(k = input_left_shift) while ≤ 16383.5, which puts x on a 1/(3·4096) grid.

* ``reference_integer_ops::Logistic`` (:func:`logistic_int16_table`): x' = (x·multiplier + round)
  >> left_shift (int32 arithmetic: it wraps for input scales above about 5.3; a multiplier of 0 —
  the power-of-two scale — is read as 3 << left_shift); a 256-entry table of sigmoid(i/24)
  (unsigned Q0.16) interpolated on the low 9 bits gives the Q0.15 result.
* ``optimized_ops::Logistic`` (:func:`logistic_int16_gemmlowp`): ``gemmlowp::logistic`` on the input
  read as Q3.12 (exp on negative values, then Newton-Raphson 1/(1+x)).
* ``Variant.int16_logistic_tanh`` (:func:`int16_uses_table`): the reference kernels run the table
  for every scale; litert's x86 build runs it only for a multiplier > 0 — a power-of-two scale, and
  absurd scales whose multiplier became INT32_MIN (above about 1.7e5) or 0 (below about 3.8e-14),
  go to gemmlowp (measured on every int16 value for scales from 1e-45 to 3e38).

float32 — ``Variant.float_activations``: ``reference_ops::Logistic`` is 1 / (1 + expf(−x)), with
cut-offs: 1 above 16.619047, expf(x) below −9.  litert's x86 build (``optimized_ops::Logistic``)
evaluates Eigen's ``scalar_logistic_op`` over the whole tensor: packets of 4 compute
e = exp(min(x, 16.6355324)/2)² with Eigen's degree-5 polynomial (0 below −104) and e/(1 + e); the
last n mod 4 values use expf(min(x, 16.6355324)) (:func:`quant.eigen_apply_f32`).

The speed layer: ``workbench/interpreter/fast/activations.py``.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._unary import (
    I8,
    I16,
    U8,
    LutData,
    UnaryData,
    check_same_type,
    eigen_logistic_f32,
    libm_f32,
    lut_lookup,
    prepare_lut,
    require_zero_points,
)

_SIGMOID = quant.sigmoid_table_uint16()
_UPPER, _LOWER = np.float32(16.619047164916992188), np.float32(-9.0)


@opdata
class LogisticInt16Data(OpData):
    shape: tuple
    input_scale: float
    input_multiplier: int          # 0 on the power-of-two path
    input_left_shift: int
    power_of_two: bool             # True: the scale is 2^-12 (the multiplier stays 0)


def int16_scaling(context, node, max_left_shift: int):
    """TanhPrepare / SigmoidPrepare for int16: (in_scale, input_multiplier, input_left_shift, power_of_two).

    The power-of-two path needs CheckedLog2(in_scale) and 12 + log2 ≤ ``max_left_shift``
    (0 for LOGISTIC, 1 for TANH); otherwise the multiplier moves the input to scale 1/(3·4096).
    """
    x, y = node.inputs[0], node.outputs[0]
    in_s, in_zp = quant.tensor_scale_zp(context, x)
    out_s, out_zp = quant.tensor_scale_zp(context, y)
    require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
    pot, log2 = quant.checked_log2(in_s)
    shift = 12 + log2
    pot = pot and 0 <= shift <= max_left_shift
    multiplier = 0
    if not pot:
        mult = float(np.float32(in_s)) * 4096.0 * 3.0
        shift = 0
        while mult <= 32767.0 / 2.0 and shift <= 30:
            shift += 1
            mult *= 2.0
        # static_cast<int32_t>(double) as x86 does it: truncation, INT32_MIN beyond the int32 range
        multiplier = int(quant.float_to_int32(np.array([mult]))[0])
    ok, out_log2 = quant.checked_log2(out_s)
    if not ok or out_log2 != -15:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): int16 output scale {out_s:g} must be "
                                 f"2^-15 (TFLite checks CheckedLog2(scale) == -15)")
    return in_s, multiplier, shift, pot


def int16_uses_table(variant, multiplier: int) -> bool:
    """``Variant.int16_logistic_tanh``: does int16 LOGISTIC / TANH read the sigmoid table (else gemmlowp)?"""
    return variant.int16_logistic_tanh == "table" or multiplier > 0


def on_sigmoid_grid(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """x moved onto the 1/(3·4096) grid: (x·multiplier + round) >> left_shift in int32; a multiplier
    of 0 (power-of-two scale) is 3 << left_shift with no shift."""
    if multiplier == 0:
        multiplier, left_shift = 3 << left_shift, 0
    rnd = (1 << (left_shift - 1)) if left_shift > 0 else 0
    return quant.wrap_bits(x.astype(np.int64) * multiplier + rnd, 32) >> left_shift


def logistic_int16_table(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """``reference_integer_ops::Logistic`` for int16 (table of sigmoid(i/24), 9 fraction bits)."""
    v = on_sigmoid_grid(x, multiplier, left_shift)
    a = np.abs(v)
    uh, ut = a >> 9, a & 0x1FF
    idx = np.minimum(uh, 254)
    ua, ub = _SIGMOID[idx], _SIGMOID[idx + 1]
    result = np.where(uh >= 255, 0x7FFF << 10, (ua << 9) + ut * (ub - ua))
    result = np.where(v >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1)
    return quant.wrap_bits(result >> 10, 16).astype(np.int16)


def logistic_int16_gemmlowp(x: np.ndarray) -> np.ndarray:
    """``optimized_ops::Logistic`` for int16: gemmlowp logistic, Q3.12 in, Q0.15 out."""
    return quant.fp_logistic(x.astype(np.int64), 3, 16).astype(np.int16)


def logistic_float_libm(x: np.ndarray) -> np.ndarray:
    """``reference_ops::Logistic``: 1 above 16.619047, expf(x) below −9, else 1 / (1 + expf(−x))."""
    x = np.asarray(x, np.float32)
    low = x < _LOWER
    with np.errstate(all="ignore"):
        e = libm_f32("expf", np.where(low, x, -x))
        r = np.where(low, e, (np.float32(1) / (np.float32(1) + e).astype(np.float32)))
        return np.where(x > _UPPER, np.float32(1), r).astype(np.float32)


@kernel(BuiltinOperator.LOGISTIC, versions=(1, 2, 3))
class Logistic(Kernel):
    name = "logistic"

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, (F32, U8, I8, I16))
        shape = context.shape(x)
        if dt == F32:
            context.set_output(node.outputs[0], shape, F32)
            return UnaryData(shape)
        check_same_type(context, node, dt)
        if dt == I16:
            d = LogisticInt16Data(shape, *int16_scaling(context, node, 0))
        else:
            out_s, _ = quant.tensor_scale_zp(context, node.outputs[0])
            if float(np.float32(out_s)) != 1.0 / 256:
                raise UnsupportedOpError(f"LOGISTIC (node {node.index}): {dt} output scale {out_s:g} must be "
                                         f"exactly 1/256 (TFLite checks output->params.scale == 1. / 256)")
            d = prepare_lut(context, node, dt, quant.logistic_f32)
        context.set_output(node.outputs[0], shape, dt)
        return d

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is LogisticInt16Data:
            if int16_uses_table(context.variant, d.input_multiplier):
                out[...] = logistic_int16_table(x, d.input_multiplier, d.input_left_shift)
            else:
                out[...] = logistic_int16_gemmlowp(x)
        elif type(d) is LutData:
            out[...] = lut_lookup(x, d)
        elif context.variant.float_activations == "eigen":
            out[...] = eigen_logistic_f32(x)
        else:
            out[...] = logistic_float_libm(x)
