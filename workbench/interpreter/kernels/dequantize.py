"""DEQUANTIZE → float32: float16 widens (version 3); int8/uint8/int16 compute scale * (q - zero_point),
per tensor (v1 uint8, v2 int8, v3 int16) or per channel along ``quantized_dimension`` (v5).

Constant inputs (float16 weights) are dequantized once, in ``allocate_tensors``.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32


@opdata
class DequantizeData(OpData):
    input_type: str
    scale: object = None          # float32, scalar or broadcastable per-channel array
    zero_point: object = None     # int32, same shape as scale
    quantized_dimension: int = 0


def reference(q, scale, zero_point):
    if q.dtype == np.float16:
        return q.astype(np.float32)
    return (np.float32(1) * scale * (q.astype(np.int32) - zero_point)).astype(np.float32)


@kernel(BuiltinOperator.DEQUANTIZE, versions=(1, 2, 3, 5))
class Dequantize(Kernel):
    name = "dequantize"

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, ("float16", "int8", "uint8", "int16"))
        shape = context.shape(x)
        context.set_output(node.outputs[0], shape, F32)
        if dt == np.float16:
            return DequantizeData("float16")
        q = context.tensor_meta(x).quantization
        scales = np.asarray(tuple(q.scale or ()) if q is not None else (), np.float32)
        zps = np.asarray(tuple(q.zero_point or ()) if q is not None else (), np.int32)
        if len(scales) == 0:
            raise UnsupportedOpError(f"DEQUANTIZE (node {node.index}): {dt} input without a scale")
        if len(zps) == 0:
            zps = np.zeros_like(scales, np.int32)
        axis = int(q.quantized_dimension or 0)
        if len(scales) > 1:
            if axis >= len(shape) or shape[axis] != len(scales):
                raise UnsupportedOpError(f"DEQUANTIZE (node {node.index}): {len(scales)} scales for axis {axis} of "
                                         f"{list(shape)}")
            bshape = [1] * len(shape)
            bshape[axis] = len(scales)
            scales, zps = scales.reshape(bshape), zps.reshape(bshape)
        else:
            scales, zps = scales[0], zps[0]
        return DequantizeData(str(dt), scales, zps, axis)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if d.scale is None:
            out[...] = x
        else:
            np.subtract(x, d.zero_point, out=out, casting="unsafe")
            out *= d.scale

    def invoke_reference(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        context.tensors[node.outputs[0]][...] = reference(x, d.scale, d.zero_point)
