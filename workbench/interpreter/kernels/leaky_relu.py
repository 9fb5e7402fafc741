"""LEAKY_RELU (float32): x if x > 0 else alpha * x (``alpha`` from LeakyReluOptions; 0 when absent)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32


@opdata
class LeakyReluData(OpData):
    alpha: float


def reference(x, alpha):
    return np.where(x > 0, x, x * np.float32(alpha)).astype(np.float32)


@kernel(BuiltinOperator.LEAKY_RELU, versions=(1,))
class LeakyRelu(Kernel):
    name = "leaky_relu"

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32,))
        context.set_output(node.outputs[0], context.shape(x), F32)
        return LeakyReluData(float(node.params["alpha"]))

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        np.multiply(x, np.float32(d.alpha), out=out)
        np.copyto(out, x, where=x > 0)

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.alpha)
