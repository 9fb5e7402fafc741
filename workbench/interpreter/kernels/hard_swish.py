"""HARD_SWISH (float32): x * min(6, max(0, x + 3)) / 6."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._unary import UnaryKernel


def reference(x):
    x = x.astype(np.float64)
    return (x * np.minimum(6.0, np.maximum(0.0, x + 3.0)) / 6.0).astype(np.float32)


@kernel(BuiltinOperator.HARD_SWISH, versions=(1,))
class HardSwish(UnaryKernel):
    name = "hard_swish"

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        np.add(x, np.float32(3), out=out)
        np.clip(out, np.float32(0), np.float32(6), out=out)
        out *= x
        out /= np.float32(6)

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
