"""BATCH_MATMUL (float32): lhs @ rhs over the last two dims, ``adj_x``/``adj_y`` transposing them
first (BatchMatMulOptions), batch dims broadcast as numpy (ranks 2..5, as TFLite)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._elementwise import fail


@opdata
class BatchMatMulData(OpData):
    adj_x: bool
    adj_y: bool
    output_shape: tuple


def reference(a, b, adj_x, adj_y):
    if adj_x:
        a = np.swapaxes(a, -1, -2)
    if adj_y:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)


@kernel(BuiltinOperator.BATCH_MATMUL, versions=(1,))
class BatchMatMul(Kernel):
    name = "batch_matmul"

    def prepare(self, context, node):
        a, b = node.inputs[0], node.inputs[1]
        context.expect_dtype(node, a, (F32,), "lhs")
        context.expect_dtype(node, b, (F32,), "rhs")
        sa, sb = context.shape(a), context.shape(b)
        if not (2 <= len(sa) <= 5 and 2 <= len(sb) <= 5):
            fail(node, f"lhs {list(sa)} and rhs {list(sb)} must have rank 2 to 5")
        ax, ay = bool(node.params.get("adj_x", False)), bool(node.params.get("adj_y", False))
        m, k = (sa[-1], sa[-2]) if ax else (sa[-2], sa[-1])
        k2, n = (sb[-1], sb[-2]) if ay else (sb[-2], sb[-1])
        if k != k2:
            fail(node, f"contraction sizes differ: lhs {list(sa)} (adj_x={ax}) vs rhs {list(sb)} (adj_y={ay})")
        try:
            batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
        except ValueError:
            fail(node, f"batch dims of {list(sa)} and {list(sb)} do not broadcast")
        out = batch + (m, n)
        context.set_output(node.outputs[0], out, F32)
        return BatchMatMulData(ax, ay, out)

    def invoke(self, context, node, d):
        a, b = context.tensors[node.inputs[0]], context.tensors[node.inputs[1]]
        if d.adj_x:
            a = np.swapaxes(a, -1, -2)
        if d.adj_y:
            b = np.swapaxes(b, -1, -2)
        context.tensors[node.outputs[0]][...] = np.matmul(a, b)

    def invoke_reference(self, context, node, d):
        t = context.tensors
        t[node.outputs[0]][...] = reference(t[node.inputs[0]], t[node.inputs[1]], d.adj_x, d.adj_y)
