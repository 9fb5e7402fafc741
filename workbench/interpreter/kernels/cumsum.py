"""CUMSUM: running sum along ``axis`` (input 1, a constant scalar), ``exclusive`` (start from 0,
leaving out the element itself) and ``reverse`` (from the end) from CumsumOptions.  float32, int32,
int64 (v1); accumulation in the element type, in order, as TFLite."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I32, I64
from ._elementwise import const_ints, fail, norm_axes


@opdata
class CumsumData(OpData):
    axis: int
    exclusive: bool
    reverse: bool


def reference(x, axis, exclusive, reverse):
    v = np.flip(x, axis) if reverse else x
    with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
        s = np.cumsum(v, axis=axis, dtype=x.dtype)
    if exclusive:
        s = np.concatenate([np.zeros_like(np.take(s, [0], axis=axis)), np.take(s, range(s.shape[axis] - 1), axis=axis)],
                           axis=axis) if s.shape[axis] else s
    return np.flip(s, axis) if reverse else s


@kernel(BuiltinOperator.CUMSUM, versions=(1,))
class Cumsum(Kernel):
    name = "cumsum"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, (F32, I32, I64))
        axes = const_ints(context, node, 1, "the axis")
        if len(axes) != 1:
            fail(node, f"the axis must be a scalar, got {axes}")
        if not context.shape(x):
            fail(node, "the input is a scalar; there is no axis to sum along")
        axis, = norm_axes(node, axes, len(context.shape(x)))
        context.set_output(node.outputs[0], context.shape(x), dt)
        return CumsumData(axis, bool(node.params.get("exclusive", False)), bool(node.params.get("reverse", False)))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.axis, d.exclusive,
                                                          d.reverse)
