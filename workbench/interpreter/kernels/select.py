"""SELECT: ``condition ? x : y``.  Unlike SELECT_V2 there is no general broadcasting: x and y have
the same shape, and the condition has that shape too, or is a scalar, or is rank 1 with one value
per row of x (tf.where v1 semantics, TFLite's kVersionOne).  float32/int32/int64/bool (v1), rank 5
(v3)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import BOOL, fail, refuse


@opdata
class SelectData(OpData):
    mode: str
    output_shape: tuple


def check_types(context, node):
    c, x, y = node.inputs[0], node.inputs[1], node.inputs[2]
    context.expect_dtype(node, c, (BOOL,), "condition")
    if context.dtype(x) != context.dtype(y) or context.dtype(x) is None:
        refuse(node, f"x and y have types {context.dtype(x)} and {context.dtype(y)}; they must be equal")


@kernel(BuiltinOperator.SELECT, versions=(1, 3))
class Select(Kernel):
    name = "select"

    def prepare(self, context, node):
        check_types(context, node)
        c, x, y = node.inputs[0], node.inputs[1], node.inputs[2]
        sc, sx, sy = context.shape(c), context.shape(x), context.shape(y)
        if sx != sy:
            fail(node, f"x {list(sx)} and y {list(sy)} must have the same shape")
        if sc == sx:
            mode = "elementwise"
        elif len(sc) == 0:
            mode = "scalar condition"
        elif len(sc) == 1 and len(sx) >= 1 and sc[0] == sx[0]:
            mode = "one condition per row"
        else:
            fail(node, f"condition {list(sc)} must match x {list(sx)}, be a scalar, or be rank 1 with {sx[:1]} values")
        context.set_output(node.outputs[0], sx, context.dtype(x))
        return SelectData(mode, sx)

    def invoke(self, context, node, d):
        t = context.tensors
        c, x, y = (t[i] for i in node.inputs[:3])
        if d.mode == "one condition per row":
            c = c.reshape(c.shape + (1,) * (x.ndim - 1))
        t[node.outputs[0]][...] = np.where(c, x, y)
