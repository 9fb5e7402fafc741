"""BROADCAST_ARGS: two shapes (1-D int32 or int64) -> the shape they broadcast to (numpy / TFLite
rules: align at the right, a 1 stretches).  Incompatible shapes are a run-time error."""

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import I32, I64
from ._elementwise import fail, refuse


@opdata
class BroadcastArgsData(OpData):
    output_length: int


def broadcast(a, b) -> list:
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"{x} and {y}")
        out.append(y if x == 1 else x)
    return out


@kernel(BuiltinOperator.BROADCAST_ARGS, versions=(1,))
class BroadcastArgs(Kernel):
    name = "broadcast_args"

    def prepare(self, context, node):
        a, b = node.inputs[0], node.inputs[1]
        dt = context.expect_dtype(node, a, (I32, I64), "shape 0")
        if context.dtype(b) != dt:
            refuse(node, f"both shapes must have one type; got {dt} and {context.dtype(b)}")
        sa, sb = context.shape(a), context.shape(b)
        if len(sa) != 1 or len(sb) != 1:
            refuse(node, f"shapes must be 1-D tensors; got {list(sa)} and {list(sb)}")
        n = max(sa[0], sb[0])
        context.set_output(node.outputs[0], (n,), dt)
        return BroadcastArgsData(n)

    def invoke(self, context, node, d):
        t = context.tensors
        a, b = t[node.inputs[0]].tolist(), t[node.inputs[1]].tolist()
        try:
            t[node.outputs[0]][...] = broadcast(a, b)
        except ValueError as exc:
            fail(node, f"shapes {a} and {b} do not broadcast (dimensions {exc})")
