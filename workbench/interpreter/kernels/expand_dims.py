"""EXPAND_DIMS: insert a dimension of size 1 at ``axis`` (input 1, a constant; -rank-1 <= axis <= rank)."""

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, fail


@opdata
class ExpandDimsData(OpData):
    axis: int
    output_shape: tuple


@kernel(BuiltinOperator.EXPAND_DIMS, versions=(1,))
class ExpandDims(Kernel):
    name = "expand_dims"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        axes = const_ints(context, node, 1, "the axis")
        if len(axes) != 1:
            fail(node, f"the axis must be a single value, got {axes}")
        a = axes[0]
        r = len(shape)
        if not -r - 1 <= a <= r:
            fail(node, f"axis {a} is out of range for an input of rank {r}")
        if a < 0:
            a += r + 1
        out = shape[:a] + (1,) + shape[a:]
        context.set_output(node.outputs[0], out, context.dtype(x))
        return ExpandDimsData(a, out)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = context.tensors[node.inputs[0]].reshape(d.output_shape)
