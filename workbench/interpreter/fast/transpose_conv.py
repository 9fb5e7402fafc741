"""Speed layer for TRANSPOSE_CONV (and MediaPipe's Convolution2DTransposeBias): a BLAS product, then col2im.

One matrix product input[N·H·W, I] @ weights[I, KH·KW·O] gives every input pixel's scattered values
("columns"); a numba loop (col2im) adds them onto the output in input order.  Integer types use a
float type in which every sum is exact (``quant.exact_matmul_dtype`` / ``exact_float_dtype``, int64
numpy when none is), so their bits do not depend on the order; then the teaching layer's
requantization, compiled.  Hybrid nodes run a numba loop of the reference scatter (float32, tap by tap).

Variants: float32 follows litert-x86's ``TransposeConvV2`` (``Variant.transpose_conv_kernel``
"gemm+col2im"): x86 only.  The integer paths round as ``up_channels`` / ``up_values`` say (0 under
the reference variant) and hybrid is the reference kernel in both builds: all variants.
"""

from __future__ import annotations

import numpy as np

from ...perf.jit import njit
from ...schema.enums import BuiltinOperator
from .. import quant
from ..kernels.transpose_conv import (
    TransposeConvData,
    TransposeConvHybridData,
    TransposeConvQuantizedData,
    TransposeConvUint8Data,
    filter_matrix,
)
from ..variants import LITERT_X86, VARIANTS
from . import FastPath, fast_path
from .depthwise_conv_2d import bias_copy
from .requantize import quantize_rows_jit, requantize_int32_rows_jit, requantize_int64_rows_jit

ALL = tuple(VARIANTS)
X86 = (LITERT_X86.name,)
SLOTS = {BuiltinOperator.TRANSPOSE_CONV: (2, 1, 3), "Convolution2DTransposeBias": (0, 1, 2)}   # input, weights, bias


@njit
def col2im_sums_numba(cols, out, h, w, kh, kw, sh, sw, pt, pl):
    """out = 0; out[y*sh - pt + fy, x*sw - pl + fx] += cols[(y, x), (fy, fx, :)] in input order, each
    column value cast to ``out``'s type first (float32 for float; int64 for the integer paths, whose
    columns hold exact integers in a float type or int64)."""
    n_b, oh, ow, co = out.shape
    to = out.dtype.type
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for c in range(co):
                    out[b, oy, ox, c] = 0
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
                            out[b, oy, ox, c] += to(cols[row, base + c])


@njit
def col2im_numba(cols, out, h, w, kh, kw, sh, sw, pt, pl, bias, lo, hi):
    """Float32: :func:`col2im_sums_numba`, then + bias and clamp (litert-x86's TransposeConvV2: a
    zeroed output, col2im, then BiasAdd and the activation)."""
    col2im_sums_numba(cols, out, h, w, kh, kw, sh, sw, pt, pl)
    n_b, oh, ow, co = out.shape
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for c in range(co):
                    v = out[b, oy, ox, c] + bias[c]
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    out[b, oy, ox, c] = v


@njit
def requantize_flat_jit(acc, multiplier, shift, n_up, out_zp, lo, hi, out):
    """The requantization of ``kernels/transpose_conv.transpose_conv_uint8`` in one compiled loop over the
    flat int32 sums ``acc`` into ``out``."""
    left = shift if shift > 0 else 0
    right = -shift if shift < 0 else 0
    mask = (np.int64(1) << right) - 1
    nudge = mask - (mask >> 1)
    for i in range(acc.size):
        x = np.int64(acc[i]) << left
        x = ((x + 2147483648) & 0xFFFFFFFF) - 2147483648
        h = (x * multiplier + 1073741824) >> 31         # SRDHM (the multiplier is positive)
        if i < n_up:
            h = (h + nudge) >> right
        else:
            rem = h & mask
            thr = (mask >> 1) + (1 if h < 0 else 0)
            h = (h >> right) + (1 if rem > thr else 0)
        v = h + out_zp
        if v < lo:
            v = lo
        if v > hi:
            v = hi
        out[i] = v


