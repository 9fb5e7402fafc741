"""MAX_POOL_2D: maximum over each window's taps inside the image (padding never wins).

float32: a NaN never wins either (litert compares ``v > max``; measured: a window of NaNs only gives
-FLT_MAX after the NONE clamp, a window with NaN and 2 gives 2); ±inf become ±FLT_MAX by the clamp.

float32 and uint8 (version 1), int8 (version 2), int16 (version 3).  A quantized pool compares the
raw integers (input and output share scale and zero point) and then clamps to the fused
activation's integer range (TFLITE_FACTS §4.8)."""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .._jit import njit
from ..registry import Kernel, kernel
from ._pool import Pool2DQuantizedData, prepare_pool


@njit
def max_pool_quantized_numba(x, out, fh, fw, sh, sw, pt, pl, lo, hi, lowest):
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


def reference(x, filt, stride, pad, out_hw, act_range) -> np.ndarray:
    n, h, w, c = x.shape
    (fh, fw), (sh, sw), (pt, pl), (oh, ow) = filt, stride, pad, out_hw
    if n * oh * ow * c == 0:            # an empty output (VALID, input smaller than the window)
        return np.zeros((n, oh, ow, c), np.float32)
    hp = max(pt + h, (oh - 1) * sh + fh)
    wp = max(pl + w, (ow - 1) * sw + fw)
    xp = np.full((n, hp, wp, c), -np.inf, np.float32)
    xp[:, pt:pt + h, pl:pl + w, :] = x
    out = np.full((n, oh, ow, c), -np.inf, np.float32)
    for ky in range(fh):
        for kx in range(fw):
            rows = slice(ky, ky + (oh - 1) * sh + 1, sh)
            cols = slice(kx, kx + (ow - 1) * sw + 1, sw)
            np.fmax(out, xp[:, rows, cols, :], out=out)     # a NaN never wins, as in litert
    return np.clip(out, *act_range).astype(np.float32)


@njit
def max_pool_numba(x, out, fh, fw, sh, sw, pt, pl, lo, hi):
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
                    acc[k] = -np.inf
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


@kernel(BuiltinOperator.MAX_POOL_2D, versions=(1, 2, 3))
class MaxPool2D(Kernel):
    name = "max_pool_2d"

    def prepare(self, context, node):
        return prepare_pool(context, node)

    def invoke(self, context, node, d):
        if type(d) is Pool2DQuantizedData:
            x = context.tensors[node.inputs[0]]
            max_pool_quantized_numba(x, context.tensors[node.outputs[0]], d.filter_h, d.filter_w, d.stride_h,
                                     d.stride_w, d.pad_top, d.pad_left, d.output_activation_min,
                                     d.output_activation_max, int(np.iinfo(x.dtype).min))
            return
        max_pool_numba(context.tensors[node.inputs[0]], context.tensors[node.outputs[0]], d.filter_h, d.filter_w,
                       d.stride_h, d.stride_w, d.pad_top, d.pad_left, np.float32(d.output_activation_min),
                       np.float32(d.output_activation_max))

    def invoke_reference(self, context, node, d):
        if type(d) is Pool2DQuantizedData:
            x = context.tensors[node.inputs[0]]
            r = reference(x.astype(np.float32), (d.filter_h, d.filter_w), (d.stride_h, d.stride_w),
                          (d.pad_top, d.pad_left), d.output_shape[1:3],
                          (d.output_activation_min, d.output_activation_max))
            context.tensors[node.outputs[0]][...] = r.astype(x.dtype)     # integers up to 2^16: exact in float32
            return
        context.tensors[node.outputs[0]][...] = reference(
            context.tensors[node.inputs[0]], (d.filter_h, d.filter_w), (d.stride_h, d.stride_w),
            (d.pad_top, d.pad_left), d.output_shape[1:3], (d.output_activation_min, d.output_activation_max))
