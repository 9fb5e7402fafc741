"""TRANSPOSE_CONV (float32): inputs [output_shape (int32 [4]), weights OHWI, input NHWC, bias (v3)].

Each input pixel (y, x) scatters its weighted values to output rows y*S_h - pad_h + fy and columns
x*S_w - pad_w + fx; taps landing outside the output are dropped; then the bias, then the fused
activation (version 4).  The output size is given, not computed; the padding is the forward-conv
padding of that output size (TFLITE_FACTS §3.3, dilation 1).

Fast path: one matrix product input[N*H*W, I] @ W[I, KH*KW*O] gives every pixel's scattered
contributions ("columns"); a numba loop (col2im) adds them into place.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .._jit import njit
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, PADDING_NAMES, activation_name, activation_range, out_size, pad_before


@opdata
class TransposeConvData(OpData):
    padding: str
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    output_shape: tuple
    activation: str
    output_activation_min: float
    output_activation_max: float
    impl: str = "blas+col2im"
    weights: object = None     # [I, KH*KW*O] (when constant)
    bias: object = None        # float32 [O] (zeros without bias)
    cols: object = None        # scratch [N*H*W, KH*KW*O]


def reference(x, filt, bias, stride, pad, out_shape, act_range):
    """Scatter every filter tap's contribution onto a canvas, then crop the padding off."""
    n, h, w, ci = x.shape
    co, kh, kw, _ = filt.shape
    (sh, sw), (pt, pl) = stride, pad
    oh, ow = out_shape[1], out_shape[2]
    canvas = np.zeros((n, max((h - 1) * sh + kh, pt + oh), max((w - 1) * sw + kw, pl + ow), co), np.float32)
    for ky in range(kh):
        for kx in range(kw):
            canvas[:, ky:ky + (h - 1) * sh + 1:sh, kx:kx + (w - 1) * sw + 1:sw, :] += x @ filt[:, ky, kx, :].T
    out = canvas[:, pt:pt + oh, pl:pl + ow, :]
    if bias is not None:
        out = out + bias
    return np.clip(out, *act_range).astype(np.float32)


@njit
def col2im_numba(cols, out, h, w, kh, kw, sh, sw, pt, pl, bias, lo, hi):
    """out = bias; out[y*sh - pt + fy, x*sw - pl + fx] += cols[(y, x), (fy, fx, :)]; clamp."""
    n_b, oh, ow, co = out.shape
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for c in range(co):
                    out[b, oy, ox, c] = bias[c]
        for iy in range(h):
            for ix in range(w):
                row = (b * h + iy) * w + ix
                for ky in range(kh):
                    oy = iy * sh - pt + ky
                    if oy < 0 or oy >= oh:
                        continue
                    for kx in range(kw):
                        ox = ix * sw - pl + kx
                        if ox < 0 or ox >= ow:
                            continue
                        base = (ky * kw + kx) * co
                        for c in range(co):
                            out[b, oy, ox, c] += cols[row, base + c]
        for oy in range(oh):
            for ox in range(ow):
                for c in range(co):
                    v = out[b, oy, ox, c]
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    out[b, oy, ox, c] = v


def weights_matrix(filt):
    """OHWI → [I, KH*KW*O]."""
    return np.ascontiguousarray(filt.transpose(3, 1, 2, 0).reshape(filt.shape[3], -1), np.float32)


def check_shapes(node, context, x_t, f_t, b_t):
    context.expect_dtype(node, x_t, (F32,), "input")
    context.expect_dtype(node, f_t, (F32,), "weights")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    xs, fs = context.shape(x_t), context.shape(f_t)
    if len(xs) != 4 or len(fs) != 4 or xs[3] != fs[3]:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): input {list(xs)} and weights {list(fs)} "
                                 f"(OHWI) do not match")
    if b_t >= 0 and context.shape(b_t) != (fs[0],):
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): bias {list(context.shape(b_t))} for "
                                 f"{fs[0]} output channels")
    return xs, fs


