"""GATHER: ``params`` rows picked by ``indices`` along ``axis``, with ``batch_dims`` leading
dimensions shared by params and indices (GatherOptions; TFLite sets axis = batch_dims = 0 when
the options table is absent).  Output shape: params[:axis] + indices[batch_dims:] + params[axis+1:].

Indices are int16, int32 or int64.  An index below 0 or past the axis is an error at run time, as
in TFLite ("gather index out of bounds") -- never numpy's wrap-around.  Params are copied as stored
(quantized int8/uint8/int16 pass through, no rescaling): float32, float16, int32, int64, uint8 (v1),
int8 (v2), bool (v3), int16 (v4), and string (v1) when params are 1-D (TFLite gathers strings from a
vector only).  batch_dims != 0 is v5, int16 indices v6 (int4 params, v7, are not implemented).
Versions: 1-6."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..context import STRING_DTYPE, is_string
from ..registry import Kernel, OpData, kernel, opdata
from ._common import I32, I64
from ._elementwise import fail, refuse

PARAMS = tuple(np.dtype(t) for t in (np.float32, np.float16, np.int32, np.int64, np.uint8, np.int8, np.bool_,
                                     np.int16)) + (STRING_DTYPE,)
INDICES = (np.dtype(np.int16), I32, I64)


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


def gather(params: np.ndarray, idx: np.ndarray, d) -> np.ndarray:
    """``reference_ops::Gather``: params seen as [batch B, outer O, axis A, inner I] and the indices as
    [B, K]; output [B, O, K, I] = params[b, o, idx[b, k], :], reshaped to the output shape."""
    b, o = d.blocks[:2]
    p = params.reshape(d.blocks)
    k = idx.reshape(b, -1)
    return p[np.arange(b)[:, None, None], np.arange(o)[None, :, None], k[:, None, :]].reshape(d.output_shape)


@kernel(BuiltinOperator.GATHER, versions=range(1, 7))
class Gather(Kernel):
    name = "gather"

    def prepare(self, context, node):
        p, i = node.inputs[0], node.inputs[1]
        ps, is_ = context.shape(p), context.shape(i)
        context.expect_dtype(node, i, INDICES, "indices")
        if context.dtype(p) not in PARAMS:
            refuse(node, f"params '{context.name(p)}' is {context.type_name(p)}; TFLite gathers "
                         f"float32/float16/int32/int64/uint8/int8/bool/int16/string")
        if is_string(context.dtype(p)) and len(ps) != 1:
            refuse(node, f"string params '{context.name(p)}' have shape {list(ps)}; TFLite gathers strings from "
                         f"a 1-D tensor only")
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
        check_indices(node, idx, d.blocks[2])
        context.tensors[node.outputs[0]][...] = gather(params, idx, d)
