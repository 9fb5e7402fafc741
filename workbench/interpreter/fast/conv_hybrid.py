"""Speed layer for hybrid CONV_2D (float input, int8 filter; teaching layer: ``kernels/_conv_uint8_hybrid.py``).

Every image is quantized by the numba twin of TFLite's row quantization (:mod:`.requantize`), then:
  * "per-tensor" / "per-channel" recipes: im2col of the quantized images (border: each image's zero
    point) on the node's own arrays, an exact float BLAS product (int8 × int8 sums in float32 or
    float64, :func:`workbench.interpreter.quant.exact_float_dtype`), and the float tail in one
    compiled loop (:func:`hybrid_conv_output_jit`) in litert's order;
  * "reference" recipe (grouped convolutions; per-channel ones under the reference variant): the
    direct loop of ``reference_ops::HybridConvPerChannel`` (:func:`grouped_hybrid_numba`).
Each recipe computes what the teaching layer computes for it, so both variants are served.  The
label keeps the note on int4 filters, which the interpreter unpacks to int8 at load (as litert does).
"""

from __future__ import annotations

import numpy as np

from ...perf.jit import njit
from ...schema.enums import BuiltinOperator
from .. import quant
from ..kernels._conv_uint8_hybrid import Conv2DHybridData
from ..variants import VARIANTS
from . import FastPath, fast_path, requantize
from .conv_2d import _im2col, _product_layout, conv_sums_numba


@njit
def hybrid_conv_output_jit(acc, offsets, row_sums, scales, bias, per_channel, lo, hi, out):
    """The float tail of the "per-tensor" / "per-channel" recipes in one compiled loop: ``acc`` [N, P, O]
    exact sums, ``scales`` float32 [N, O] (the product scales), ``out`` float32 [N, P, O]."""
    n, p, o = acc.shape
    for b in range(n):
        off = np.int64(offsets[b])
        for i in range(p):
            for c in range(o):
                a = np.int64(acc[b, i, c])
                if per_channel:
                    a = ((a - off * row_sums[c] + 2147483648) & 0xFFFFFFFF) - 2147483648
                v = np.float32(a) * scales[b, c]
                v = v + bias[c]
                if per_channel:
                    if hi < v:
                        v = hi
                    if v < lo:
                        v = lo
                else:
                    if v < lo:
                        v = lo
                    if hi < v:
                        v = hi
                out[b, i, c] = v


@njit
def hybrid_scale_numba(acc, sf, fs, bias, out, lo, hi):
    """The float32 tail of the direct hybrid loop, as ``reference_ops::HybridConvPerChannel``: each
    int32 sum times its channel's filter scale, times the batch's scaling factor, plus the bias,
    clamped."""
    n, oh, ow, o = out.shape
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for oc in range(o):
                    v = np.float32(np.float32(acc[b, oy, ox, oc]) * fs[oc]) * sf[b]
                    v = v + bias[oc]
                    if v < lo:
                        v = lo
                    if hi < v:
                        v = hi
                    out[b, oy, ox, oc] = v


