"""DEQUANTIZE → float32: float16 widens (version 3); int8/uint8/int16 compute scale * (q - zero_point),
per tensor (v1 uint8, v2 int8, v3 int16) or per channel along ``quantized_dimension`` (v5).
int4 (v6) and int2 (v7) constants (AI Edge Quantizer's weight-only recipes) are unpacked to int8 when
the model is loaded (``Context.packed_bits``) and then take exactly the int8 paths, as litert's
``dequantize.h`` does after ``UnpackPackedIntToInt8``.  AEQ leaves the op at version 1; litert does
not look at the version once the kernel is found, so neither do we.

Constant inputs (float16 weights) are dequantized once, in ``allocate_tensors``.

int8, uint8 and int16 per tensor, as litert runs them on x86 (the NEON code of
``optimized_ops::Dequantize`` compiled through NEON_2_SSE): 8 values at a time as
``x * scale + (-zero_point * scale)`` in float32 (two roundings), the last ``size % 8`` values as
``(float)(scale * (x - zero_point))`` (one rounding).  The two differ in the last bit for some
values.  An int16 input must have zero point 0 (``dequantize.cc`` checks it).
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


def per_tensor_8wide(q, scale, zero_point) -> np.ndarray:
    """litert's x86 per-tensor DEQUANTIZE (int8 / uint8 / int16): 8-wide part x*s + (-zp*s) in
    float32, tail (float)(s*(x-zp))."""
    flat = np.asarray(q).reshape(-1)
    n_vec = flat.size // 8 * 8
    s = np.float32(scale)
    out = np.empty(flat.size, np.float32)
    out[:n_vec] = flat[:n_vec].astype(np.float32) * s + np.float32(-np.float32(zero_point) * s)
    out[n_vec:] = (np.float64(s) * (flat[n_vec:].astype(np.int64) - int(zero_point))).astype(np.float32)
    return out.reshape(np.shape(q))


@kernel(BuiltinOperator.DEQUANTIZE, versions=(1, 2, 3, 5, 6, 7))
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
        bits = context.packed_bits(x)
        input_type = f"int{bits} (stored packed, unpacked to int8)" if bits else str(dt)
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
            if dt == np.int16 and zps != 0:
                raise UnsupportedOpError(f"DEQUANTIZE (node {node.index}): int16 input zero point is {int(zps)}; "
                                         f"TFLite needs 0")
        return DequantizeData(input_type, scales, zps, axis)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if d.scale is None:
            out[...] = x
        elif np.ndim(d.scale) == 0:
            out[...] = per_tensor_8wide(x, d.scale, d.zero_point)
        else:
            np.subtract(x, d.zero_point, out=out, casting="unsafe")
            out *= d.scale

    def invoke_reference(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        if d.scale is not None and np.ndim(d.scale) == 0:
            context.tensors[node.outputs[0]][...] = per_tensor_8wide(x, d.scale, d.zero_point)
            return
        context.tensors[node.outputs[0]][...] = reference(x, d.scale, d.zero_point)
