"""PAD: zero padding per axis (version 4: rank above 4).  Zero, not a zero point: float and int32 only."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._pad import PadKernel


@kernel(BuiltinOperator.PAD, versions=(1, 4))
class Pad(PadKernel):
    name = "pad"

    def prepare(self, context, node):
        context.expect_dtype(node, node.inputs[0], ("float32", "int32"))
        return super().prepare(context, node)
