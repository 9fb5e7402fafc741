"""SELECT: ``condition ? x : y``.  Unlike SELECT_V2 there is no general broadcasting: x and y have
the same shape, and the condition has that shape too, or is a scalar, or is rank 1 with one value
per row of x (tf.where v1 semantics, TFLite's kVersionOne).

TFLite's select is a conditional *bit copy*: any type of 8, 16, 32 or 64 bits works, and quantized
x / y are copied as stored (no rescaling, whatever their scales).  Types: bool, float16, float32,
float64, int8, uint8, int16, uint16, int32, uint32, int64, complex64 (not string).  Versions: v1;
int8 v2; rank 5 v3; uint32 v4.

One more TFLite rule: when the condition, x, y and the declared output all hold exactly one element,
the output keeps the shape the model declares (a [1] output of a scalar condition and [1, 1]
values stays [1]).
"""

import math

import numpy as np

from ...schema.enums import BuiltinOperator
from ..context import is_string
from ..registry import Kernel, OpData, kernel, opdata
from ._common import BOOL
from ._elementwise import fail, refuse

# the types of 8, 16, 32 and 64 bits the interpreter holds (TfLiteTypeGetSizeBits)
TYPES = tuple(np.dtype(t) for t in (np.bool_, np.float16, np.float32, np.float64, np.int8, np.uint8, np.int16,
                                    np.uint16, np.int32, np.uint32, np.int64, np.complex64))


@opdata
class SelectData(OpData):
    mode: str
    output_shape: tuple


def check_types(context, node):
    c, x, y = node.inputs[0], node.inputs[1], node.inputs[2]
    context.expect_dtype(node, c, (BOOL,), "condition")
    dx, dy = context.dtype(x), context.dtype(y)
    if dx != dy or dx is None:
        refuse(node, f"x and y have types {context.type_name(x)} and {context.type_name(y)}; they must be equal")
    if dx not in TYPES:
        got = "string" if is_string(dx) else str(dx)
        refuse(node, f"x and y are {got}; TFLite's select copies types of 8, 16, 32 or 64 bits "
                     f"({'/'.join(str(t) for t in TYPES)})")


def single_element_shape(context, node):
    """The declared output shape when condition, x, y and output each hold one element, else None."""
    out = node.outputs[0]
    if all(math.prod(context.shape(t)) == 1 for t in (*node.inputs[:3], out)):
        return tuple(context.shape(out))
    return None


def reference(c: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(c, x, y)


@kernel(BuiltinOperator.SELECT, versions=(1, 2, 3, 4))
class Select(Kernel):
    name = "select"

    def prepare(self, context, node):
        check_types(context, node)
        c, x, y = node.inputs[0], node.inputs[1], node.inputs[2]
        sc, sx, sy = context.shape(c), context.shape(x), context.shape(y)
        keep = single_element_shape(context, node)
        if keep is not None:
            mode, out = "one element", keep
        elif sc == sx == sy:
            mode, out = "elementwise", sx
        else:
            if len(sc) == 0:
                mode = "scalar condition"
            elif len(sc) == 1 and len(sx) >= 1 and sc[0] == sx[0]:
                mode = "one condition per row"
            else:
                fail(node, f"condition {list(sc)} must match x {list(sx)}, be a scalar, or be rank 1 with "
                           f"{sx[:1]} values")
            if sx != sy:
                fail(node, f"x {list(sx)} and y {list(sy)} must have the same shape")
            out = sx
        context.set_output(node.outputs[0], out, context.dtype(x))
        return SelectData(mode, tuple(out))

    def invoke(self, context, node, d):
        t = context.tensors
        c, x, y = (t[i] for i in node.inputs[:3])
        if d.mode == "one condition per row":
            c = c.reshape(c.shape + (1,) * (x.ndim - 1))
        elif d.mode == "one element":
            c, x, y = c.reshape(()), x.reshape(()), y.reshape(())
        t[node.outputs[0]][...] = reference(c, x, y).reshape(d.output_shape)
