"""SELECT_V2: ``condition ? x : y`` with numpy broadcasting of all three.  Any plain dtype for x, y
(v1; uint32 is v2)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, kernel
from ._elementwise import broadcast_shape
from .select import SelectData, check_types


@kernel(BuiltinOperator.SELECT_V2, versions=(1,))
class SelectV2(Kernel):
    name = "select_v2"

    def prepare(self, context, node):
        check_types(context, node)
        out = broadcast_shape(node, context, *node.inputs[:3])
        context.set_output(node.outputs[0], out, context.dtype(node.inputs[1]))
        return SelectData("broadcast", out)

    def invoke(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]][...] = np.where(*(t[i] for i in node.inputs[:3]))
