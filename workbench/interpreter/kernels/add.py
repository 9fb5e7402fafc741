"""ADD: a + b with numpy broadcasting and a fused activation — float32 and int32 (v1), uint8 (v1),
int8 (v2), int16 quantized with general scales (v3) or with ``pot_scale_int16`` (v1), int64 (v4),
int16 without quantization (v5), float16 (v6).

The quantized arithmetic is in ``_binary.py`` (TFLite's ``ArithmeticParams``: a common fixed-point
scale for both inputs, then the output's), the plain int32 / int64 / float16 one in ``_binary_plain.py``
(activation clamps of the tensor's own type; float16 saturates at ±65504).  Under the ``litert-x86``
variant the 8-bit and int16 ADD take litert's NEON loop values where it runs them
(``Variant.neon_narrowing``).  The speed layer: ``workbench/interpreter/fast/binary.py``.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._binary import (
    BinaryData,
    BinaryKernel,
    add_sub_general,
    add_sub_pot_int16,
    float_binary,
    plain_int16,
    with_vector_loop,
)
from ._binary_plain import PlainBinaryData, plain_binary
from ._common import F16, F32, I8, I16, I32, I64, U8


def add_quantized(a, b, d) -> np.ndarray:
    """``reference_integer_ops::Add`` (int8), ``reference_ops::Add`` (uint8, int16 with general scales)
    and their ``BroadcastAdd6DSlow`` versions; ``reference_ops::Add`` int16 on power-of-two scales;
    plain int16 (no quantization) wrapping.  Where ``d.vector_mask`` marks them (variant litert-x86),
    litert's NEON loop values."""
    if d.path == "pot_int16":
        return add_sub_pot_int16(a, b, d, 1)
    if d.path == "plain int16":
        return plain_int16(a, b, d, "add")
    return with_vector_loop("add", a, b, d, add_sub_general(a, b, d, 1))


@kernel(BuiltinOperator.ADD, versions=(1, 2, 3, 4, 5, 6))
class Add(BinaryKernel):
    name = "add"
    ufunc = np.add
    dtypes = (F32, I32, I64, F16)
    plain = (I32, I64, F16)
    int8_kind = "add"
    qtypes = (U8, I8, I16)

    def invoke(self, context, node, d):
        t = context.tensors
        a, b, out = t[node.inputs[0]], t[node.inputs[1]], t[node.outputs[0]]
        if type(d) is BinaryData:
            float_binary(np.add, a, b, d, out)
        elif type(d) is PlainBinaryData:
            out[...] = plain_binary(np.add, a, b, d)
        else:
            out[...] = add_quantized(a, b, d)
