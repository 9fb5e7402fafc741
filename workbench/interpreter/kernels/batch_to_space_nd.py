"""BATCH_TO_SPACE_ND: the inverse of SPACE_TO_BATCH_ND: spread batch blocks back into the spatial
dims, then crop (crops [M, 2]).  Input batch index (by * bw + bx) * N + n.  Rank 4 or 3 (v3);
block_shape and crops are constants.  Versions: float32/int32/int64/uint8 → 1, int8 → 2, rank 3 → 3,
int16 → 4.  Quantized tensors: the same zero-point checks as SPACE_TO_BATCH_ND (equal input and
output zero points; 0 for int16); the integers are moved as they are."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, fail
from .space_to_batch_nd import TYPES, check_zero_points


@opdata
class BatchToSpaceNDData(OpData):
    block_shape: tuple
    crops: tuple
    output_shape: tuple


def reference(x, block, crops):
    m = len(block)
    nb = x.shape[0]
    n = nb // int(np.prod(block))
    spatial = x.shape[1:1 + m]
    rest = x.shape[1 + m:]
    y = x.reshape(list(block) + [n] + list(spatial) + list(rest))
    # axes: 0..m-1 block_i, m n, m+1+i spatial_i
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm).reshape([n] + [s * b for s, b in zip(spatial, block)] + list(rest))
    idx = (slice(None),) + tuple(slice(c0, y.shape[1 + i] - c1) for i, (c0, c1) in enumerate(crops))
    return y[idx]


@kernel(BuiltinOperator.BATCH_TO_SPACE_ND, versions=(1, 2, 3, 4))
class BatchToSpaceND(Kernel):
    name = "batch_to_space_nd"
    value_inputs = (0, 1, 2)

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, TYPES)
        shape = context.shape(x)
        if len(shape) not in (3, 4):
            fail(node, f"input rank {len(shape)}; TFLite handles rank 3 and 4")
        block = const_ints(context, node, 1, "block_shape")
        flat = const_ints(context, node, 2, "the crops")
        m = len(block)
        if m != len(shape) - 2 or len(flat) != 2 * m:
            fail(node, f"block_shape {block} / crops {flat} do not match input rank {len(shape)}")
        crops = tuple((flat[2 * i], flat[2 * i + 1]) for i in range(m))
        total = int(np.prod(block))
        if min(block) <= 0 or shape[0] % total:
            fail(node, f"batch {shape[0]} does not divide by the block size product {total}")
        out = [shape[0] // total]
        for i, (b, (c0, c1)) in enumerate(zip(block, crops)):
            size = shape[1 + i] * b - c0 - c1
            if c0 < 0 or c1 < 0 or size < 0:
                fail(node, f"spatial dim {i}: crops ({c0}, {c1}) exceed the size {shape[1 + i] * b}")
            out.append(size)
        out = tuple(out) + tuple(shape[1 + m:])
        check_zero_points(context, node, dt)
        context.set_output(node.outputs[0], out, dt)
        return BatchToSpaceNDData(tuple(block), crops, out)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.block_shape, d.crops)
