"""What SEGMENT_SUM and UNSORTED_SEGMENT_{SUM,PROD,MAX,MIN} share.

Rows of ``data`` (the leading dimensions that ``segment_ids`` covers) are combined into output row
``segment_ids[i]``; rows no id points at hold the reduction's identity (0 for sum, 1 for product,
the type's lowest / highest value for max / min, as TFLite initialises them).
"""

from __future__ import annotations

import numpy as np

from ..registry import Kernel, OpData, opdata
from ._common import F32, I32
from ._elementwise import refuse


def identity(kind: str, dtype: np.dtype):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min if kind == "max" else info.max


UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def segment_reduce(kind: str, data: np.ndarray, ids: np.ndarray, num_segments: int) -> np.ndarray:
    """``reference_ops::UnsortedSegmentRef`` / ``SegmentSum``: the output rows start at the identity and
    each data row i is combined into output row ids[i], rows in order (``ufunc.at`` applies repeated
    indices one after another, as the loop does: float sums keep their order)."""
    lead = ids.ndim
    rows = data.reshape((-1,) + data.shape[lead:])
    flat = ids.reshape(-1).astype(np.int64)
    out = np.full((num_segments,) + data.shape[lead:], identity(kind, data.dtype), data.dtype)
    keep = (flat >= 0) & (flat < num_segments)
    UFUNC[kind].at(out, flat[keep], rows[keep])
    return out


@opdata
class UnsortedSegmentData(OpData):
    num_segments: int
    output_shape: tuple
    empty_value: object             # the reduction's identity, in the rows no id points at


class UnsortedSegmentKernel(Kernel):
    """UNSORTED_SEGMENT_{SUM,PROD,MAX,MIN}: the four differ only in ``kind``.

    Inputs: data (float32 or int32), segment_ids (int32, shaped like data's leading dimensions),
    num_segments (int32 scalar or [1]).  Output [num_segments] + data.shape[ids.rank:]; ids outside
    [0, num_segments) are skipped."""

    kind = ""

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
        return UnsortedSegmentData(n[0], out, identity(self.kind, dt))

    def invoke(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]][...] = segment_reduce(self.kind, t[node.inputs[0]], t[node.inputs[1]], d.num_segments)
