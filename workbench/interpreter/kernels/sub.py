"""SUB: a - b with broadcasting and a fused activation — float32 and int32 (v1), uint8 (v1), int8 (v2),
broadcasting beyond rank 4 (v3), int64 (v4), int16 quantized with general scales (v5) or with
``pot_scale_int16`` (v1).  TFLite's SUB has no unquantized int16 and no float16.

The quantized arithmetic is in ``_binary.py``, the plain int32 / int64 one in ``_binary_plain.py``.
SUB accepts an output multiplier ≥ 1, which TFLite applies with a shift by a negative count
(undefined in C): what litert's x86 build makes of it depends on which of its loops the compiler
vectorised (``_binary.add_sub_general``; int16 broadcasts differ between the variants).
The speed layer: ``workbench/interpreter/fast/binary.py``.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._binary import BinaryData, BinaryKernel, add_sub_general, add_sub_pot_int16, float_binary, with_vector_loop
from ._binary_plain import PlainBinaryData, plain_binary
from ._common import F32, I8, I16, I32, I64, U8


def sub_quantized(a, b, d) -> np.ndarray:
    """TFLite's quantized SUB with general scales — ``reference_ops::Sub`` / ``BroadcastQuantSubSlow``
    (the int8 elementwise loop is ``reference_integer_ops::Add``'s with the second input negated) — and
    ``reference_ops::Sub16`` on power-of-two int16 scales.  Where ``d.vector_mask`` marks them (an
    output multiplier ≥ 1), the vectorised loop's values."""
    if d.path == "pot_int16":
        return add_sub_pot_int16(a, b, d, -1)
    return with_vector_loop("sub", a, b, d, add_sub_general(a, b, d, -1))


@kernel(BuiltinOperator.SUB, versions=(1, 2, 3, 4, 5))
class Sub(BinaryKernel):
    name = "sub"
    ufunc = np.subtract
    dtypes = (F32, I32, I64)
    plain = (I32, I64)
    int8_kind = "sub"
    qtypes = (U8, I8, I16)

    def invoke(self, context, node, d):
        t = context.tensors
        a, b, out = t[node.inputs[0]], t[node.inputs[1]], t[node.outputs[0]]
        if type(d) is BinaryData:
            float_binary(np.subtract, a, b, d, out)
        elif type(d) is PlainBinaryData:
            out[...] = plain_binary(np.subtract, a, b, d)
        else:
            out[...] = sub_quantized(a, b, d)
