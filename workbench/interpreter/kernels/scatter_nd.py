"""SCATTER_ND: a zero tensor of shape ``shape`` with ``updates`` ADDED at ``indices`` (duplicates sum).

Inputs: indices [..., K] (int32), updates [...] + shape[K:], shape (int32, 1-D, its values give the
output shape).  Types: float32, int8, uint8, int32, int64.  An index outside the shape is a run-time
error, as in TFLite."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I32, I64
from ._elementwise import fail, refuse

TYPES = (F32, np.dtype(np.int8), np.dtype(np.uint8), I32, I64)


@opdata
class ScatterNdData(OpData):
    output_shape: tuple
    index_depth: int


@kernel(BuiltinOperator.SCATTER_ND, versions=(1,))
class ScatterNd(Kernel):
    name = "scatter_nd"

    def prepare(self, context, node):
        idx, upd = node.inputs[0], node.inputs[1]
        context.expect_dtype(node, idx, (I32,), "indices")
        dt = context.expect_dtype(node, upd, TYPES, "updates")
        context.expect_dtype(node, node.inputs[2], (I32,), "shape")
        shape = tuple(int(v) for v in np.asarray(context.require_value(node, 2, "shape")).reshape(-1))
        if any(s < 0 for s in shape):
            fail(node, f"shape {list(shape)} has a negative dimension")
        ishape, ushape = context.shape(idx), context.shape(upd)
        if len(ishape) < 1 or not 1 <= ishape[-1] <= len(shape):
            refuse(node, f"indices {list(ishape)}: the last dimension must be in [1, {len(shape)}]")
        k = ishape[-1]
        if tuple(ushape) != tuple(ishape[:-1]) + shape[k:]:
            refuse(node, f"updates {list(ushape)} must be {list(ishape[:-1]) + list(shape[k:])}")
        context.set_output(node.outputs[0], shape, dt)
        return ScatterNdData(shape, k)

    def invoke(self, context, node, d):
        t = context.tensors
        idx, upd = t[node.inputs[0]], t[node.inputs[1]]
        k = d.index_depth
        flat = idx.reshape(-1, k).astype(np.int64)
        lim = np.array(d.output_shape[:k], np.int64)
        bad = (flat < 0) | (flat >= lim)
        if bad.any():
            fail(node, f"index {flat[bad.any(axis=1)][0].tolist()} is out of bounds for shape {list(d.output_shape)}")
        out = np.zeros(d.output_shape, upd.dtype)
        np.add.at(out, tuple(flat.T), upd.reshape((-1,) + d.output_shape[k:]))
        t[node.outputs[0]][...] = out
