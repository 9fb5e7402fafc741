"""PADV2: PAD with the fill value from input 2 (a scalar constant; 0 when absent)."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._pad import PadKernel


@kernel(BuiltinOperator.PADV2, versions=(1, 4))
class PadV2(PadKernel):
    name = "padv2"

    def constant(self, context, node, dtype):
        if node.input(2) < 0:
            return dtype.type(0)
        return dtype.type(context.require_value(node, 2, "the constant value").reshape(-1)[0])

    def prepare(self, context, node):
        context.expect_dtype(node, node.inputs[0], ("float32", "int32"))
        return super().prepare(context, node)
