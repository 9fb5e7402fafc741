"""RELU (float32): max(x, 0)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._unary import UnaryKernel, invoke_int8


def reference(x):
    return np.where(x > 0, x, np.float32(0)).astype(np.float32)


@kernel(BuiltinOperator.RELU, versions=(1, 2))
class Relu(UnaryKernel):
    name = "relu"
    relu_range = (0.0, None)

    def invoke(self, context, node, d):
        if invoke_int8(context, node, d):
            return
        np.maximum(context.tensors[node.inputs[0]], np.float32(0), out=context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_int8(context, node, d):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