class HybridPath(FastPath):
    """One hybrid CONV_2D node: the quantized images, their scaling factors and zero points, and
    either the BLAS product's arrays or (``cols`` None) the filter for the direct loop."""

    __slots__ = ("name", "asymmetric", "per_channel", "filter_scale", "bias", "row_sums", "filter", "weights",
                 "input_quantized", "scaling_factors", "input_offsets", "product_scales", "padded", "cols", "acc",
                 "direct", "sums")

    def __init__(self, name, d, x_shape, bias, filt, weights=None, padded=None, cols=None, acc=None, direct=False):
        n, o = x_shape[0], d.output_shape[3]
        self.name, self.asymmetric, self.per_channel = name, d.recipe != "per-tensor", d.recipe == "per-channel"
        self.filter_scale, self.row_sums = np.asarray(d.filter_scale, np.float32), d.row_sums
        self.bias = np.zeros(o, np.float32) if bias is None else np.ascontiguousarray(bias, np.float32)
        self.filter, self.weights, self.padded, self.cols, self.acc, self.direct = (filt, weights, padded, cols, acc,
                                                                                    direct)
        self.input_quantized = np.zeros(x_shape, np.int8)
        self.scaling_factors = np.ones(n, np.float32)
        self.input_offsets = np.zeros(n, np.int32)
        self.product_scales = np.zeros((n, o), np.float32)
        self.sums = None if filt is None else np.zeros(d.output_shape, np.int32)     # the direct loop's sums

    def __call__(self, context, node, d) -> None:
        x, out = context.tensors[node.inputs[0]], context.tensors[node.outputs[0]]
        n, h, w, c = x.shape
        lo, hi = np.float32(d.output_activation_min), np.float32(d.output_activation_max)
        requantize.quantize_rows_jit(x.reshape(n, -1), self.asymmetric, self.input_quantized.reshape(n, -1),
                                     self.scaling_factors, self.input_offsets)
        if self.cols is None:
            # one batch at a time: each has its own input offset (asymmetric quantization)
            sums = self.sums
            for b in range(n):
                conv_sums_numba(self.input_quantized[b:b + 1], self.filter, sums[b:b + 1], d.stride_h, d.stride_w,
                                d.dilation_h, d.dilation_w, d.pad_top, d.pad_left, int(self.input_offsets[b]), 0)
            hybrid_scale_numba(sums, self.scaling_factors, self.filter_scale, self.bias, out, lo, hi)
            return
        if self.padded is not None:
            self.padded[...] = self.input_offsets.reshape(-1, 1, 1, 1)
        _im2col(self.input_quantized, d, self.cols, self.padded, self.direct)
        np.matmul(self.cols, self.weights, out=self.acc)
        fs = self.filter_scale
        if self.per_channel:
            self.product_scales[...] = fs[None, :] * self.scaling_factors[:, None]
        else:
            self.product_scales[...] = (self.scaling_factors * fs[0]).astype(np.float32)[:, None]
        o = out.shape[3]
        hybrid_conv_output_jit(self.acc.reshape(n, -1, o), self.input_offsets, self.row_sums, self.product_scales,
                               self.bias, self.per_channel, lo, hi, out.reshape(n, -1, o))


@fast_path(BuiltinOperator.CONV_2D, Conv2DHybridData, variants=tuple(VARIANTS))
def bind_hybrid(context, node, d):
    n, oh, ow, o = d.output_shape
    x_shape = context.shape(node.input(0))
    f_t, b_t = node.input(1), node.input(2)
    filt = np.ascontiguousarray(context.value(f_t), np.int8)
    bias = context.value(b_t) if b_t >= 0 else None
    note = f"int{context.packed_bits(f_t)} weights (unpacked to int8), " if context.packed_bits(f_t) else ""
    if d.recipe == "reference":
        kind = "grouped, per-channel, asymmetric" if d.groups > 1 else "per-channel, asymmetric (reference kernel)"
        return HybridPath(f"{note}{kind}: quantize(numba)+direct loop(numba)", d, x_shape, bias, filt)
    wmat = filt.reshape(o, -1).astype(np.int64)
    fdt = quant.exact_float_dtype(float(np.abs(wmat).sum(axis=1).max(initial=0)), input_abs_max=128)
    direct, pshape = _product_layout(d, x_shape)
    kind = "per-channel, asymmetric" if d.recipe == "per-channel" else "per-tensor, symmetric"
    k = x_shape[3] if direct else d.filter_h * d.filter_w * x_shape[3]
    return HybridPath(f"{note}{kind}: quantize(numba)+{'matmul' if direct else 'im2col+blas'}({fdt.name}, exact)", d,
                      x_shape, bias, None, np.ascontiguousarray(wmat.T, fdt),
                      None if pshape is None else np.zeros(pshape, np.int8),
                      np.empty((n * oh * ow, k), fdt), np.empty((n * oh * ow, o), fdt), direct)
