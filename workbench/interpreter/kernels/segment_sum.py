"""SEGMENT_SUM (float32, int32): output[s] = sum of data rows i with segment_ids[i] == s.

segment_ids [N] (int32) must start at 0 and go up by 0 or 1 from one row to the next (TFLite checks
exactly that, so no segment is empty); the output has max(segment_ids) + 1 rows, so its shape depends
on the ids' values (the node is prepared during invoke when they are only known then)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I32
from ._elementwise import fail, refuse
from ._segment import segment_reduce


@opdata
class SegmentSumData(OpData):
    num_segments: int
    output_shape: tuple


@kernel(BuiltinOperator.SEGMENT_SUM, versions=(1,))
class SegmentSum(Kernel):
    name = "segment_sum"

    def prepare(self, context, node):
        data, ids = node.inputs[0], node.inputs[1]
        dt = context.expect_dtype(node, data, (F32, I32), "data")
        context.expect_dtype(node, ids, (I32,), "segment_ids")
        ds = context.shape(data)
        if len(ds) < 1 or tuple(context.shape(ids)) != (ds[0],):
            refuse(node, f"segment_ids has shape {list(context.shape(ids))}; expected [{ds[0] if ds else '?'}]")
        v = np.asarray(context.require_value(node, 1, "segment_ids"))
        steps = np.diff(v.astype(np.int64))
        if v.size and (int(v[0]) != 0 or np.any((steps != 0) & (steps != 1))):
            fail(node, f"segment_ids must start at 0 and go up by 0 or 1 at each row; got {v.tolist()[:20]}")
        n = int(v.max()) + 1 if v.size else 0
        out = (n,) + tuple(ds[1:])
        context.set_output(node.outputs[0], out, dt)
        return SegmentSumData(n, out)

    def invoke(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]][...] = segment_reduce("sum", t[node.inputs[0]], t[node.inputs[1]], d.num_segments)
