"""TANH (float32)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._unary import UnaryKernel


def reference(x):
    return np.tanh(x.astype(np.float64)).astype(np.float32)


@kernel(BuiltinOperator.TANH, versions=(1,))
class Tanh(UnaryKernel):
    name = "tanh"

    def invoke(self, context, node, d):
        np.tanh(context.tensors[node.inputs[0]], out=context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
