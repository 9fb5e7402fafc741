"""UNSORTED_SEGMENT_PROD (float32, int32): output[s] = prod of the data rows whose segment id is s.

Inputs: data, segment_ids (int32, shaped like data's leading dimensions), num_segments (int32
scalar or [1]).  Output [num_segments] + data.shape[ids.rank:]; ids outside [0, num_segments) are
skipped; a segment no id points at holds the identity of prod (see ``_segment.py``)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._elementwise import I32, refuse
from ._segment import identity, segment_reduce

KIND = "prod"


@opdata
class UnsortedSegmentProdData(OpData):
    num_segments: int
    output_shape: tuple
    empty_value: object


@kernel(BuiltinOperator.UNSORTED_SEGMENT_PROD, versions=(1,))
class UnsortedSegmentProd(Kernel):
    name = "unsorted_segment_prod"

    def prepare(self, context, node):
        data, ids, n_t = node.inputs[0], node.inputs[1], node.inputs[2]
        dt = context.expect_dtype(node, data, (F32, I32), "data")
        context.expect_dtype(node, ids, (I32,), "segment_ids")
        context.expect_dtype(node, n_t, (I32,), "num_segments")
        ds, ids_s = context.shape(data), context.shape(ids)
        if tuple(ds[:len(ids_s)]) != tuple(ids_s):
            refuse(node, f"segment_ids {list(ids_s)} must match the leading dimensions of data {list(ds)}")
        n = [int(v) for v in np.asarray(context.require_value(node, 2, "num_segments")).reshape(-1)]
        if len(n) != 1 or n[0] < 0:
            refuse(node, f"num_segments must be one non-negative value; got {n}")
        out = (n[0],) + tuple(ds[len(ids_s):])
        context.set_output(node.outputs[0], out, dt)
        return UnsortedSegmentProdData(n[0], out, identity(KIND, dt))

    def invoke(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]][...] = segment_reduce(KIND, t[node.inputs[0]], t[node.inputs[1]], d.num_segments, False)

    def invoke_reference(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]][...] = segment_reduce(KIND, t[node.inputs[0]], t[node.inputs[1]], d.num_segments, True)
