"""FILL: a tensor of shape ``dims`` (input 0, an int32/int64 vector; computed at run time it makes
the output dynamic) holding the scalar ``value`` (input 1).  The output type is the value's:
float32, float64, int32, int64, uint8, uint16, uint32, complex64 (v1), bool and string (v2), int8
and int16 (v3), float16 (v4).  A quantized value is copied as stored."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..context import STRING_DTYPE
from ..registry import Kernel, OpData, kernel, opdata
from ._common import I32, I64
from ._elementwise import const_ints, fail

TYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                    np.complex64, np.bool_, np.int8, np.int16, np.float16)) + (STRING_DTYPE,)


@opdata
class FillData(OpData):
    output_shape: tuple


@kernel(BuiltinOperator.FILL, versions=range(1, 5))
class Fill(Kernel):
    name = "fill"

    def prepare(self, context, node):
        context.expect_dtype(node, node.inputs[0], (I32, I64), "dims")
        if len(context.shape(node.inputs[0])) != 1:
            fail(node, f"dims must be a vector, got shape {list(context.shape(node.inputs[0]))}")
        dims = const_ints(context, node, 0, "dims")
        v = node.inputs[1]
        dt = context.expect_dtype(node, v, TYPES, "value")
        if len(context.shape(v)) != 0:
            fail(node, f"value must be a scalar, got shape {list(context.shape(v))}")
        if any(d < 0 for d in dims):
            fail(node, f"dims {dims} must not be negative")
        context.set_output(node.outputs[0], dims, dt)
        return FillData(tuple(dims))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = np.asarray(context.tensors[node.inputs[1]]).reshape(())
