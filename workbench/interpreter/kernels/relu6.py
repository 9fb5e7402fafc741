"""RELU6 (float32): min(max(x, 0), 6)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._unary import UnaryKernel


def reference(x):
    return np.minimum(np.where(x > 0, x, 0), 6).astype(np.float32)


@kernel(BuiltinOperator.RELU6, versions=(1,))
class Relu6(UnaryKernel):
    name = "relu6"

    def invoke(self, context, node, d):
        np.clip(context.tensors[node.inputs[0]], np.float32(0), np.float32(6), out=context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
