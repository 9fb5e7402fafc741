"""LOGISTIC (float32): 1 / (1 + exp(-x))."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from .. import quant
from ._unary import UnaryKernel, invoke_int8


def reference(x):
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(np.float32)


@kernel(BuiltinOperator.LOGISTIC, versions=(1, 2))
class Logistic(UnaryKernel):
    name = "logistic"
    lut = staticmethod(quant.logistic_f32)

    def invoke(self, context, node, d):
        if invoke_int8(context, node, d):
            return
        out = context.tensors[node.outputs[0]]
        with np.errstate(over="ignore"):       # exp(-x) = inf for x < -88 gives exactly 0
            np.negative(context.tensors[node.inputs[0]], out=out)
            np.exp(out, out=out)
        out += np.float32(1)
        np.reciprocal(out, out=out)

    def invoke_reference(self, context, node, d):
        if invoke_int8(context, node, d):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
