"""UNPACK: ``num`` tensors of rank r-1 along ``axis`` (UnpackOptions).  Pure data movement:
quantized values are copied as stored.  Types (those litert unpacks): float32, int32 (v1), int8,
uint8 (v2), bool (v3), int16 (v4), float16 (v5; bfloat16, also v5, is not held by this interpreter).
Not int64, uint32, float64, complex64 or string: TFLite's unpack refuses them."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import fail, norm_axes

TYPES = tuple(np.dtype(t) for t in (np.float32, np.int32, np.int8, np.uint8, np.bool_, np.int16, np.float16))


@opdata
class UnpackData(OpData):
    axis: int
    num: int


@kernel(BuiltinOperator.UNPACK, versions=range(1, 6))
class Unpack(Kernel):
    name = "unpack"

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, TYPES)
        shape = context.shape(x)
        if not shape:
            fail(node, "the input is a scalar; there is no axis to unpack")
        axis, = norm_axes(node, [int(node.params.get("axis", 0))], len(shape))
        num = int(node.params.get("num", 0))
        if num != shape[axis] or len(node.outputs) != num:
            fail(node, f"num {num}, {len(node.outputs)} outputs, but axis {axis} has size {shape[axis]}")
        out = shape[:axis] + shape[axis + 1:]
        for t in node.outputs:
            context.set_output(t, out, context.dtype(x))
        return UnpackData(axis, num)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        for i, t in enumerate(node.outputs):
            context.tensors[t][...] = x.take(i, axis=d.axis)
