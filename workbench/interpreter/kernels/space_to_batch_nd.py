"""SPACE_TO_BATCH_ND: zero-pad the spatial dims (paddings [M, 2]), then move each block_shape
tile into the batch: output batch index = (by * bw + bx) * N + n.  Input rank 4 (NHWC) or 3 (NHC,
v3); block_shape and paddings are constants.  Versions: float32/int32/int64/uint8 → 1, int8 → 2,
rank 3 → 3, int16 → 4.

Quantized tensors pad with the output's zero point (the integer standing for 0.0).  TFLite's
Prepare requires equal input and output zero points for uint8/int8 and zero points of 0 for int16
(scales are not compared: the integers are moved as they are)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, fail, refuse


@opdata
class SpaceToBatchNDData(OpData):
    block_shape: tuple
    paddings: tuple
    output_shape: tuple
    pad_value: object = 0        # the output's zero point for quantized tensors


QUANTIZED = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16))
TYPES = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)) + QUANTIZED


def check_zero_points(context, node, dt):
    """TFLite's Prepare checks of SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND on quantized tensors; returns the
    output zero point (None for other types)."""
    if dt not in QUANTIZED:
        return None
    from .. import quant
    _, zi = quant.tensor_scale_zp(context, node.inputs[0])
    _, zo = quant.tensor_scale_zp(context, node.outputs[0])
    if dt == np.dtype(np.int16) and (zi != 0 or zo != 0):
        refuse(node, f"int16 zero points must be 0 (input {zi}, output {zo}), as TFLite requires")
    if zi != zo:
        refuse(node, f"input zero point {zi} differs from the output's {zo}; TFLite requires them equal")
    return zo


def reference(x, block, pads, pad_value=0):
    m = len(block)
    xp = np.pad(x, ((0, 0),) + tuple(pads) + ((0, 0),) * (x.ndim - 1 - m), constant_values=pad_value)
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


@kernel(BuiltinOperator.SPACE_TO_BATCH_ND, versions=(1, 2, 3, 4))
class SpaceToBatchND(Kernel):
    name = "space_to_batch_nd"
    value_inputs = (0, 1, 2)

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, TYPES)
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
        zp = check_zero_points(context, node, dt)
        context.set_output(node.outputs[0], out, dt)
        return SpaceToBatchNDData(tuple(block), pads, out, 0 if zp is None else dt.type(zp))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.block_shape, d.paddings,
                                                           d.pad_value)
