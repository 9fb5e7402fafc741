"""Speed layer for MAX_POOL_2D and AVERAGE_POOL_2D: one numba loop nest per pool (max: one for
every type; average: float and quantized, whose means are computed differently).

Each loop visits only the taps inside the image (no padded copy) and keeps one accumulator row per
output position, in the teaching layer's order (rows, then columns), so the bits are the same as
``kernels/max_pool_2d.py`` and ``kernels/average_pool_2d.py`` compute.  No rounding differs between
TFLite's builds for pools, so these serve both arithmetic variants.
"""

from __future__ import annotations

import numpy as np

from ...perf.jit import njit
from ...schema.enums import BuiltinOperator
from ..kernels._pool import Pool2DData, Pool2DQuantizedData
from ..variants import VARIANTS
from . import Call, fast_path


@njit
def max_pool_numba(x, out, fh, fw, sh, sw, pt, pl, lo, hi, lowest):
    """Float and quantized MAX_POOL_2D: ``lowest`` (float32 −inf, or the integer type's minimum as
    an int32) starts each channel's running maximum and sets the accumulator's type."""
    n_b, h, w, c = x.shape
    _, oh, ow, _ = out.shape
    acc = np.full(c, lowest)
    for b in range(n_b):
        for oy in range(oh):
            y0 = oy * sh - pt
            ky0 = max(0, -y0)
            ky1 = min(fh, h - y0)
            for ox in range(ow):
                x0 = ox * sw - pl
                kx0 = max(0, -x0)
                kx1 = min(fw, w - x0)
                for k in range(c):
                    acc[k] = lowest
                for ky in range(ky0, ky1):
                    for kx in range(kx0, kx1):
                        for k in range(c):
                            v = x[b, y0 + ky, x0 + kx, k]
                            if v > acc[k]:
                                acc[k] = v
                for k in range(c):
                    v = acc[k]
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    out[b, oy, ox, k] = v


@njit
def average_pool_numba(x, out, fh, fw, sh, sw, pt, pl, lo, hi):
    n_b, h, w, c = x.shape
    _, oh, ow, _ = out.shape
    acc = np.empty(c, np.float32)
    for b in range(n_b):
        for oy in range(oh):
            y0 = oy * sh - pt
            ky0 = max(0, -y0)
            ky1 = min(fh, h - y0)
            for ox in range(ow):
                x0 = ox * sw - pl
                kx0 = max(0, -x0)
                kx1 = min(fw, w - x0)
                for k in range(c):
                    acc[k] = 0.0
                count = 0
                for ky in range(ky0, ky1):
                    for kx in range(kx0, kx1):
                        count += 1
                        for k in range(c):
                            acc[k] += x[b, y0 + ky, x0 + kx, k]
                for k in range(c):
                    v = acc[k] / count if count > 0 else np.float32(0.0)
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    out[b, oy, ox, k] = v


@njit
def average_pool_quantized_numba(x, out, fh, fw, sh, sw, pt, pl, lo, hi):
    n_b, h, w, c = x.shape
    _, oh, ow, _ = out.shape
    acc = np.empty(c, np.int32)
    for b in range(n_b):
        for oy in range(oh):
            y0 = oy * sh - pt
            ky0 = max(0, -y0)
            ky1 = min(fh, h - y0)
            for ox in range(ow):
                x0 = ox * sw - pl
                kx0 = max(0, -x0)
                kx1 = min(fw, w - x0)
                for k in range(c):
                    acc[k] = 0
                count = 0
                for ky in range(ky0, ky1):
                    for kx in range(kx0, kx1):
                        count += 1
                        for k in range(c):
                            acc[k] += x[b, y0 + ky, x0 + kx, k]
                half = count // 2
                for k in range(c):
                    a = acc[k]
                    if a > 0:
                        v = (a + half) // count
                    else:
                        v = -((-a + half) // count)
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    out[b, oy, ox, k] = v


def _window(d):
    return d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.pad_top, d.pad_left


def _max_float(context, node, d):
    max_pool_numba(context.tensors[node.inputs[0]], context.tensors[node.outputs[0]], *_window(d),
                   np.float32(d.output_activation_min), np.float32(d.output_activation_max), np.float32(-np.inf))


def _max_quantized(context, node, d):
    x = context.tensors[node.inputs[0]]
    max_pool_numba(x, context.tensors[node.outputs[0]], *_window(d), d.output_activation_min,
                   d.output_activation_max, np.int32(np.iinfo(x.dtype).min))


def _average_float(context, node, d):
    average_pool_numba(context.tensors[node.inputs[0]], context.tensors[node.outputs[0]], *_window(d),
                       np.float32(d.output_activation_min), np.float32(d.output_activation_max))


def _average_quantized(context, node, d):
    average_pool_quantized_numba(context.tensors[node.inputs[0]], context.tensors[node.outputs[0]], *_window(d),
                                 d.output_activation_min, d.output_activation_max)


ALL = tuple(VARIANTS)


@fast_path(BuiltinOperator.MAX_POOL_2D, Pool2DData, variants=ALL)
def bind_max_float(context, node, d):
    return Call("numba", _max_float)


@fast_path(BuiltinOperator.MAX_POOL_2D, Pool2DQuantizedData, variants=ALL)
def bind_max_quantized(context, node, d):
    return Call("numba", _max_quantized)


@fast_path(BuiltinOperator.AVERAGE_POOL_2D, Pool2DData, variants=ALL)
def bind_average_float(context, node, d):
    return Call("numba", _average_float)


@fast_path(BuiltinOperator.AVERAGE_POOL_2D, Pool2DQuantizedData, variants=ALL)
def bind_average_quantized(context, node, d):
    return Call("numba", _average_quantized)
