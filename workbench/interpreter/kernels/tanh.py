"""TANH (float32)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from .. import quant
from ._unary import UnaryKernel, invoke_int8


def reference(x):
    return np.tanh(x.astype(np.float64)).astype(np.float32)


@kernel(BuiltinOperator.TANH, versions=(1, 2))
class Tanh(UnaryKernel):
    name = "tanh"
    lut = staticmethod(quant.tanh_f32)

    def invoke(self, context, node, d):
        if invoke_int8(context, node, d):
            return
        np.tanh(context.tensors[node.inputs[0]], out=context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_int8(context, node, d):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
