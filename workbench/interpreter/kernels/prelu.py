"""PRELU (float32): x if x >= 0 else alpha * x, ``alpha`` (input 1) broadcast against x."""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32


@opdata
class PreluData(OpData):
    output_shape: tuple


def reference(x, alpha):
    return np.where(x >= 0, x, x * alpha).astype(np.float32)


@kernel(BuiltinOperator.PRELU, versions=(1,))
class Prelu(Kernel):
    name = "prelu"

    def prepare(self, context, node):
        x, a = node.inputs[0], node.inputs[1]
        context.expect_dtype(node, x, (F32,))
        context.expect_dtype(node, a, (F32,), "alpha")
        try:
            out = tuple(np.broadcast_shapes(context.shape(x), context.shape(a)))
        except ValueError:
            raise UnsupportedOpError(f"PRELU (node {node.index}): alpha {list(context.shape(a))} does not broadcast "
                                     f"against {list(context.shape(x))}") from None
        context.set_output(node.outputs[0], out, F32)
        return PreluData(out)

    def invoke(self, context, node, d):
        t = context.tensors
        x, out = t[node.inputs[0]], t[node.outputs[0]]
        np.multiply(x, t[node.inputs[1]], out=out)
        np.copyto(out, x, where=x >= 0)

    def invoke_reference(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]][...] = reference(t[node.inputs[0]], t[node.inputs[1]])
