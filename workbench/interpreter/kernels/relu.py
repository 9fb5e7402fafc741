"""RELU (float32): max(x, 0)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._unary import UnaryKernel


def reference(x):
    return np.where(x > 0, x, np.float32(0)).astype(np.float32)


@kernel(BuiltinOperator.RELU, versions=(1,))
class Relu(UnaryKernel):
    name = "relu"

    def invoke(self, context, node, d):
        np.maximum(context.tensors[node.inputs[0]], np.float32(0), out=context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
