"""SOFTMAX (float32) over the last axis: exp(beta * (x - max)) / sum.

``beta`` comes from TFLite's parser view: an absent options table makes it 0 (every output equal).
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32


@opdata
class SoftmaxData(OpData):
    beta: float
    axis: int


def reference(x: np.ndarray, beta: float) -> np.ndarray:
    z = (x.astype(np.float64) - x.max(axis=-1, keepdims=True)) * beta
    e = np.exp(z)
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


@kernel(BuiltinOperator.SOFTMAX, versions=(1,))
class Softmax(Kernel):
    name = "softmax"

    def prepare(self, context, node):
        x_t = node.inputs[0]
        context.expect_dtype(node, x_t, (F32,))
        shape = context.shape(x_t)
        context.set_output(node.outputs[0], shape, F32)
        return SoftmaxData(float(node.params["beta"]), len(shape) - 1)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        np.subtract(x, x.max(axis=-1, keepdims=True), out=out)
        if d.beta != 1.0:
            out *= np.float32(d.beta)
        np.exp(out, out=out)
        out /= out.sum(axis=-1, keepdims=True)

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.beta)
