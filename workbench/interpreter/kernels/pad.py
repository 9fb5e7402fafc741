"""PAD: zero padding per axis (version 4: rank above 4).  int8 (version 2) pads with the output's zero
point — the int8 value that stands for 0.0."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._pad import PadKernel


@kernel(BuiltinOperator.PAD, versions=(1, 2, 4))
class Pad(PadKernel):
    name = "pad"

    def prepare(self, context, node):
        context.expect_dtype(node, node.inputs[0], ("float32", "int32", "int8"))
        return super().prepare(context, node)

    def constant(self, context, node, dtype):
        if dtype == "int8":
            from .. import quant
            return dtype.type(quant.tensor_scale_zp(context, node.outputs[0])[1])
        return dtype.type(0)
