"""NEG: -x for float32, int32, int64, int8 and int16 (integers wrap like C; version 1).

TFLite's NEG has no quantized arithmetic: an int8 / int16 input is negated as plain integers and
its quantization parameters are ignored (``reference_ops::Negate``), so −(−128) = −128."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32
from ._elementwise import I32, I64
from ._unary import I8, I16, UnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.negative(x), dtype=x.dtype)


@kernel(BuiltinOperator.NEG, versions=(1,))
class Neg(UnaryKernel):
    name = "neg"
    dtypes = (F32, I32, I64, I8, I16)

    def invoke(self, context, node, d):
        np.negative(context.tensors[node.inputs[0]], out=context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        context.tensors[node.outputs[0]][...] = (-(x.astype(np.int64))).astype(x.dtype) if x.dtype.kind == "i" \
            else reference(x)
