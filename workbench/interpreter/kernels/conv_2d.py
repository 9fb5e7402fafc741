"""CONV_2D (float32): input NHWC, filter OHWI, optional bias [O] → output NHWC.

Padding and output size follow TFLite's ``padding.h`` (TFLITE_FACTS §3.3).  When the filter has
fewer input channels than the input, the convolution is grouped (version 6): groups =
input channels / filter channels, and output channel ``o`` reads group ``o // (O / groups)``.

int8 (version 3; per-tensor or per-channel filter scales): TFLITE_FACTS §4.5.  The int32 sum
Σ filter·(input − input_zero_point) (+ bias) is requantized per output channel with
``output_multiplier[c]`` / ``output_shift[c]``, moved by ``output_zero_point`` and clamped.  The fast
path computes the sums with a float BLAS product that is provably exact (see
:func:`workbench.interpreter.quant.exact_float_dtype`), then requantizes in a numba loop;
:func:`reference_int8` does the same in plain int64 numpy, tap by tap.

Three ways to compute the same thing (float32):
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
from .. import quant
from ._elementwise import KernelError
from ._common import (F32, PADDING_NAMES, activation_name, activation_range, apply_activation, check_bias,
                      check_rank, window)

I8 = np.dtype(np.int8)


@opdata
class ConvGeometry(OpData):
    """What every CONV_2D kernel prepares, float or int8: window, padding, groups, output shape."""

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


@opdata
class Conv2DData(ConvGeometry):
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


@opdata
class Conv2DInt8Data(ConvGeometry):
    input_scale: float
    input_zero_point: int
    filter_scale: object            # float32 [1] (per tensor) or [O] (per channel)
    output_scale: float
    output_zero_point: int
    effective_scale: object         # float64 [O]: input_scale * filter_scale[c] / output_scale
    output_multiplier: object       # int64 [O]: quantize_multiplier(effective_scale[c])[0]
    output_shift: object            # int64 [O]: ... [1] (positive = left shift)
    output_activation_min: int
    output_activation_max: int
    impl: str                       # "im2col+blas(float32, exact)" | "...float64..." | "numba"
    per_channel: bool = False
    bias: object = None             # int32 [O] (zeros when absent)
    bias_folded: object = None      # int64 [O]: bias − input_zero_point·Σw  (the fast path's bias)
    weights: object = None          # float [KH*KW*I, O]
    padded: object = None           # scratch: input with a border of input_zero_point
    cols: object = None             # scratch: float im2col matrix
    acc: object = None              # scratch: float [N*OH*OW, O] exact int sums
    rounding: str = "up"          # ties of the final rounding shift: "up" (what TFLite runs on x86:
                                  # ruy / NEON vrshl) or "away" (reference kernels, gemmlowp)

    @property
    def half_up(self) -> bool:
        return self.rounding == "up"


def reference_int8(x, filt, bias, stride, dilation, pad, out_hw, d) -> np.ndarray:
    """The obvious int8 conv: (x − zp) zero-padded, int64 sums tap by tap, then requantize."""
    n, h, w, c = x.shape
    o, kh, kw, ci = filt.shape
    groups = c // ci
    (sh, sw), (dh, dw), (pt, pl), (oh, ow) = stride, dilation, pad, out_hw
    xp = np.zeros(padded_shape(x.shape, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl), np.int64)
    xp[:, pt:pt + h, pl:pl + w, :] = x.astype(np.int64) - d.input_zero_point
    acc = np.zeros((n, oh, ow, o), np.int64)
    per_group = o // groups
    f64 = filt.astype(np.int64)
    for g in range(groups):
        oc = slice(g * per_group, (g + 1) * per_group)
        icg = slice(g * ci, (g + 1) * ci)
        for ky in range(kh):
            for kx in range(kw):
                rows = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
                cols = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
                acc[..., oc] += xp[:, rows, cols, icg] @ f64[oc, ky, kx, :].T
    if bias is not None:
        acc += bias.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.half_up) + d.output_zero_point
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(np.int8)


@njit
def conv_int8_numba(x, w, out, sh, sw, dh, dw, pt, pl, in_zp):
    """Direct int8 convolution (any groups/dilation): int32 sums over in-image taps into ``out``."""
    n_b, h, wd, c = x.shape
    o, kh, kw, ci = w.shape
    _, oh, ow, _ = out.shape
    groups = c // ci
    per_group = o // groups
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for oc in range(o):
                    base = (oc // per_group) * ci
                    acc = np.int32(0)
                    for ky in range(kh):
                        iy = oy * sh - pt + ky * dh
                        if iy < 0 or iy >= h:
                            continue
                        for kx in range(kw):
                            ix = ox * sw - pl + kx * dw
                            if ix < 0 or ix >= wd:
                                continue
                            for i in range(ci):
                                acc += np.int32(w[oc, ky, kx, i]) * (np.int32(x[b, iy, ix, base + i]) - in_zp)
                    out[b, oy, ox, oc] = acc


def prepare_int8(context, node, p, n, h, w, c, o, kh, kw, ci, groups, sh, sw, dh, dw, oh, ow, pt, pl):
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (I8,), "filter")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.int32,), "bias")
    in_s, in_zp = quant.tensor_scale_zp(context, x_t)
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    f_scales, _, _ = quant.quant_params(context, f_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, o)
    code = p["fused_activation_function"]
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp)
    context.set_output(y_t, (n, oh, ow, o), I8)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(o, np.int32)
    weights = padded = cols = acc = folded = None
    if groups > 1 or filt is None or bias is None:
        impl = "numba"
    else:
        wmat = filt.reshape(o, -1).T.astype(np.int64)        # [K, O]
        fdt = quant.exact_float_dtype(float(np.abs(wmat).sum(axis=0).max(initial=0)))
        weights = np.ascontiguousarray(wmat, fdt)
        folded = bias.astype(np.int64) - in_zp * wmat.sum(axis=0)
        pshape = padded_shape((n, h, w, c), kh, kw, oh, ow, sh, sw, dh, dw, pt, pl)
        direct = kh == kw == 1 and sh == sw == 1 and pshape[1:3] == (h, w)
        if not direct:
            if pshape[1:3] != (h, w):
                padded = np.full(pshape, in_zp, np.int8)         # a border of zero points adds 0
            cols = np.empty((n * oh * ow, kh * kw * c), fdt)
        else:
            cols = np.empty((n * h * w, c), fdt)
        acc = np.empty((n * oh * ow, o), fdt)
        impl = f"{'matmul' if direct else 'im2col+blas'}({fdt.name}, exact)"
    return Conv2DInt8Data(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, kh, kw, pt, pl, groups, (n, oh, ow, o),
                          activation_name(code), in_s, in_zp, f_scales, out_s, out_zp, eff, mult, shift, lo, hi, impl,
                          len(f_scales) > 1, None if bias is None else np.ascontiguousarray(bias, np.int32), folded,
                          weights, padded, cols, acc)


def invoke_int8(context, node, d) -> None:
    tensors = context.tensors
    x = tensors[node.inputs[0]]
    out = tensors[node.outputs[0]]
    if d.impl == "numba":
        bias = d.bias if d.bias is not None else tensors[node.inputs[2]]
        acc = np.empty(out.shape, np.int32)
        conv_int8_numba(x, tensors[node.inputs[1]], acc, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w,
                        d.pad_top, d.pad_left, d.input_zero_point)
        o = out.shape[3]
        quant.requantize_rows_jit(acc.reshape(-1, o), bias.astype(np.int64), d.output_multiplier, d.output_shift,
                                  d.output_zero_point, d.output_activation_min, d.output_activation_max,
                                  out.reshape(-1, o), d.half_up)
        return
    o = out.shape[3]
    if d.impl.startswith("matmul"):
        np.copyto(d.cols, x.reshape(-1, x.shape[3]), casting="unsafe")
    else:
        src = x
        if d.padded is not None:
            h, w = x.shape[1], x.shape[2]
            d.padded[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = x
            src = d.padded
        _, oh, ow, _ = out.shape
        view = im2col_view(src, oh, ow, d.filter_h, d.filter_w, d.stride_h, d.stride_w, d.dilation_h, d.dilation_w)
        np.copyto(d.cols.reshape(view.shape), view, casting="unsafe")
    np.matmul(d.cols, d.weights, out=d.acc)
    quant.requantize_rows_jit(d.acc, d.bias_folded, d.output_multiplier, d.output_shift, d.output_zero_point,
                              d.output_activation_min, d.output_activation_max, out.reshape(-1, o), d.half_up)


@kernel(BuiltinOperator.CONV_2D, versions=(1, 3, 6))
class Conv2D(Kernel):
    name = "conv_2d"

    def prepare(self, context, node):
        p = node.params
        if context.dtype(node.input(0)) == I8:
            x_t, f_t = node.input(0), node.input(1)
            n, h, w, c = check_rank(node, context, x_t, 4)
            o, kh, kw, ci = check_rank(node, context, f_t, 4, "filter")
            check_bias(node, context, node.input(2), o)
            if ci <= 0 or c < ci or c % ci or o % (c // ci):
                raise KernelError(f"CONV_2D node {node.index}: input channels {c} and filter {[o, kh, kw, ci]} do not "
                                 f"form whole groups")
            sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
            oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
            return prepare_int8(context, node, p, n, h, w, c, o, kh, kw, ci, c // ci, sh, sw, dh, dw, oh, ow, pt, pl)
        x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
        for t, what in ((x_t, "input"), (f_t, "filter")):
            context.expect_dtype(node, t, (F32,), what)
        if b_t >= 0:
            context.expect_dtype(node, b_t, (F32,), "bias")
        n, h, w, c = check_rank(node, context, x_t, 4)
        o, kh, kw, ci = check_rank(node, context, f_t, 4, "filter")
        check_bias(node, context, b_t, o)
        if ci <= 0 or c < ci or c % ci or o % (c // ci):
            raise KernelError(f"CONV_2D node {node.index}: input channels {c} and filter {[o, kh, kw, ci]} do not "
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
        if type(d) is Conv2DInt8Data:
            return invoke_int8(context, node, d)
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
        if type(d) is Conv2DInt8Data:
            tensors[node.outputs[0]][...] = reference_int8(
                tensors[node.inputs[0]], tensors[node.inputs[1]], bias, (d.stride_h, d.stride_w),
                (d.dilation_h, d.dilation_w), (d.pad_top, d.pad_left), d.output_shape[1:3], d)
            return
        tensors[node.outputs[0]][...] = reference(
            tensors[node.inputs[0]], tensors[node.inputs[1]], bias, (d.stride_h, d.stride_w),
            (d.dilation_h, d.dilation_w), (d.pad_top, d.pad_left), d.output_shape[1:3],
            (d.output_activation_min, d.output_activation_max))
