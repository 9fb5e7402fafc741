"""SPARSE_TO_DENSE: a tensor of shape ``output_shape`` filled with ``default_value``, with ``values``
written at ``indices`` (a later duplicate overwrites an earlier one).

Inputs: indices (int32/int64: a scalar, [N] for a 1-D output, or [N, rank]), output_shape
(int32/int64, 1-D; its values fix the output shape), values ([N] or a scalar for all), default_value
(scalar).  Value types: float32, int32 (v1), int64 (v2), int8, uint8 (v3).  An index outside the
shape is a run-time error."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I32, I64
from ._elementwise import fail, refuse

TYPES = {1: (F32, I32), 2: (F32, I32, I64), 3: (F32, I32, I64, np.dtype(np.int8), np.dtype(np.uint8))}


@opdata
class SparseToDenseData(OpData):
    output_shape: tuple


@kernel(BuiltinOperator.SPARSE_TO_DENSE, versions=(1, 2, 3))
class SparseToDense(Kernel):
    name = "sparse_to_dense"

    def prepare(self, context, node):
        idx, shp, val, dflt = (node.inputs[k] for k in range(4))
        context.expect_dtype(node, idx, (I32, I64), "indices")
        context.expect_dtype(node, shp, (I32, I64), "output_shape")
        dt = context.expect_dtype(node, val, TYPES[node.version], "values")
        if context.dtype(dflt) != dt or int(np.prod(context.shape(dflt))) != 1:
            refuse(node, f"default_value must be one {dt} value")
        shape = tuple(int(v) for v in np.asarray(context.require_value(node, 1, "output_shape")).reshape(-1))
        if any(s < 0 for s in shape):
            fail(node, f"output_shape {list(shape)} has a negative dimension")
        ish = context.shape(idx)
        if len(ish) > 2 or (len(ish) == 2 and ish[1] != len(shape)):
            refuse(node, f"indices {list(ish)} must be a scalar, [N] or [N, {len(shape)}]")
        context.set_output(node.outputs[0], shape, dt)
        return SparseToDenseData(shape)

    def invoke(self, context, node, d):
        t = context.tensors
        idx = t[node.inputs[0]].astype(np.int64)
        idx = idx.reshape(-1, len(d.output_shape)) if idx.ndim != 1 else idx.reshape(-1, 1)
        vals = t[node.inputs[2]].reshape(-1)
        if vals.size == 1:
            vals = np.repeat(vals, len(idx))
        if len(vals) != len(idx):
            fail(node, f"{len(idx)} indices but {len(vals)} values")
        lim = np.array(d.output_shape, np.int64)
        bad = (idx < 0) | (idx >= lim)
        if bad.any():
            fail(node, f"index {idx[bad.any(axis=1)][0].tolist()} is out of bounds for shape {list(d.output_shape)}")
        out = t[node.outputs[0]]
        out[...] = t[node.inputs[3]].reshape(())
        for i, v in zip(idx.tolist(), vals.tolist()):          # in order: later duplicates win
            out[tuple(i)] = v
