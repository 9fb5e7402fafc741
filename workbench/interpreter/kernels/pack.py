"""PACK: stack ``values_count`` tensors of one shape along a new ``axis``.

Versions: float32/int32/int64/uint8 → 1, int8 → 2, int16 → 3, uint32 → 4.  Quantized inputs
(uint8, int8, int16) must have the output's scale and zero point — TFLite checks it in Prepare and
copies the integers — so no rescaling ever happens."""

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


@kernel(BuiltinOperator.PACK, versions=(1, 2, 3, 4))
class Pack(Kernel):
    name = "pack"

    def prepare(self, context, node):
        shapes = {context.shape(t) for t in node.inputs}
        dtypes = {context.dtype(t) for t in node.inputs}
        if len(shapes) != 1 or len(dtypes) != 1:
            raise UnsupportedOpError(f"PACK (node {node.index}): inputs differ in shape or type")
        shape = shapes.pop()
        dt = next(iter(dtypes))
        if dt == np.dtype(object):
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): STRING tensors are not "
                                     f"supported (TFLite's kernel refuses them)")
        if dt in (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16)):
            from .. import quant
            so, zo = quant.tensor_scale_zp(context, node.outputs[0])
            for t in node.inputs:
                si, zi = quant.tensor_scale_zp(context, t)
                if np.float32(si) != np.float32(so) or zi != zo:
                    raise UnsupportedOpError(f"PACK (node {node.index}): input '{context.name(t)}' has scale {si} / "
                                             f"zero point {zi}, the output {so} / {zo}; TFLite requires them equal")
        axis = normalize_axis(node, int(node.params["axis"]), len(shape) + 1)
        out = shape[:axis] + (len(node.inputs),) + shape[axis:]
        context.set_output(node.outputs[0], out, dtypes.pop())
        return PackData(axis, out)

    def invoke(self, context, node, d):
        np.stack([context.tensors[t] for t in node.inputs], axis=d.axis, out=context.tensors[node.outputs[0]])
