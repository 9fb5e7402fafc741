"""GATHER_ND: ``out[i...] = params[indices[i..., :]]`` (the last indices dim Q picks the first Q
params dims).  Output shape indices[:-1] + params[Q:].  Indices int32/int64; an index out of range
is a run-time error, as in TFLite.  Params float32/int32/int64/uint8/int8 (v1), STRING (v2: numpy
object arrays move as they are), int16 (v3), bool (v5); int16 indices → v4.  float16 params run
too (litert's kernel takes them; the newest op_version rules we could read give them v1, so v6,
which litert also registers, is left unregistered: its meaning is not known here).  Pure data
movement: quantized values are copied as they are."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import I16, I32, I64
from ._elementwise import fail

TYPES = tuple(np.dtype(t) for t in (np.float32, np.uint8, np.int8, np.int16, np.int32, np.int64, np.bool_,
                                    object, np.float16))


@opdata
class GatherNdData(OpData):
    index_depth: int
    output_shape: tuple


@kernel(BuiltinOperator.GATHER_ND, versions=(1, 2, 3, 4, 5))
class GatherNd(Kernel):
    name = "gather_nd"

    def prepare(self, context, node):
        p, i = node.inputs[0], node.inputs[1]
        ps, is_ = context.shape(p), context.shape(i)
        context.expect_dtype(node, p, TYPES, "params")
        context.expect_dtype(node, i, (I16, I32, I64), "indices")
        if len(ps) < 1 or len(is_) < 1:
            fail(node, f"params {list(ps)} and indices {list(is_)} must both have rank >= 1")
        q = is_[-1]
        if q > len(ps):
            fail(node, f"index depth {q} is larger than the params rank {len(ps)}")
        out = is_[:-1] + ps[q:]
        context.set_output(node.outputs[0], out, context.dtype(p))
        return GatherNdData(q, out)

    def invoke(self, context, node, d):
        params, idx = context.tensors[node.inputs[0]], context.tensors[node.inputs[1]]
        q = d.index_depth
        flat = idx.reshape(-1, q).astype(np.int64)
        for axis in range(q):
            col = flat[:, axis]
            if col.size and (col.min() < 0 or col.max() >= params.shape[axis]):
                bad = int(col[(col < 0) | (col >= params.shape[axis])][0])
                fail(node, f"gather_nd index {bad} is out of bounds for dimension {axis} of size {params.shape[axis]}")
        res = params[tuple(flat[:, a] for a in range(q))]
        context.tensors[node.outputs[0]][...] = res.reshape(d.output_shape)