@njit
def hybrid_scatter_numba(q, sf, zp, wf, fscale, out, sh, sw, pt, pl):
    """out = 0; out[b, y·sh − pt + fy, x·sw − pl + fx, o] += float32((q − zp_b)·w)·fscale[o]·sf_b, tap by
    tap in TFLite's loop order (float32 throughout)."""
    n_b, oh, ow, co = out.shape
    _, h, w, ci = q.shape
    kh, kw = wf.shape[1], wf.shape[2]
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for c in range(co):
                    out[b, oy, ox, c] = np.float32(0.0)
        s = sf[b]
        for iy in range(h):
            for ix in range(w):
                for ic in range(ci):
                    qv = np.float32(np.int32(q[b, iy, ix, ic]) - zp[b])
                    for ky in range(kh):
                        oy = iy * sh - pt + ky
                        if oy < 0 or oy >= oh:
                            continue
                        for kx in range(kw):
                            ox = ix * sw - pl + kx
                            if ox < 0 or ox >= ow:
                                continue
                            for c in range(co):
                                t = np.float32(qv * wf[ic, ky, kx, c])
                                t = np.float32(t * fscale[c])
                                out[b, oy, ox, c] = np.float32(out[b, oy, ox, c] + np.float32(t * s))

# ----------------------------------------------------------------------------------------------
# bound paths


class _Col2im(FastPath):
    """The node's slots, its weights as a [I, KH·KW·O] matrix (made at bind when constant, else at every
    invoke), its bias (zeros without one; None: read at every invoke) and the columns [N·H·W, KH·KW·O]."""

    __slots__ = ("name", "slots", "weights", "bias", "cols", "filter_offset")

    def __init__(self, context, node, name, dtype, bias_dtype, filter_offset=0):
        self.name, self.filter_offset = name, filter_offset
        self.slots = x_t, f_t, b_t = tuple(node.input(s) for s in SLOTS[node.op])
        n, h, w, _ = context.shape(x_t)
        co, kh, kw, _ = context.shape(f_t)
        filt = context.value(f_t)
        self.weights = None if filt is None else self.matrix(filt, dtype)
        bias = context.value(b_t) if b_t >= 0 else np.zeros(co, bias_dtype)
        self.bias = None if bias is None else bias_copy(bias, bias_dtype)
        self.cols = np.empty((n * h * w, kh * kw * co), dtype)

    def matrix(self, filt, dtype):
        return filter_matrix(filt.astype(np.int64) - self.filter_offset if self.filter_offset else filt, dtype)

    def operands(self, context, bias_dtype):
        """(input, weights matrix, bias) for this invoke."""
        t = context.tensors
        x_t, f_t, b_t = self.slots
        wm = self.weights if self.weights is not None else self.matrix(t[f_t], self.cols.dtype)
        return t[x_t], wm, (self.bias if self.bias is not None else t[b_t].astype(bias_dtype))


class Float(_Col2im):
    """litert-x86's TransposeConvV2: the product in BLAS, col2im from a zeroed output, + bias, clamp."""

    __slots__ = ()

    def __call__(self, context, node, d):
        x, wm, bias = self.operands(context, np.float32)
        np.matmul(x.reshape(-1, x.shape[3]), wm, out=self.cols)
        col2im_numba(self.cols, context.tensors[node.outputs[0]], x.shape[1], x.shape[2], d.filter_h, d.filter_w,
                     d.stride_h, d.stride_w, d.pad_top, d.pad_left, bias, np.float32(d.output_activation_min),
                     np.float32(d.output_activation_max))


class Quantized(_Col2im):
    """int8 / 16x8: exact float (or int64) product, col2im in int64, the node's recipe compiled."""

    __slots__ = ("acc",)

    def __init__(self, context, node, d, dtype):
        super().__init__(context, node, f"blas({dtype.name}, exact)+col2im", dtype, np.int64)
        self.acc = np.empty(d.output_shape, np.int64)

    def __call__(self, context, node, d):
        x, wm, bias = self.operands(context, np.int64)
        xs = x.reshape(-1, x.shape[3])
        if d.input_zero_point:
            xs = xs.astype(self.cols.dtype) - d.input_zero_point
        np.matmul(xs, wm, out=self.cols, casting="unsafe")
        col2im_sums_numba(self.cols, self.acc, x.shape[1], x.shape[2], d.filter_h, d.filter_w, d.stride_h,
                          d.stride_w, d.pad_top, d.pad_left)
        out = context.tensors[node.outputs[0]]
        co = out.shape[3]
        args = (self.acc.reshape(-1, co), bias, d.output_multiplier, d.output_shift, d.output_zero_point,
                d.output_activation_min, d.output_activation_max, out.reshape(-1, co))
        if d.recipe == "int64":
            requantize_int64_rows_jit(*args)
        else:
            requantize_int32_rows_jit(*args, d.up_channels)


