"""TILE: repeat the input ``multiples[i]`` times along each axis (multiples: constant int32/int64).
float32, int32, int64, bool, uint8, int16 (v1), STRING (v2: numpy object arrays move as they are),
int8 (v3).  Pure data movement: quantized values are copied as they are."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, fail


@opdata
class TileData(OpData):
    multiples: tuple
    output_shape: tuple


@kernel(BuiltinOperator.TILE, versions=(1, 2, 3))
class Tile(Kernel):
    name = "tile"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        mult = const_ints(context, node, 1, "multiples")
        if len(mult) != len(shape) or any(m < 0 for m in mult):
            fail(node, f"multiples {mult} must be {len(shape)} non-negative values (input shape {list(shape)})")
        out = tuple(d * m for d, m in zip(shape, mult))
        context.set_output(node.outputs[0], out, context.dtype(x))
        return TileData(tuple(mult), out)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = np.tile(context.tensors[node.inputs[0]], d.multiples)
