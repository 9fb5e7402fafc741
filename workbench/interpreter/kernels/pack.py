"""PACK: stack ``values_count`` tensors of one shape along a new ``axis``."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import normalize_axis


@opdata
class PackData(OpData):
    axis: int
    output_shape: tuple


@kernel(BuiltinOperator.PACK, versions=(1,))
class Pack(Kernel):
    name = "pack"

    def prepare(self, context, node):
        shapes = {context.shape(t) for t in node.inputs}
        dtypes = {context.dtype(t) for t in node.inputs}
        if len(shapes) != 1 or len(dtypes) != 1:
            raise UnsupportedOpError(f"PACK (node {node.index}): inputs differ in shape or type")
        shape = shapes.pop()
        axis = normalize_axis(node, int(node.params["axis"]), len(shape) + 1)
        out = shape[:axis] + (len(node.inputs),) + shape[axis:]
        context.set_output(node.outputs[0], out, dtypes.pop())
        return PackData(axis, out)

    def invoke(self, context, node, d):
        np.stack([context.tensors[t] for t in node.inputs], axis=d.axis, out=context.tensors[node.outputs[0]])
