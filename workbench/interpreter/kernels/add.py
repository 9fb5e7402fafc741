"""ADD: a + b with numpy broadcasting and a fused activation — float32 and int32 (v1), uint8 (v1),
int8 (v2), int16 quantized with general scales (v3) or with ``pot_scale_int16`` (v1), int64 (v4),
int16 without quantization (v5), float16 (v6).  See ``_binary.py`` for the quantized arithmetic
and ``_binary_plain.py`` for the plain int32 / int64 / float16 one (activation clamps of the
tensor's own type; float16 saturates at ±65504)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._binary import BinaryKernel
from ._binary_plain import F16, I32, I64, PlainBinaryData, invoke_plain, prepare_plain, reference_plain
from ._common import F32
from ._unary import I8, I16, U8


@kernel(BuiltinOperator.ADD, versions=(1, 2, 3, 4, 5, 6))
class Add(BinaryKernel):
    name = "add"
    ufunc = np.add
    dtypes = (F32, I32, I64, F16)
    int8_kind = "add"
    qtypes = (U8, I8, I16)
    plain = (I32, I64, F16)

    def prepare(self, context, node):
        dt = context.dtype(node.inputs[0])
        if dt in self.plain and context.dtype(node.inputs[1]) == dt:
            return prepare_plain(self, context, node, dt)
        return super().prepare(context, node)

    def invoke(self, context, node, d):
        if type(d) is PlainBinaryData:
            t = context.tensors
            return invoke_plain(self.ufunc, t[node.inputs[0]], t[node.inputs[1]], d, t[node.outputs[0]])
        return super().invoke(context, node, d)

    def invoke_reference(self, context, node, d):
        if type(d) is PlainBinaryData:
            t = context.tensors
            t[node.outputs[0]][...] = reference_plain(self.int8_kind, t[node.inputs[0]], t[node.inputs[1]], d)
            return
        return super().invoke_reference(context, node, d)
