"""RANGE: start, start + delta, ... up to (not including) limit; three scalars of one type: int32,
float32 (v1), int64 (v2).  The length depends on the values, so they must be constants here.
Size: int ceil(|limit - start| / |delta|); float ceil(|(limit - start) / delta|).  Values are
accumulated (value += delta) as TFLite does, not start + i * delta.  delta == 0, or a delta that
moves away from limit, is an error."""

import math

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I32, I64
from ._elementwise import fail, refuse


@opdata
class RangeData(OpData):
    start: object
    limit: object
    delta: object
    size: int


def range_size(node, start, limit, delta) -> int:
    if delta == 0:
        fail(node, "delta must not be 0")
    if (start > limit and delta > 0) or (start < limit and delta < 0):
        fail(node, f"delta {delta} moves away from limit {limit} (start {start})")
    if isinstance(start, (int, np.integer)):
        start, limit, delta = int(start), int(limit), int(delta)
        return (abs(limit - start) + abs(delta) - 1) // abs(delta)
    return int(math.ceil(abs((float(limit) - float(start)) / float(delta))))


def reference(start, delta, size, dtype):
    out = np.empty(size, dtype)
    value = dtype.type(start)
    for i in range(size):
        out[i] = value
        value = dtype.type(value + dtype.type(delta))
    return out


@kernel(BuiltinOperator.RANGE, versions=(1, 2))
class Range(Kernel):
    name = "range"

    def prepare(self, context, node):
        vals = []
        dt = None
        for slot, what in enumerate(("start", "limit", "delta")):
            t = node.input(slot)
            d = context.expect_dtype(node, t, (I32, F32, I64), what)
            if dt is not None and d != dt:
                refuse(node, f"start, limit and delta must have one type (got {dt} and {d})")
            dt = d
            v = np.asarray(context.require_value(node, slot, what))
            if v.size != 1:
                fail(node, f"{what} must be a scalar, got shape {list(v.shape)}")
            vals.append(v.reshape(-1)[0])
        size = range_size(node, *vals)
        context.set_output(node.outputs[0], (size,), dt)
        return RangeData(vals[0].item(), vals[1].item(), vals[2].item(), size)

    def invoke(self, context, node, d):
        out = context.tensors[node.outputs[0]]
        out[...] = reference(d.start, d.delta, d.size, out.dtype)
