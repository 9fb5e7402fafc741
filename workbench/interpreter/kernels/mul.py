"""MUL: a * b with numpy broadcasting and a fused activation — float32 and int32 (v1), uint8 (v1),
int8 (v2), any quantized type whose s1·s2/s_out ≥ 1 (v3), int16 quantized (v4; int16 × int16 →
int16, int8 or uint8), int64 (v5), complex64 (v6), int16 without quantization and uint32 (v7),
float16 (v8).

The quantized arithmetic is in ``_binary.py`` ((x − zp1)·(y − zp2) requantized with s1·s2/s_out in
float32), the plain types in ``_binary_plain.py`` (activation clamps of the tensor's own type;
float16 saturates at ±65504; complex64 products rounded to float32 one by one, no activation).
Under the ``litert-x86`` variant 8-bit MUL takes litert's NEON loop values where it runs them
(``Variant.neon_narrowing``: the product narrowed to int16).  The speed layer: ``fast/binary.py``.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._binary import (
    BinaryData,
    BinaryKernel,
    float_binary,
    mul_general,
    mul_int16_to_8bit,
    plain_int16,
    with_vector_loop,
)
from ._binary_plain import C64, PlainBinaryData, plain_binary
from ._common import F16, F32, I8, I16, I32, I64, U8, U32


def mul_quantized(a, b, d) -> np.ndarray:
    """``reference_integer_ops::Mul`` (int8, int16) / ``reference_ops::Mul`` (uint8) and
    ``BroadcastMul6DSlow``; int16 × int16 → 8 bit (the LSTM path); plain int16 wrapping.  Where
    ``d.vector_mask`` marks them (variant litert-x86), litert's NEON loop values."""
    if d.path == "int16→8bit":
        return mul_int16_to_8bit(a, b, d)
    if d.path == "plain int16":
        return plain_int16(a, b, d, "mul")
    return with_vector_loop("mul", a, b, d, mul_general(a, b, d))


@kernel(BuiltinOperator.MUL, versions=(1, 2, 3, 4, 5, 6, 7, 8))
class Mul(BinaryKernel):
    name = "mul"
    ufunc = np.multiply
    dtypes = (F32, I32, I64, U32, C64, F16)
    plain = (I32, I64, U32, C64, F16)
    int8_kind = "mul"
    qtypes = (U8, I8, I16)

    def invoke(self, context, node, d):
        t = context.tensors
        a, b, out = t[node.inputs[0]], t[node.inputs[1]], t[node.outputs[0]]
        if type(d) is BinaryData:
            float_binary(np.multiply, a, b, d, out)
        elif type(d) is PlainBinaryData:
            out[...] = plain_binary(np.multiply, a, b, d)
        else:
            out[...] = mul_quantized(a, b, d)
