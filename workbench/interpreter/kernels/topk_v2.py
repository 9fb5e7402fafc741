"""TOPK_V2: the k largest values along the last axis, and their indices (int32), largest first; equal
values keep the lower index first (TFLite's TopContainer order).

Inputs: input [..., n] (float32, int32, int64, uint8: v1; int8: v2; int16: v3), k (int32 scalar or [1];
its value fixes the output shape).  Outputs values [..., k] and indices [..., k] (int32).  Version 3 is
"int16 somewhere": an int16 input, an int16 k or int16 indices (TFLite's op_version rule); litert
accepts any of its input types there, and so does this kernel."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, I32, I64
from ._elementwise import fail, refuse

V1_TYPES = (F32, I32, I64, np.dtype(np.uint8))


@opdata
class TopKV2Data(OpData):
    k: int
    n: int


def top_k(x: np.ndarray, k: int) -> np.ndarray:
    """The order of ``TopContainer`` (kernels/topk_v2.cc, one kernel for both builds): indices of the k
    largest along the last axis, largest first, equal values lower index first (a stable ascending
    sort of the reversed row, read backwards)."""
    n = x.shape[-1]
    order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]   # descending, ties: lower index
    return (n - 1 - order)[..., :k]


@kernel(BuiltinOperator.TOPK_V2, versions=(1, 2, 3))
class TopKV2(Kernel):
    name = "topk_v2"

    def prepare(self, context, node):
        x, k_t = node.inputs[0], node.inputs[1]
        allowed = {1: V1_TYPES, 2: (I8,)}.get(node.version, V1_TYPES + (I8, I16))
        dt = context.expect_dtype(node, x, allowed, "input")
        index_types = (I32,) if node.version < 3 else (I32, I16)
        context.expect_dtype(node, k_t, index_types, "k")
        idx_dt = context.dtype(node.outputs[1]) if node.version >= 3 else I32
        if idx_dt not in index_types:
            refuse(node, f"indices output is {idx_dt}; supported: {', '.join(str(t) for t in index_types)}")
        shape = context.shape(x)
        if len(shape) < 1:
            refuse(node, "input must have rank >= 1")
        k = [int(v) for v in np.asarray(context.require_value(node, 1, "k")).reshape(-1)]
        if len(k) != 1 or not 0 <= k[0] <= shape[-1]:
            fail(node, f"k {k} must be one value in [0, {shape[-1]}]")
        out = tuple(shape[:-1]) + (k[0],)
        context.set_output(node.outputs[0], out, dt)
        context.set_output(node.outputs[1], out, idx_dt)
        return TopKV2Data(k[0], shape[-1])

    def invoke(self, context, node, d):
        t = context.tensors
        x = t[node.inputs[0]]
        idx = top_k(x, d.k)
        t[node.outputs[0]][...] = np.take_along_axis(x, idx, axis=-1)
        t[node.outputs[1]][...] = idx
