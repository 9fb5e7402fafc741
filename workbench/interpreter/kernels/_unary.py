"""What the elementwise activations share: same shape and dtype out, no options."""

from __future__ import annotations

from ..registry import Kernel, OpData, opdata
from ._common import F32


@opdata
class UnaryData(OpData):
    shape: tuple


class UnaryKernel(Kernel):
    dtypes = (F32,)

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, self.dtypes)
        context.set_output(node.outputs[0], context.shape(x), dt)
        return UnaryData(context.shape(x))
