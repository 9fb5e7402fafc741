"""RELU6 (float32): min(max(x, 0), 6)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._unary import UnaryKernel, invoke_int8


def reference(x):
    return np.minimum(np.where(x > 0, x, 0), 6).astype(np.float32)


@kernel(BuiltinOperator.RELU6, versions=(1, 2))
class Relu6(UnaryKernel):
    name = "relu6"
    relu_range = (0.0, 6.0)

    def invoke(self, context, node, d):
        if invoke_int8(context, node, d):
            return
        np.clip(context.tensors[node.inputs[0]], np.float32(0), np.float32(6), out=context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_int8(context, node, d):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
