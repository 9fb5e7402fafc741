"""FILL: a tensor of shape ``dims`` (input 0, a constant int32/int64 vector) holding the scalar
``value`` (input 1).  The output dtype is the value's: float32/int32/int64 (v1), bool (v2)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._elementwise import BOOL, I32, I64, const_ints, fail


@opdata
class FillData(OpData):
    output_shape: tuple


@kernel(BuiltinOperator.FILL, versions=(1, 2))
class Fill(Kernel):
    name = "fill"

    def prepare(self, context, node):
        dims = const_ints(context, node, 0, "dims")
        v = node.inputs[1]
        dt = context.expect_dtype(node, v, (F32, I32, I64, BOOL), "value")
        if len(context.shape(v)) != 0:
            fail(node, f"value must be a scalar, got shape {list(context.shape(v))}")
        if any(d < 0 for d in dims):
            fail(node, f"dims {dims} must not be negative")
        context.set_output(node.outputs[0], dims, dt)
        return FillData(tuple(dims))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = np.asarray(context.tensors[node.inputs[1]]).reshape(())
