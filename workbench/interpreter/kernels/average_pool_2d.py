"""AVERAGE_POOL_2D (float32): mean over each window's taps that fall inside the image.

Padding never counts: a corner window of a SAME pool averages fewer values (TFLITE_FACTS §3.3).

Quantized (uint8 v1, int8 v2, int16 v3): sum the raw integer taps in int32, divide by the number of
in-image taps rounding half away from zero ((sum ± count/2) / count with C's truncating division),
clamp to the fused activation's range (§4.8).  TFLite runs three different routines (optimized
uint8 with a uint32 accumulator, optimized int8, reference int16); for values that cannot be
negative (uint8) the two roundings coincide, so one formula covers all three.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .._jit import njit
from ..registry import Kernel, kernel
from ._pool import Pool2DQuantizedData, prepare_pool


def reference_quantized(x, d) -> np.ndarray:
    n, h, w, c = x.shape
    _, oh, ow, _ = d.output_shape
    out = np.empty(d.output_shape, x.dtype)
    xi = x.astype(np.int64)
    for oy in range(oh):
        y0 = oy * d.stride_h - d.pad_top
        ys = slice(max(0, y0), min(h, y0 + d.filter_h))
        for ox in range(ow):
            x0 = ox * d.stride_w - d.pad_left
            xs = slice(max(0, x0), min(w, x0 + d.filter_w))
            win = xi[:, ys, xs, :]
            count = win.shape[1] * win.shape[2]
            acc = win.sum(axis=(1, 2))
            q = np.where(acc > 0, (acc + count // 2) // count, -((-acc + count // 2) // count))
            out[:, oy, ox, :] = np.clip(q, d.output_activation_min, d.output_activation_max)
    return out


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


@np.errstate(over="ignore", invalid="ignore")           # float inf / nan silently, as TFLite
def reference(x, filt, stride, pad, out_hw, act_range) -> np.ndarray:
    n, h, w, c = x.shape
    (fh, fw), (sh, sw), (pt, pl), (oh, ow) = filt, stride, pad, out_hw
    if n * oh * ow * c == 0:            # an empty output (VALID, input smaller than the window)
        return np.zeros((n, oh, ow, c), np.float32)
    hp = max(pt + h, (oh - 1) * sh + fh)
    wp = max(pl + w, (ow - 1) * sw + fw)
    xp = np.zeros((n, hp, wp, c), np.float64)
    ones = np.zeros((1, hp, wp, 1), np.float64)
    xp[:, pt:pt + h, pl:pl + w, :] = x
    ones[:, pt:pt + h, pl:pl + w, :] = 1.0
    total = np.zeros((n, oh, ow, c), np.float64)
    count = np.zeros((1, oh, ow, 1), np.float64)
    for ky in range(fh):
        for kx in range(fw):
            rows = slice(ky, ky + (oh - 1) * sh + 1, sh)
            cols = slice(kx, kx + (ow - 1) * sw + 1, sw)
            total += xp[:, rows, cols, :]
            count += ones[:, rows, cols, :]
    out = total / np.maximum(count, 1.0)
    return np.clip(out, *act_range).astype(np.float32)


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


@kernel(BuiltinOperator.AVERAGE_POOL_2D, versions=(1, 2, 3))
class AveragePool2D(Kernel):
    name = "average_pool_2d"

    def prepare(self, context, node):
        return prepare_pool(context, node)

    def invoke(self, context, node, d):
        if type(d) is Pool2DQuantizedData:
            average_pool_quantized_numba(context.tensors[node.inputs[0]], context.tensors[node.outputs[0]],
                                         d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.pad_top, d.pad_left,
                                         d.output_activation_min, d.output_activation_max)
            return
        average_pool_numba(context.tensors[node.inputs[0]], context.tensors[node.outputs[0]], d.filter_h,
                           d.filter_w, d.stride_h, d.stride_w, d.pad_top, d.pad_left,
                           np.float32(d.output_activation_min), np.float32(d.output_activation_max))

    def invoke_reference(self, context, node, d):
        if type(d) is Pool2DQuantizedData:
            context.tensors[node.outputs[0]][...] = reference_quantized(context.tensors[node.inputs[0]], d)
            return
        context.tensors[node.outputs[0]][...] = reference(
            context.tensors[node.inputs[0]], (d.filter_h, d.filter_w), (d.stride_h, d.stride_w),
            (d.pad_top, d.pad_left), d.output_shape[1:3], (d.output_activation_min, d.output_activation_max))
