"""SQUARED_DIFFERENCE: (a - b)^2 with broadcasting — float32 and int32 (v1), int8 (v2).

int8 (``squared_difference.cc``): like a quantized SUB with ``left_shift`` = 7 — both inputs are
moved to a common scale (real = s_i / (2·max(s1, s2)), computed from a float32 2·max), their
difference d is squared in int32 and requantized with real = (2·max)^2 / (2^14 · s_out); + output
zero point, clamped to int8.  Broadcasting follows ``BroadcastBinaryFunction4DSlow`` (the same
per-element arithmetic).  Both builds of TFLite compute the same bits (no variant).  The speed layer:
``workbench/interpreter/fast/binary.py``."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import OpData, kernel, opdata
from ._common import F32, I8, I32  # noqa: F401
from ._elementwise import MathBinaryKernel, broadcast_shape


@opdata
class SquaredDifferenceInt8Data(OpData):
    output_shape: tuple
    broadcast: bool
    input1_offset: int
    input2_offset: int
    output_offset: int
    left_shift: int
    input1_multiplier: int
    input1_shift: int
    input2_multiplier: int
    input2_shift: int
    output_multiplier: int
    output_shift: int
    real_input1_multiplier: float
    real_input2_multiplier: float
    real_output_multiplier: float


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``reference_ops::SquaredDifference`` (float32, int32): (a − b)², broadcasting."""
    with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
        return np.asarray(np.square(a - b), dtype=a.dtype)


def squared_difference_int8(a, b, d) -> np.ndarray:
    """``squared_difference.cc``'s int8 ``SquaredDifference`` per element: both inputs rescaled
    (MultiplyByQuantizedMultiplierSmallerThanOneExp of v·2^7), their difference squared in int32,
    requantized, + output zero point, clamped to int8."""
    mb = quant.multiply_by_quantized_multiplier_array
    x = (np.asarray(a).astype(np.int64) + d.input1_offset) << d.left_shift
    y = (np.asarray(b).astype(np.int64) + d.input2_offset) << d.left_shift
    diff = mb(x, d.input1_multiplier, d.input1_shift) - mb(y, d.input2_multiplier, d.input2_shift)
    raw = mb(quant.wrap_bits(diff * diff, 32), d.output_multiplier, d.output_shift) + d.output_offset
    return np.clip(raw, -128, 127).astype(np.int8)


@kernel(BuiltinOperator.SQUARED_DIFFERENCE, versions=(1, 2))
class SquaredDifference(MathBinaryKernel):
    name = "squared_difference"
    dtypes = (F32, I32, I8)
    fn = staticmethod(reference)

    def prepare(self, context, node):
        a, b, y = node.inputs[0], node.inputs[1], node.outputs[0]
        if context.dtype(a) != I8:
            return super().prepare(context, node)
        if context.dtype(b) != I8 or context.dtype(y) != I8:
            raise UnsupportedOpError(f"SQUARED_DIFFERENCE (node {node.index}): int8 input with "
                                     f"{context.dtype(b)} / {context.dtype(y)}; TFLite needs int8 throughout")
        out = broadcast_shape(node, context, a, b)
        s1, z1 = quant.tensor_scale_zp(context, a)
        s2, z2 = quant.tensor_scale_zp(context, b)
        so, zo = quant.tensor_scale_zp(context, y)
        left = 7
        twice_max = float(np.float32(2) * max(np.float32(s1), np.float32(s2)))
        r1 = float(np.float32(s1)) / twice_max
        r2 = float(np.float32(s2)) / twice_max
        ro = (twice_max * twice_max) / float(np.float32(np.float32(1 << (2 * left)) * np.float32(so)))
        try:
            m1, sh1 = quant.quantize_multiplier_smaller_than_one_exp(r1)
            m2, sh2 = quant.quantize_multiplier_smaller_than_one_exp(r2)
            mo, sho = quant.quantize_multiplier_smaller_than_one_exp(ro)
        except ValueError:
            raise UnsupportedOpError(f"SQUARED_DIFFERENCE (node {node.index}): output multiplier {ro:.6g} is not "
                                     f"below 1 (the output scale is too small); TFLite's kernel aborts on it") from None
        context.set_output(y, out, I8)
        return SquaredDifferenceInt8Data(out, context.shape(a) != context.shape(b), -z1, -z2, zo, left, m1, sh1,
                                         m2, sh2, mo, sho, r1, r2, ro)

    def invoke(self, context, node, d):
        t = context.tensors
        a, b = t[node.inputs[0]], t[node.inputs[1]]
        if type(d) is SquaredDifferenceInt8Data:
            t[node.outputs[0]][...] = squared_difference_int8(a, b, d)
        else:
            t[node.outputs[0]][...] = reference(a, b)
