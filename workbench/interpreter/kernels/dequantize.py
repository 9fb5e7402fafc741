"""DEQUANTIZE → float32: float16 widens (version 3); int8/uint8/int16 compute scale * (q - zero_point),
per tensor (v1 uint8, v2 int8, v3 int16) or per channel along ``quantized_dimension`` (v5).
int4 (v6) and int2 (v7) constants (AI Edge Quantizer's weight-only recipes) are unpacked to int8 when
the model is loaded (``Context.packed_bits``) and then take exactly the int8 paths, as litert's
``dequantize.h`` does after ``UnpackPackedIntToInt8``.  AEQ leaves the op at version 1; litert does
not look at the version once the kernel is found, so neither do we.

Constant inputs (float16 weights) are dequantized once, in ``allocate_tensors``.

``reference_ops::Dequantize`` / ``PerChannelDequantize``: (float)(scale · (q − zero_point)), one
rounding.  An int16 input must have zero point 0 (``dequantize.cc`` checks it).  Variant ``litert-x86``
(``Variant.quantize_block`` = 8): per tensor, the NEON code of ``optimized_ops::Dequantize`` (NEON_2_SSE
on x86) takes blocks of 8 as ``q · scale + (−zero_point · scale)`` in float32 (two roundings, which
differ in the last bit for some values); the last size % 8 values are the reference's.
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
    block: int = 0                # per tensor, variant litert-x86: values per NEON block (0: the reference)


def dequantize(q, scale, zero_point, block: int = 0) -> np.ndarray:
    """(float)(scale · (q − zero_point)) (exact in float32 arithmetic: q − zp is an exact float32 and
    the product rounds once); float16 widens.  ``block`` > 0, per tensor: the first ⌊size/block⌋·block
    values as q · scale + (−zp · scale) in float32 (the optimized kernel's NEON blocks)."""
    if q.dtype == np.float16:
        return q.astype(np.float32)
    if not block or np.ndim(scale) > 0:
        return ((q.astype(np.int32) - zero_point).astype(np.float32) * scale).astype(np.float32)
    s = np.float32(scale)
    flat = q.reshape(-1)
    n_vec = flat.size // block * block
    out = np.empty(flat.size, np.float32)
    out[:n_vec] = flat[:n_vec].astype(np.float32) * s + np.float32(-np.float32(zero_point) * s)
    out[n_vec:] = (flat[n_vec:].astype(np.int32) - zero_point).astype(np.float32) * s
    return out.reshape(q.shape)


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
        block = context.variant.quantize_block if np.ndim(scales) == 0 else 0
        return DequantizeData(input_type, scales, zps, axis, block)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        context.tensors[node.outputs[0]][...] = dequantize(x, d.scale, d.zero_point, d.block)
