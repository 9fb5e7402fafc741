"""LOGISTIC: 1 / (1 + exp(-x)) — float32 (v1), uint8 (v1), int8 (v2), int16 (v3).

uint8 / int8: TFLite's default kernel builds a 256-entry LUT in prepare
(``LUTPopulate``: 1.0f / (1.0f + expf(−d)) in float32, TFLITE_FACTS §4.10); the output scale must
be exactly 1/256 (the zero point is not checked on this path).

int16 (``activations.cc`` SigmoidPrepare / SigmoidEval): input and output zero points 0, output
scale 1/32768.  Two arithmetic paths, chosen by the input scale:

* input scale 2^-12 (CheckedLog2 finds a power of two and input_left_shift = 12 + log2 = 0):
  the input is read as a gemmlowp fixed-point number with 3 integer bits and ``gemmlowp::logistic``
  (exp on negative values, then Newton-Raphson 1/(1+x)) gives the Q0.15 output — what litert runs
  (``optimized_ops::Logistic``; its SSE/NEON variants are bit-exact with the scalar one).
* any other scale: input_multiplier = (int)(in_scale·4096·3·2^k), doubled (k = input_left_shift)
  while it is ≤ 16383.5; x' = (x·input_multiplier + round) >> input_left_shift puts the input on a
  1/(3·4096) grid, and a 256-entry table of sigmoid(i/24) (unsigned Q0.16) with linear
  interpolation on the low 9 bits gives the result (``reference_integer_ops::Logistic``, which
  litert also runs for these scales).  x·input_multiplier is int32 arithmetic: for input scales
  above about 5.3 it wraps, and so does this kernel.
* absurd input scales: above about 1.7e5 the multiplier leaves the int32 range and x86's
  conversion makes it INT32_MIN; below about 3.8e-14 it truncates to 0 even after the largest
  left shift (31).  SigmoidEval runs the table kernel only for ``input_multiplier > 0``, so both
  end up in the gemmlowp kernel, which reads the input as Q3.12 whatever its scale — what litert
  computes, and so does this kernel (checked on every int16 value for scales from 1e-45 to 3e38).

float32 (``optimized_ops::Logistic``): Eigen's ``scalar_logistic_op`` over the whole tensor, not
1/(1 + expf(−x)).  Packets of 4 compute e = exp(min(x, 16.6355324)/2)² with Eigen's own degree-5
polynomial (0 below −104) and e/(1 + e); the last n mod 4 values use expf(min(x, 16.6355324)) —
see ``_unary``'s float32 section and :func:`quant.eigen_apply_f32`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import OpData, kernel, opdata
from .. import quant
from ._unary import (I8, I16, U8, UnaryKernel, eigen_logistic_f32, invoke_quantized, require_zero_points,
                     run_float_unary)

_SIGMOID = quant.sigmoid_table_uint16()


@opdata
class LogisticInt16Data(OpData):
    shape: tuple
    input_scale: float
    input_multiplier: int          # 0 on the power-of-two path
    input_left_shift: int
    power_of_two: bool             # True: gemmlowp fixed-point logistic; False: sigmoid table
    table: object = dataclasses.field(default=None, repr=False)
    impl: str = "table"


def int16_scaling(context, node, max_left_shift: int):
    """TanhPrepare / SigmoidPrepare for int16: (input_multiplier, input_left_shift, power_of_two).

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
        # static_cast<int32_t>(double) as x86 does it: truncation, INT32_MIN beyond the int32 range.
        # Below 2^31 the kernel's int32 product x·multiplier can still wrap (input scales above about
        # 5.3): the lookups compute it in int32 as the C code does.  A multiplier that is not > 0
        # (INT32_MIN above about 1.7e5, 0 below about 3.8e-14 even after a left shift of 31) sends
        # litert's SigmoidEval / TanhEval to the gemmlowp kernel, which reads the input as Q3.12.
        multiplier = int(quant.float_to_int32(np.array([mult]))[0])
    ok, out_log2 = quant.checked_log2(out_s)
    if not ok or out_log2 != -15:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): int16 output scale {out_s:g} must be "
                                 f"2^-15 (TFLite checks CheckedLog2(scale) == -15)")
    return in_s, multiplier, shift, pot


def sigmoid_int16_reference(x: np.ndarray, multiplier: int, left_shift: int) -> np.ndarray:
    """``reference_integer_ops::Logistic`` for int16 (table of sigmoid(i/24), 9 fraction bits)."""
    if multiplier == 0:
        multiplier, left_shift = 3 << left_shift, 0
    rnd = (1 << (left_shift - 1)) if left_shift > 0 else 0
    v = quant.wrap_bits(x.astype(np.int64) * multiplier + rnd, 32) >> left_shift      # int32 arithmetic
    a = np.abs(v)
    uh = a >> 9
    ut = a & 0x1FF
    idx = np.minimum(uh, 254)
    ua = _SIGMOID[idx]
    ub = _SIGMOID[idx + 1]
    result = np.where(uh >= 255, 0x7FFF << 10, (ua << 9) + ut * (ub - ua))
    result = np.where(v >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1)
    return quant.wrap_bits(result >> 10, 16).astype(np.int16)


def logistic_int16_gemmlowp(x: np.ndarray) -> np.ndarray:
    """``optimized_ops::Logistic`` for int16: gemmlowp logistic, Q3.12 in, Q0.15 out."""
    return quant.fp_logistic(x.astype(np.int64), 3, 16).astype(np.int16)


def reference(x):
    """Eigen's logistic as litert runs it on a float32 tensor (packets, then one-value tail)."""
    return eigen_logistic_f32(x)


@kernel(BuiltinOperator.LOGISTIC, versions=(1, 2, 3))
class Logistic(UnaryKernel):
    name = "logistic"
    qtypes = (U8, I8, I16)
    lut = staticmethod(quant.logistic_f32)

    def prepare_quantized(self, context, node, dt):
        if dt == I16:
            in_s, m, sh, pot = int16_scaling(context, node, 0)
            return LogisticInt16Data(context.shape(node.inputs[0]), in_s, m, sh, pot)
        out_s, _ = quant.tensor_scale_zp(context, node.outputs[0])
        if float(np.float32(out_s)) != 1.0 / 256:
            raise UnsupportedOpError(f"LOGISTIC (node {node.index}): {dt} output scale {out_s:g} must be exactly "
                                     f"1/256 (TFLite checks output->params.scale == 1. / 256)")
        return super().prepare_quantized(context, node, dt)

    def reference_quantized(self, x, d):
        if type(d) is LogisticInt16Data:
            if d.input_multiplier <= 0:          # SigmoidEval: the reference kernel only for a multiplier > 0
                return logistic_int16_gemmlowp(x)
            return sigmoid_int16_reference(x, d.input_multiplier, d.input_left_shift)
        return super().reference_quantized(x, d)

    def invoke(self, context, node, d):
        if invoke_quantized(self, context, node, d):
            return
        run_float_unary("logistic", context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
