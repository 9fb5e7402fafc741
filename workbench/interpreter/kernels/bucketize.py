"""BUCKETIZE: for every value, the number of boundaries <= it (C++ std::upper_bound), as int32.

Boundaries come from BucketizeOptions (float32, must be sorted).  Input float32, float64, int32 or
int64; an integer value is compared as float32 (C++ converts it to the boundaries' type)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I32, I64
from ._elementwise import refuse


@opdata
class BucketizeData(OpData):
    boundaries: tuple


@kernel(BuiltinOperator.BUCKETIZE, versions=(1,))
class Bucketize(Kernel):
    name = "bucketize"

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32, np.dtype(np.float64), I32, I64), "input")
        bounds = tuple(float(np.float32(b)) for b in (node.params.get("boundaries") or ()))
        if any(b1 > b2 for b1, b2 in zip(bounds, bounds[1:])):
            refuse(node, f"boundaries must be sorted; got {list(bounds)}")
        context.set_output(node.outputs[0], context.shape(x), I32)
        return BucketizeData(bounds)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        b = np.array(d.boundaries, np.float32)
        v = x if x.dtype.kind == "f" else x.astype(np.float32)
        if v.dtype == np.float64:
            b = b.astype(np.float64)
        context.tensors[node.outputs[0]][...] = np.searchsorted(b, v, side="right")
