"""CONV_2D (float32): input NHWC, filter OHWI, optional bias [O] → output NHWC.

Padding and output size follow TFLite's ``padding.h`` (TFLITE_FACTS §3.3).  When the filter has
fewer input channels than the input, the convolution is grouped (version 6): groups =
input channels / filter channels, and output channel ``o`` reads group ``o // (O / groups)``.

Three ways to compute the same thing:
  * :func:`reference`  one matrix product per filter tap, obvious and slow-ish;
  * ``matmul`` / ``im2col+blas``  (fast path) a 1x1 convolution is a matrix product; a KxK one
    becomes one after copying every window into a row of a prepared "im2col" matrix;
  * :func:`conv_numba`  a direct loop nest compiled by numba (used for grouped convolutions).
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .._jit import njit
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, PADDING_NAMES, activation_name, activation_range, apply_activation, check_rank, window


@opdata
class Conv2DData(OpData):
    padding: str
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    groups: int
    output_shape: tuple
    activation: str
    output_activation_min: float
    output_activation_max: float
    impl: str                   # "matmul" | "im2col+blas" | "numba"
    weights: object = None      # filter as a [KH*KW*I, O] matrix (im2col / matmul), when constant
    bias: object = None         # float32 [O] (zeros when the node has no bias)
    padded: object = None       # scratch: the input with its zero border
    cols: object = None         # scratch: the im2col matrix [N*OH*OW, KH*KW*I]


def padded_shape(x_shape, f_h, f_w, oh, ow, sh, sw, dh, dw, pt, pl) -> tuple:
    n, h, w, c = x_shape
    need_h = (oh - 1) * sh + (f_h - 1) * dh + 1
    need_w = (ow - 1) * sw + (f_w - 1) * dw + 1
    return n, max(pt + h, need_h), max(pl + w, need_w), c


def reference(x, filt, bias, stride, dilation, pad, out_hw, act_range) -> np.ndarray:
    """The slow, obvious conv: zero-pad, then for every filter tap add (window slice) @ W_tap^T."""
    n, h, w, c = x.shape
    o, kh, kw, ci = filt.shape
    groups = c // ci
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    xp = np.zeros(padded_shape(x.shape, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl), np.float32)
    xp[:, pt:pt + h, pl:pl + w, :] = x
    out = np.zeros((n, oh, ow, o), np.float32)
    per_group = o // groups
    for g in range(groups):
        oc = slice(g * per_group, (g + 1) * per_group)
        icg = slice(g * ci, (g + 1) * ci)
        for ky in range(kh):
            for kx in range(kw):
                rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
                cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
                out[..., oc] += xp[:, rows, cols, icg] @ filt[oc, ky, kx, :].T
    if bias is not None:
        out += bias
    lo, hi = act_range
    return np.clip(out, lo, hi).astype(np.float32)


@njit
def conv_numba(x, w, bias, out, sh, sw, dh, dw, pt, pl, lo, hi):
    """Direct convolution (any groups/dilation); taps outside the image are skipped."""
    n_b, h, wd, c = x.shape
    o, kh, kw, ci = w.shape
    _, oh, ow, _ = out.shape
    groups = c // ci
    per_group = o // groups
    acc = np.empty(o, np.float32)
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for oc in range(o):
                    acc[oc] = bias[oc]
                for ky in range(kh):
                    iy = oy * sh - pt + ky * dh
                    if iy < 0 or iy >= h:
                        continue
                    for kx in range(kw):
                        ix = ox * sw - pl + kx * dw
                        if ix < 0 or ix >= wd:
                            continue
                        for oc in range(o):
                            base = (oc // per_group) * ci
                            s = np.float32(0.0)
                            for i in range(ci):
                                s += x[b, iy, ix, base + i] * w[oc, ky, kx, i]
                            acc[oc] += s
                for oc in range(o):
                    v = acc[oc]
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    out[b, oy, ox, oc] = v


def filter_matrix(filt: np.ndarray) -> np.ndarray:
    """OHWI filter → contiguous [KH*KW*I, O] matrix for (im2col rows) @ matrix."""
    return np.ascontiguousarray(filt.reshape(filt.shape[0], -1).T, dtype=np.float32)


def im2col_view(src: np.ndarray, oh, ow, kh, kw, sh, sw, dh, dw) -> np.ndarray:
    """A [N, OH, OW, KH, KW, C] strided view of every window of ``src`` (no copy)."""
    sN, sH, sW, sC = src.strides
    n, _, _, c = src.shape
    return np.lib.stride_tricks.as_strided(src, (n, oh, ow, kh, kw, c),
                                           (sN, sH * sh, sW * sw, sH * dh, sW * dw, sC), writeable=False)


@kernel(BuiltinOperator.CONV_2D, versions=(1, 6))
class Conv2D(Kernel):
    name = "conv_2d"

    def prepare(self, context, node):
        p = node.params
        x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
        for t, what in ((x_t, "input"), (f_t, "filter")):
            context.expect_dtype(node, t, (F32,), what)
        if b_t >= 0:
            context.expect_dtype(node, b_t, (F32,), "bias")
        n, h, w, c = check_rank(node, context, x_t, 4)
        o, kh, kw, ci = check_rank(node, context, f_t, 4, "filter")
        if ci <= 0 or c % ci or o % (c // ci):
            raise ValueError(f"CONV_2D node {node.index}: input channels {c} and filter {[o, kh, kw, ci]} do not "
                             f"form whole groups")
        groups = c // ci
        sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
        oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
        context.set_output(y_t, (n, oh, ow, o), F32)
        lo, hi = activation_range(p["fused_activation_function"])
        filt = context.value(f_t)
        bias_v = context.value(b_t) if b_t >= 0 else np.zeros(o, np.float32)
        padded = cols = weights = None
        needs_pad = pt > 0 or pl > 0 or padded_shape((n, h, w, c), kh, kw, oh, ow, sh, sw, dh, dw, pt, pl)[1:3] != (h, w)
        if groups > 1:
            impl = "numba"
        elif kh == kw == 1 and sh == sw == 1 and not needs_pad:
            impl = "matmul"
            weights = filter_matrix(filt) if filt is not None else None
        else:
            impl = "im2col+blas"
            weights = filter_matrix(filt) if filt is not None else None
            if needs_pad:
                padded = np.zeros(padded_shape((n, h, w, c), kh, kw, oh, ow, sh, sw, dh, dw, pt, pl), np.float32)
            cols = np.empty((n * oh * ow, kh * kw * c), np.float32)
        return Conv2DData(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, kh, kw, pt, pl, groups, (n, oh, ow, o),
                          activation_name(p["fused_activation_function"]), lo, hi, impl, weights,
                          None if bias_v is None else np.ascontiguousarray(bias_v, np.float32), padded, cols)

    def invoke(self, context, node, d):
        tensors = context.tensors
        x = tensors[node.inputs[0]]
        out = tensors[node.outputs[0]]
        bias = d.bias if d.bias is not None else tensors[node.inputs[2]]
        impl = d.impl
        if impl == "numba":
            conv_numba(x, tensors[node.inputs[1]], bias, out, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                       d.pad_top, d.pad_left, np.float32(d.output_activation_min), np.float32(d.output_activation_max))
            return
        weights = d.weights if d.weights is not None else filter_matrix(tensors[node.inputs[1]])
        o = out.shape[3]
        out2d = out.reshape(-1, o)
        if impl == "matmul":
            np.matmul(x.reshape(-1, x.shape[3]), weights, out=out2d)
        else:
            src = x
            if d.padded is not None:
                h, w = x.shape[1], x.shape[2]
                d.padded[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = x
                src = d.padded
            _, oh, ow, _ = out.shape
            view = im2col_view(src, oh, ow, d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h,
                               d.dilation_w)
            np.copyto(d.cols.reshape(view.shape), view)
            np.matmul(d.cols, weights, out=out2d)
        out2d += bias
        apply_activation(out2d, d.output_activation_min, d.output_activation_max)

    def invoke_reference(self, context, node, d):
        tensors = context.tensors
        b_t = node.input(2)
        bias = tensors[b_t] if b_t >= 0 else None
        tensors[node.outputs[0]][...] = reference(
            tensors[node.inputs[0]], tensors[node.inputs[1]], bias, (d.stride_h, d.stride_w),
            (d.dilation_h, d.dilation_w), (d.pad_top, d.pad_left), d.output_shape[1:3],
            (d.output_activation_min, d.output_activation_max))
