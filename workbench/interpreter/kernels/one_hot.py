"""ONE_HOT: indices -> a tensor with a new axis of size ``depth`` holding on_value where the axis
position equals the index and off_value elsewhere (an index outside [0, depth) gives all off).

Inputs: indices (int32/int64), depth (int32 scalar), on_value, off_value (scalars of the output type:
float32, int32, int64, int8, uint8, bool).  Option axis (OneHotOptions; -1 = last)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import BOOL, F32, I32, I64
from ._elementwise import fail, refuse

TYPES = (F32, I32, I64, np.dtype(np.int8), np.dtype(np.uint8), BOOL)


@opdata
class OneHotData(OpData):
    depth: int
    axis: int
    output_shape: tuple


@kernel(BuiltinOperator.ONE_HOT, versions=(1,))
class OneHot(Kernel):
    name = "one_hot"

    def prepare(self, context, node):
        idx, depth_t, on_t, off_t = (node.inputs[k] for k in range(4))
        context.expect_dtype(node, idx, (I32, I64), "indices")
        context.expect_dtype(node, depth_t, (I32,), "depth")
        dt = context.expect_dtype(node, on_t, TYPES, "on_value")
        if context.dtype(off_t) != dt:
            refuse(node, f"on_value is {dt} and off_value {context.dtype(off_t)}; they must match")
        depth = [int(v) for v in np.asarray(context.require_value(node, 1, "depth")).reshape(-1)]
        if len(depth) != 1 or depth[0] < 0:
            fail(node, f"depth must be one non-negative value; got {depth}")
        shape = context.shape(idx)
        axis = int(node.params.get("axis", -1))
        a = len(shape) if axis == -1 else axis
        if not 0 <= a <= len(shape):
            refuse(node, f"axis {axis} is out of range for indices of rank {len(shape)}")
        out = tuple(shape[:a]) + (depth[0],) + tuple(shape[a:])
        context.set_output(node.outputs[0], out, dt)
        return OneHotData(depth[0], a, out)

    def invoke(self, context, node, d):
        t = context.tensors
        idx = np.expand_dims(t[node.inputs[0]].astype(np.int64), d.axis)
        pos = np.arange(d.depth).reshape((-1,) + (1,) * (idx.ndim - d.axis - 1))
        hit = idx == pos
        t[node.outputs[0]][...] = np.where(hit, t[node.inputs[2]].reshape(()), t[node.inputs[3]].reshape(()))