class TransposeConvBase(Kernel):
    """Shared by TRANSPOSE_CONV and MediaPipe's Convolution2DTransposeBias: only the slots differ."""

    slots = (2, 1, 3)   # (input, weights, bias)

    def make_data(self, context, node, padding, sh, sw, pt, pl, out_shape, act_code):
        x_t, f_t, b_t = (node.input(s) for s in self.slots)
        n, h, w, _ = context.shape(x_t)
        co, kh, kw, _ = context.shape(f_t)
        lo, hi = activation_range(act_code)
        filt = context.value(f_t)
        bias = context.value(b_t) if b_t >= 0 else np.zeros(co, np.float32)
        return TransposeConvData(padding, sh, sw, kh, kw, pt, pl, tuple(out_shape), activation_name(act_code), lo, hi,
                                 "blas+col2im", weights_matrix(filt) if filt is not None else None,
                                 None if bias is None else np.ascontiguousarray(bias, np.float32),
                                 np.empty((n * h * w, kh * kw * co), np.float32))

    def invoke(self, context, node, d):
        t = context.tensors
        x_s, f_s, b_s = self.slots
        x = t[node.inputs[x_s]]
        wm = d.weights if d.weights is not None else weights_matrix(t[node.inputs[f_s]])
        bias = d.bias if d.bias is not None else t[node.inputs[b_s]]
        np.matmul(x.reshape(-1, x.shape[3]), wm, out=d.cols)
        col2im_numba(d.cols, t[node.outputs[0]], x.shape[1], x.shape[2], d.filter_h, d.filter_w, d.stride_h,
                     d.stride_w, d.pad_top, d.pad_left, bias, np.float32(d.output_activation_min),
                     np.float32(d.output_activation_max))

    def invoke_reference(self, context, node, d):
        t = context.tensors
        x_t, f_t, b_t = (node.input(s) for s in self.slots)
        t[node.outputs[0]][...] = reference(t[x_t], t[f_t], t[b_t] if b_t >= 0 else None, (d.stride_h, d.stride_w),
                                            (d.pad_top, d.pad_left), d.output_shape,
                                            (d.output_activation_min, d.output_activation_max))


@kernel(BuiltinOperator.TRANSPOSE_CONV, versions=(1, 3, 4))
class TransposeConv(TransposeConvBase):
    name = "transpose_conv"
    value_inputs = (0, 1, 2, 3)

    def prepare(self, context, node):
        p = node.params
        x_t, f_t, b_t = node.input(2), node.input(1), node.input(3)
        xs, fs = check_shapes(node, context, x_t, f_t, b_t)
        shape = np.asarray(context.require_value(node, 0, "the output shape")).reshape(-1)
        if shape.shape != (4,):
            raise UnsupportedOpError(f"TRANSPOSE_CONV (node {node.index}): output shape {shape.tolist()} must have 4 "
                                     f"values")
        out = tuple(int(v) for v in shape)
        if any(v < 0 for v in out):
            raise UnsupportedOpError(f"TRANSPOSE_CONV (node {node.index}): output shape {list(out)} has a negative "
                                     f"dimension")
        if out[0] != xs[0] or out[3] != fs[0]:
            raise UnsupportedOpError(f"TRANSPOSE_CONV (node {node.index}): output shape {list(out)} does not fit "
                                     f"batch {xs[0]} / {fs[0]} output channels")
        sh, sw, padding = p["stride_h"], p["stride_w"], p["padding"]
        if sh <= 0 or sw <= 0 or padding not in (1, 2):
            raise UnsupportedOpError(f"TRANSPOSE_CONV (node {node.index}): strides ({sh}, {sw}) / padding "
                                     f"{PADDING_NAMES.get(padding, padding)} unusable (absent options table?)")
        pt, _ = pad_before(sh, 1, out[1], fs[1], out_size(padding, out[1], fs[1], sh, 1))
        pl, _ = pad_before(sw, 1, out[2], fs[2], out_size(padding, out[2], fs[2], sw, 1))
        context.set_output(node.outputs[0], out, F32)
        return self.make_data(context, node, PADDING_NAMES[padding], sh, sw, pt, pl, out,
                              p.get("fused_activation_function", 0))
