"""GATHER: ``params`` rows picked by ``indices`` along ``axis``, with ``batch_dims`` leading
dimensions shared by params and indices (GatherOptions; TFLite sets axis = batch_dims = 0 when
the options table is absent).  Output shape: params[:axis] + indices[batch_dims:] + params[axis+1:].

Indices are int32/int64 (int16 is v6, not here).  An index below 0 or past the axis is an error
at run time, as in TFLite ("gather index out of bounds") -- never numpy's wrap-around.
Versions: float32/int32/int64 v1, bool v3, batch_dims != 0 v5."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import I32, I64, fail


@opdata
class GatherData(OpData):
    axis: int
    batch_dims: int
    output_shape: tuple
    blocks: tuple      # (batch B, outer O, axis size A, inner I) of params; indices as (B, K)


def check_indices(node, idx: np.ndarray, limit: int, what: str = "index"):
    if idx.size and (idx.min() < 0 or idx.max() >= limit):
        bad = idx[(idx < 0) | (idx >= limit)].reshape(-1)[0]
        fail(node, f"gather {what} {int(bad)} is out of bounds for a dimension of size {limit}")


def reference(params: np.ndarray, indices: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    """The slow, obvious loop."""
    lead = params.shape[:batch_dims]
    out_shape = params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]
    out = np.empty(out_shape, params.dtype)
    for b in np.ndindex(*lead):
        for o in np.ndindex(*params.shape[batch_dims:axis]):
            for k in np.ndindex(*indices.shape[batch_dims:]):
                out[b + o + k] = params[b + o + (int(indices[b + k]),)]
    return out


@kernel(BuiltinOperator.GATHER, versions=(1, 3, 5))
class Gather(Kernel):
    name = "gather"

    def prepare(self, context, node):
        p, i = node.inputs[0], node.inputs[1]
        ps, is_ = context.shape(p), context.shape(i)
        context.expect_dtype(node, i, (I32, I64), "indices")
        if context.dtype(p) is None:
            fail(node, "params has a type this interpreter cannot hold")
        axis = int(node.params.get("axis", 0))
        bd = int(node.params.get("batch_dims", 0))
        if axis < 0:
            axis += len(ps)
        if bd < 0:
            bd += len(is_)
        if not 0 <= axis < len(ps):
            fail(node, f"axis {node.params.get('axis')} is out of range for params of rank {len(ps)}")
        if not (0 <= bd <= axis and bd <= len(is_)):
            fail(node, f"batch_dims {node.params.get('batch_dims')} must be in [0, axis={axis}] and at most the "
                       f"indices rank {len(is_)}")
        if ps[:bd] != is_[:bd]:
            fail(node, f"the first {bd} dims of params {list(ps)} and indices {list(is_)} must be equal")
        out = ps[:axis] + is_[bd:] + ps[axis + 1:]
        context.set_output(node.outputs[0], out, context.dtype(p))
        blocks = (int(np.prod(ps[:bd])), int(np.prod(ps[bd:axis])), ps[axis], int(np.prod(ps[axis + 1:])))
        return GatherData(axis, bd, out, blocks)

    def invoke(self, context, node, d):
        params, idx = context.tensors[node.inputs[0]], context.tensors[node.inputs[1]]
        b, o, a, inner = d.blocks
        check_indices(node, idx, a)
        p = params.reshape(b, o, a, inner)
        k = idx.reshape(b, -1)
        res = p[np.arange(b)[:, None, None], np.arange(o)[None, :, None], k[:, None, :]]
        context.tensors[node.outputs[0]][...] = res.reshape(d.output_shape)

    def invoke_reference(self, context, node, d):
        params, idx = context.tensors[node.inputs[0]], context.tensors[node.inputs[1]]
        check_indices(node, idx, d.blocks[2])
        context.tensors[node.outputs[0]][...] = reference(params, idx, d.axis, d.batch_dims)
