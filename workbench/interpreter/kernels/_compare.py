"""What the six comparison ops share (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL).

Two inputs of the same type, numpy broadcasting (any rank, as litert), a bool output.  How the
values are compared depends on the type (TFLite's ``comparisons.cc``):

* float32, float16, int32, int64, bool: the values themselves;
* string (EQUAL and NOT_EQUAL only): the bytes, compared exactly;
* int8 and uint8 — always *rescaled* first, even when both inputs share a scale.  Each side
  becomes an int32 number on a common fixed-point grid::

      shifted = (q - zero_point) * 2^8                      (left_shift = 8)
      scaled  = MultiplyByQuantizedMultiplierSmallerThanOneExp(shifted, multiplier, shift)

  with (multiplier, shift) = QuantizeMultiplier(scale) of *that input's* scale, and the two
  ``scaled`` values are compared.  So ``q1 == q2`` asks whether the two real numbers are equal to
  the precision of the grid, not whether the stored bytes are;
* int16: LESS, LESS_EQUAL, GREATER and GREATER_EQUAL compare the raw int16 values (no rescaling
  even when quantized); EQUAL rescales as above when the input is quantized and compares raw values
  when it is not; NOT_EQUAL rescales when quantized and, unquantized, writes nothing in TFLite
  (the output keeps whatever was in memory), so it is refused here.

Refused where TFLite fails or is undefined: int8/uint8 without quantization parameters (the
multiplier of scale 0 fails a CHECK: litert aborts), a scale of exactly 1 (aborts) or above 1
(the fixed-point right shift gets a negative exponent: undefined behaviour in C), several
(per-channel) scales.

Both builds of TFLite compare alike (no variant).  The speed layer (``fast/binary.py``) looks the
rescaled values up in a table of every value of the type.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ..context import is_string
from ..quant import (
    INT32_MAX,
    INT32_MIN,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_array,
    quant_params,
    quantize_multiplier,
)
from ..registry import Kernel, OpData, opdata
from ._common import BOOL, F16, F32, I8, I16, I32, I64, U8
from ._elementwise import broadcast_shape, refuse

STR = np.dtype(object)

LEFT_SHIFT = 8

PLAIN = (F32, F16, I32, I64)
ORDERED = PLAIN + (I8, U8, I16)                 # LESS, LESS_EQUAL, GREATER, GREATER_EQUAL
EQUALITY = ORDERED + (BOOL, STR)                # EQUAL, NOT_EQUAL


@opdata
class ComparisonData(OpData):
    output_shape: tuple
    dtype: str
    requires_broadcast: bool
    rescaled: bool                      # int8/uint8 (and quantized int16 for EQUAL / NOT_EQUAL)
    left_shift: int = 0
    input1_offset: int = 0              # = -zero_point, TFLite's ComparisonParams names
    input1_multiplier: int = 0
    input1_shift: int = 0
    input2_offset: int = 0
    input2_multiplier: int = 0
    input2_shift: int = 0


def _wrap32(v):
    return ((np.asarray(v, np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def scaled_value(q: int, offset: int, multiplier: int, shift: int) -> int:
    """One input value on the comparison grid (the obvious scalar arithmetic)."""
    shifted = int(_wrap32((int(offset) + int(q)) * (1 << LEFT_SHIFT)))
    return multiply_by_quantized_multiplier(shifted, multiplier, shift)


def scaled_array(q: np.ndarray, offset: int, multiplier: int, shift: int) -> np.ndarray:
    """:func:`scaled_value` on an array (int64 numpy arithmetic)."""
    shifted = _wrap32((np.asarray(q, np.int64) + int(offset)) * (1 << LEFT_SHIFT))
    return multiply_by_quantized_multiplier_array(shifted, multiplier, shift)


def _multiplier(context, node, t: int, what: str) -> tuple[int, int, int]:
    """(offset, multiplier, shift) of an input that TFLite rescales."""
    scales, zps, _ = quant_params(context, t)
    dt = context.dtype(t)
    if len(scales) == 0 or float(scales[0]) == 0.0:
        refuse(node, f"{what} '{context.name(t)}' is {dt} without quantization parameters; TFLite rescales "
                     f"{dt} comparison inputs by their scale and fails (aborts) on a missing scale")
    if len(scales) > 1:
        refuse(node, f"{what} '{context.name(t)}' has {len(scales)} (per-channel) scales; comparisons take one")
    scale = float(scales[0])        # a float32, as in TfLiteQuantizationParams, widened to double
    if not 0.0 < scale < 1.0:
        refuse(node, f"{what} '{context.name(t)}' has scale {scale:g}; TFLite's comparison rescaling "
                     f"(QuantizeMultiplierSmallerThanOneExp) needs 0 < scale < 1 (1 aborts, above 1 is undefined)")
    m, shift = quantize_multiplier(scale)
    if shift > 0:
        refuse(node, f"{what} '{context.name(t)}' has scale {scale!r}, which rounds to a multiplier of 1 "
                     f"(TFLite's QuantizeMultiplierSmallerThanOneExp check fails)")
    zp = int(zps[0])
    if not INT32_MIN <= zp <= INT32_MAX:
        refuse(node, f"{what} '{context.name(t)}' has zero point {zp}, outside int32")
    return int(_wrap32(-zp)), m, shift


class ComparisonKernel(Kernel):
    """Base of the comparison kernels: set ``fn`` (a numpy comparison), ``dtypes`` and ``int16``."""

    dtypes = ORDERED
    int16 = "plain"          # "plain", "rescale if quantized" (EQUAL), "rescale, quantized only" (NOT_EQUAL)

    @staticmethod
    def fn(a, b):
        raise NotImplementedError

    def prepare(self, context, node):
        a, b = node.inputs[0], node.inputs[1]
        dt = context.dtype(a)
        if dt is None or dt not in self.dtypes:
            got = context.type_name(a) if dt is None else ("string" if is_string(dt) else str(dt))
            names = "/".join("string" if is_string(d) else str(d) for d in self.dtypes)
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): input 0 "
                                     f"'{context.name(a)}' is {got}; this kernel handles {names}")
        if context.dtype(b) != dt:
            refuse(node, f"inputs have types {context.type_name(a)} and {context.type_name(b)}; TFLite needs "
                         f"them equal")
        out = broadcast_shape(node, context, a, b)
        context.set_output(node.outputs[0], out, BOOL)
        bcast = context.shape(a) != context.shape(b)
        rescale = dt in (I8, U8)
        if dt == I16 and self.int16 != "plain":
            quantized = len(quant_params(context, a)[0]) > 0
            if quantized:
                rescale = True
            elif self.int16 == "rescale, quantized only":
                refuse(node, "an int16 NOT_EQUAL needs quantized inputs: for unquantized int16 TFLite writes no "
                             "output (it keeps whatever was in memory)")
        if not rescale:
            return ComparisonData(tuple(out), "string" if is_string(dt) else str(dt), bcast, False)
        o1, m1, s1 = _multiplier(context, node, a, "input 0")
        o2, m2, s2 = _multiplier(context, node, b, "input 1")
        return ComparisonData(tuple(out), str(dt), bcast, True, LEFT_SHIFT, o1, m1, s1, o2, m2, s2)

    def invoke(self, context, node, d):
        """``reference_ops::Comparison`` / ``BroadcastComparison4DSlow`` with ``fn``; rescaled types go
        through ``ComparisonWithScaling`` first (:func:`scaled_array` of each input)."""
        t = context.tensors
        a, b = t[node.inputs[0]], t[node.inputs[1]]
        if d.rescaled:
            a = scaled_array(a, d.input1_offset, d.input1_multiplier, d.input1_shift)
            b = scaled_array(b, d.input2_offset, d.input2_multiplier, d.input2_shift)
        t[node.outputs[0]][...] = self.fn(a, b)
