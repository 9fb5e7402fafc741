"""SLICE: ``input[begin : begin + size]`` per axis; begin and size are int32/int64 inputs (read in
prepare; computed at run time they make the output dynamic), size -1 means "to the end".  Pure data
movement, quantized values copied as stored.  Types: float32, float16, float64, int32, int64, uint8,
uint16, bool, complex64 (v1), int8 (v2), string (v3), int16 (v4), uint32 (v6), float16 (v8, also
taken at any lower version); v5 = rank above 4 (int4, v7, is not implemented).  A begin/size
outside the input is refused in prepare, as TFLite does."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..context import STRING_DTYPE
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, fail

TYPES = tuple(np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int32, np.int64, np.uint8, np.uint16,
                                    np.bool_, np.complex64, np.int8, np.int16, np.uint32)) + (STRING_DTYPE,)


@opdata
class SliceData(OpData):
    begin: tuple
    size: tuple
    output_shape: tuple


def reference(x: np.ndarray, begin, size) -> np.ndarray:
    return x[tuple(slice(b, b + s) for b, s in zip(begin, size))]


@kernel(BuiltinOperator.SLICE, versions=(1, 2, 3, 4, 5, 6, 8))
class Slice(Kernel):
    name = "slice"
    value_inputs = (0, 1, 2)

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, TYPES)
        shape = context.shape(x)
        begin = const_ints(context, node, 1, "begin")
        size = const_ints(context, node, 2, "size")
        if len(begin) != len(shape) or len(size) != len(shape):
            fail(node, f"begin {begin} and size {size} need {len(shape)} entries (input shape {list(shape)})")
        out = []
        for axis, (b, s, d) in enumerate(zip(begin, size, shape)):
            if s == -1:
                s = d - b
            if b < 0 or s < 0 or b + s > d:
                fail(node, f"axis {axis}: begin {b}, size {s} do not fit in dimension {d}")
            out.append(s)
        context.set_output(node.outputs[0], out, context.dtype(x))
        return SliceData(tuple(begin), tuple(out), tuple(out))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.begin, d.size)
