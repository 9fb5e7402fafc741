"""Speed layer for RESIZE_BILINEAR: the builtin kernel's float32 and uint8 arithmetic as numba loops.

``optimized_ops::ResizeBilinearGeneric`` (float32) and ``ResizeBilinearGenericSmallChannel`` (uint8),
one output pixel at a time: the four weight products, then x00·w00 + x01·w01 + x10·w10 + x11·w11 in
that order (float32; uint8 + 0.5, truncated) — the bits of ``kernels/resize_bilinear.py``'s
``bilinear_optimized``, so these serve the ``litert-x86`` variant only.  The float 2x and uint8 8x
kernels and the integer types keep the teaching layer's numpy code (it is fast there).
"""

from __future__ import annotations

import numpy as np

from ...perf.jit import njit
from ...schema.enums import BuiltinOperator
from ..kernels.resize_bilinear import ResizeBilinearData, ResizeBilinearUint8Data, takes_2x2_kernel
from ..variants import LITERT_X86
from . import Call, fast_path


@njit
def bilinear_float_numba(x, y0, y1, dy, x0, x1, dx, out):
    n, oh, ow, c = out.shape
    one = np.float32(1.0)
    zero = np.float32(0.0)
    for b in range(n):
        for y in range(oh):
            fy, r0, r1 = dy[y], y0[y], y1[y]
            for xx in range(ow):
                fx, c0, c1 = dx[xx], x0[xx], x1[xx]
                w00 = (one - fy) * (one - fx)
                w01 = (one - fy) * fx
                w10 = fy * (one - fx)
                w11 = fy * fx
                for k in range(c):
                    acc = zero + x[b, r0, c0, k] * w00
                    acc = acc + x[b, r0, c1, k] * w01
                    acc = acc + x[b, r1, c0, k] * w10
                    out[b, y, xx, k] = acc + x[b, r1, c1, k] * w11


@njit
def bilinear_uint8_numba(x, y0, y1, dy, x0, x1, dx, out):
    n, oh, ow, c = out.shape
    one = np.float32(1.0)
    half = np.float32(0.5)
    for b in range(n):
        for y in range(oh):
            fy, r0, r1 = dy[y], y0[y], y1[y]
            for xx in range(ow):
                fx, c0, c1 = dx[xx], x0[xx], x1[xx]
                w00 = (one - fy) * (one - fx)
                w01 = (one - fy) * fx
                w10 = fy * (one - fx)
                w11 = fy * fx
                for k in range(c):
                    acc = np.float32(x[b, r0, c0, k]) * w00
                    acc = acc + np.float32(x[b, r0, c1, k]) * w01
                    acc = acc + np.float32(x[b, r1, c0, k]) * w10
                    acc = acc + np.float32(x[b, r1, c1, k]) * w11
                    out[b, y, xx, k] = np.uint8(np.int64(acc + half))


def _float(context, node, d):
    bilinear_float_numba(context.tensors[node.inputs[0]], d.y0, d.y1, d.dy, d.x0, d.x1, d.dx,
                         context.tensors[node.outputs[0]])


def _uint8(context, node, d):
    bilinear_uint8_numba(context.tensors[node.inputs[0]], d.y0, d.y1, d.dy, d.x0, d.x1, d.dx,
                         context.tensors[node.outputs[0]])


@fast_path(BuiltinOperator.RESIZE_BILINEAR, ResizeBilinearData, variants=(LITERT_X86.name,))
def bind_float(context, node, d):
    if takes_2x2_kernel(d, context.shape(node.inputs[0])):
        return None
    return Call("numba", _float)


@fast_path(BuiltinOperator.RESIZE_BILINEAR, ResizeBilinearUint8Data, variants=(LITERT_X86.name,))
def bind_uint8(context, node, d):
    return None if d.exact_8x else Call("numba", _uint8)
