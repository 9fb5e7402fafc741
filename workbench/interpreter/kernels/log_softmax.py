"""LOG_SOFTMAX (float32) over the last axis: x - max - log(sum(exp(x - max)))."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32


@opdata
class LogSoftmaxData(OpData):
    shape: tuple


def reference(x: np.ndarray) -> np.ndarray:
    v = x.astype(np.float64)
    m = v.max(axis=-1, keepdims=True)
    return (v - m - np.log(np.exp(v - m).sum(axis=-1, keepdims=True))).astype(np.float32)


@kernel(BuiltinOperator.LOG_SOFTMAX, versions=(1,))
class LogSoftmax(Kernel):
    name = "log_softmax"

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32,))
        context.set_output(node.outputs[0], context.shape(x), F32)
        return LogSoftmaxData(context.shape(x))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