class Uint8(_Col2im):
    """uint8: (x − x_zp) @ (w − w_zp) in an exact float type, col2im into int32 sums (TFLite's buffer is
    int32 too), + bias, the flat requantization compiled."""

    __slots__ = ("sums", "acc")

    def __init__(self, context, node, d, dtype):
        super().__init__(context, node, f"blas({dtype.name}, exact)+col2im", dtype, np.int64, d.filter_zero_point)
        self.sums = np.empty(d.output_shape, np.int64)
        self.acc = np.empty(d.output_shape, np.int32)

    def __call__(self, context, node, d):
        x, wm, bias = self.operands(context, np.int64)
        xs = x.reshape(-1, x.shape[3]).astype(self.cols.dtype) - d.input_zero_point
        np.matmul(xs, wm, out=self.cols)
        col2im_sums_numba(self.cols, self.sums, x.shape[1], x.shape[2], d.filter_h, d.filter_w, d.stride_h,
                          d.stride_w, d.pad_top, d.pad_left)
        np.copyto(self.acc, self.sums, casting="unsafe")      # int32, wrapping as TFLite's int32 buffer
        self.acc += bias.astype(np.int32)
        requantize_flat_jit(self.acc.reshape(-1), d.output_multiplier, d.output_shift, d.up_values,
                            d.output_zero_point, d.output_activation_min, d.output_activation_max,
                            context.tensors[node.outputs[0]].reshape(-1))


class Hybrid(FastPath):
    """The reference scatter of HybridTransposeConv in numba (float32, tap by tap), each image quantized
    first; weights as float32 [I, KH, KW, O] (exact int8 values)."""

    __slots__ = ("weights", "bias", "quantized", "scaling_factors", "input_offsets")
    name = "numba scatter (float32, tap by tap)"

    def __init__(self, context, node, d):
        filt, b_t = context.value(node.input(1)), node.input(3)
        n, h, w, c = context.shape(node.input(2))
        self.weights = None if filt is None else hybrid_weights(filt)
        bias = context.value(b_t) if b_t >= 0 else np.zeros(d.output_shape[3], np.float32)
        self.bias = None if bias is None else np.ascontiguousarray(bias, np.float32)
        self.quantized = np.empty((n, h * w * c), np.int8)
        self.scaling_factors, self.input_offsets = np.empty(n, np.float32), np.empty(n, np.int32)

    def __call__(self, context, node, d):
        t = context.tensors
        x = t[node.inputs[2]]
        n = x.shape[0]
        wf = self.weights if self.weights is not None else hybrid_weights(t[node.inputs[1]])
        bias = self.bias if self.bias is not None else t[node.inputs[3]]
        quantize_rows_jit(x.reshape(n, -1), True, self.quantized, self.scaling_factors, self.input_offsets)
        out = t[node.outputs[0]]
        hybrid_scatter_numba(self.quantized.reshape(x.shape), self.scaling_factors, self.input_offsets, wf,
                             d.filter_scale, out, d.stride_h, d.stride_w, d.pad_top, d.pad_left)
        out[...] = quant.std_min(quant.std_max((out + bias).astype(np.float32), np.float32(d.output_activation_min)),
                                 np.float32(d.output_activation_max))


def hybrid_weights(filt):
    """OHWI int8 → float32 [I, KH, KW, O] (exact)."""
    return np.ascontiguousarray(np.asarray(filt).transpose(3, 1, 2, 0), np.float32)


@fast_path(BuiltinOperator.TRANSPOSE_CONV, TransposeConvData, variants=X86)
@fast_path("Convolution2DTransposeBias", TransposeConvData, variants=X86)
def bind_float(context, node, d):
    return Float(context, node, "blas+col2im", np.float32, np.float32)


@fast_path(BuiltinOperator.TRANSPOSE_CONV, TransposeConvQuantizedData, variants=ALL)
def bind_quantized(context, node, d):
    in_zp, (qmin, qmax) = d.input_zero_point, quant.quantized_range(context.dtype(node.input(2)))
    in_abs = max(abs(qmin - in_zp), abs(qmax - in_zp))
    dtype = quant.exact_matmul_dtype(in_abs, 127.0 * context.shape(node.input(1))[3]) or np.dtype(np.int64)
    return Quantized(context, node, d, dtype)


@fast_path(BuiltinOperator.TRANSPOSE_CONV, TransposeConvUint8Data, variants=ALL)
def bind_uint8(context, node, d):
    return Uint8(context, node, d, quant.exact_float_dtype(255.0 * context.shape(node.input(1))[3], input_abs_max=255))


@fast_path(BuiltinOperator.TRANSPOSE_CONV, TransposeConvHybridData, variants=ALL)   # the reference kernel in both
def bind_hybrid(context, node, d):
    return Hybrid(context, node, d)
