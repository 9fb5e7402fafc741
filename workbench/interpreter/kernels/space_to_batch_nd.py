"""SPACE_TO_BATCH_ND: zero-pad the spatial dims (paddings [M, 2]), then move each block_shape
tile into the batch: output batch index = (by * bw + bx) * N + n.  Input rank 4 (NHWC) or 3 (NHC,
v3); block_shape and paddings are constants.  float32 (v1, v3); int32/int64 move as well.
(An int8 input pads with its zero point; that is the quantized versions' business.)"""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, fail


@opdata
class SpaceToBatchNDData(OpData):
    block_shape: tuple
    paddings: tuple
    output_shape: tuple


def reference(x, block, pads):
    m = len(block)
    xp = np.pad(x, ((0, 0),) + tuple(pads) + ((0, 0),) * (x.ndim - 1 - m))
    n = x.shape[0]
    spatial = xp.shape[1:1 + m]
    rest = xp.shape[1 + m:]
    shape = [n]
    for s, b in zip(spatial, block):
        shape += [s // b, b]
    y = xp.reshape(shape + list(rest))
    # axes: 0 n, then (1 + 2i) outer_i, (2 + 2i) block_i
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, y.ndim))
    y = y.transpose(perm)
    return y.reshape([n * int(np.prod(block))] + [s // b for s, b in zip(spatial, block)] + list(rest))


@kernel(BuiltinOperator.SPACE_TO_BATCH_ND, versions=(1, 3))
class SpaceToBatchND(Kernel):
    name = "space_to_batch_nd"
    value_inputs = (0, 1, 2)

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        if len(shape) not in (3, 4):
            fail(node, f"input rank {len(shape)}; TFLite handles rank 3 and 4")
        block = const_ints(context, node, 1, "block_shape")
        flat = const_ints(context, node, 2, "the paddings")
        m = len(block)
        if m != len(shape) - 2 or len(flat) != 2 * m:
            fail(node, f"block_shape {block} / paddings {flat} do not match input rank {len(shape)}")
        pads = tuple((flat[2 * i], flat[2 * i + 1]) for i in range(m))
        out = [shape[0] * int(np.prod(block))]
        for i, (b, (p0, p1)) in enumerate(zip(block, pads)):
            size = shape[1 + i] + p0 + p1
            if b <= 0 or p0 < 0 or p1 < 0 or size % b:
                fail(node, f"spatial dim {i}: padded size {size} does not divide by block {b}")
            out.append(size // b)
        out = tuple(out) + tuple(shape[1 + m:])
        context.set_output(node.outputs[0], out, context.dtype(x))
        return SpaceToBatchNDData(tuple(block), pads, out)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.block_shape, d.paddings)
