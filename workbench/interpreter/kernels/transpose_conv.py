"""TRANSPOSE_CONV: inputs [output_shape (int32 [4]), weights OHWI, input NHWC, optional bias].

Every input pixel (y, x) scatters input·weights onto output rows y·S_h − pad_top + ky and columns
x·S_w − pad_left + kx (taps off the output are dropped); then the bias and the fused activation
(version 4).  The output size is given; the padding is the forward-conv padding of that size
(``kernels/padding.h``; litert refuses sizes that do not fit the input, ``_common.transpose_window``).
The prepared facts (OpData) and prepare's checks, shared with MediaPipe's Convolution2DTransposeBias,
are in ``_transpose_conv.py``.

transpose_conv.cc picks the kernel from the types — float32, int8 (version 2; 3 with a bias, 4 with
an activation), 16x8 (int8's versions: op_version.cc tests its rule on input 0), uint8 and hybrid —
one function below each, named after the reference kernel it follows.  LiteRT's optimized x86
kernel (``TransposeConvV2``) differs in the last bit: ``Variant.transpose_conv_kernel`` ("scatter"
or "gemm+col2im": :func:`transpose_conv_float`, ``up_channels``, ``up_values``).
Speed layer: ``interpreter/fast/transpose_conv.py``.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, kernel
from ._common import F32, activation_name, activation_range
from ._transpose_conv import (
    I8,
    I16,
    U8,
    TransposeConvData,
    TransposeConvHybridData,
    TransposeConvQuantizedData,
    TransposeConvUint8Data,
    check_shapes,
    output_geometry,
    prepare_hybrid,
    prepare_quantized,
)

# -- the computation: a canvas big enough for every tap, one numpy step per filter tap, then a crop --


def canvas(x_shape, co: int, d, dtype) -> np.ndarray:
    """Zeros [N, CH, CW, O] holding every tap of every input pixel and the padded output."""
    n, h, w, _ = x_shape
    _, oh, ow, _ = d.output_shape
    return np.zeros((n, max((h - 1) * d.stride_h + d.filter_h, d.pad_top + oh),
                     max((w - 1) * d.stride_w + d.filter_w, d.pad_left + ow), co), dtype)


def crop(c: np.ndarray, d) -> np.ndarray:
    _, oh, ow, _ = d.output_shape
    return c[:, d.pad_top:d.pad_top + oh, d.pad_left:d.pad_left + ow, :]


def taps_in_input_order(x_shape, d):
    """The filter taps (ky, kx) with the canvas window input pixel (y, x) reaches through them
    ([N, y·S_h + ky, x·S_w + kx]), last tap first: on any one output element the taps then arrive in
    TFLite's order, by input row, then input column."""
    n, h, w, _ = x_shape
    if n * h * w == 0:
        return
    for ky in reversed(range(d.filter_h)):
        for kx in reversed(range(d.filter_w)):
            yield ky, kx, (slice(None), slice(ky, ky + (h - 1) * d.stride_h + 1, d.stride_h),
                           slice(kx, kx + (w - 1) * d.stride_w + 1, d.stride_w))


def filter_matrix(filt, dtype=np.float32) -> np.ndarray:
    """OHWI → [I, KH·KW·O]: one row per input channel, columns in (ky, kx, o) order."""
    return np.ascontiguousarray(filt.transpose(3, 1, 2, 0).reshape(filt.shape[3], -1), dtype)


@np.errstate(over="ignore", invalid="ignore")           # float inf / nan silently, as TFLite
def transpose_conv_float(x, filt, bias, d, kernel: str = "scatter") -> np.ndarray:
    """``reference_ops::TransposeConv`` ("scatter"): output = 0, then every input value
    x[b, y, x, i] · filter[o, ky, kx, i] added to its output element in input order (row, column,
    channel); + bias; min(max(v, lo), hi).  "gemm+col2im" (litert-x86's ``TransposeConvV2``): one
    matrix product input[N·H·W, I] @ filter[I, KH·KW·O] (its sums in BLAS order; LiteRT's Eigen GEMM
    keeps its own), then col2im adds each pixel's KH·KW·O values in input order; + bias; clamp."""
    n, h, w, ci = x.shape
    out = canvas(x.shape, filt.shape[0], d, np.float32)
    if kernel == "gemm+col2im" and x.size:
        cols = (x.reshape(-1, ci) @ filter_matrix(filt)).reshape(n, h, w, d.filter_h, d.filter_w, -1)
        for ky, kx, win in taps_in_input_order(x.shape, d):
            out[win] += cols[:, :, :, ky, kx]
    else:
        for ky, kx, win in taps_in_input_order(x.shape, d):
            for i in range(ci):
                out[win] += x[..., i, None] * filt[:, ky, kx, i]
    return float_clamp(crop(out, d) if bias is None else crop(out, d) + bias, d)


def float_clamp(v, d):
    """TFLite's ActivationFunctionWithMinMax: std::min(std::max(v, lo), hi) (NaN stays NaN)."""
    return quant.std_min(quant.std_max(v, np.float32(d.output_activation_min)), np.float32(d.output_activation_max))


def transpose_conv_sums(x, filt, d, x_offset: int = 0, f_offset: int = 0) -> np.ndarray:
    """int64 Σ (w − f_offset)·(x − x_offset) scattered onto the output: per filter tap, one integer
    matrix product [N, H, W, I] @ [I, O] (exact, so the order does not matter)."""
    xs, f = x.astype(np.int64) - x_offset, filt.astype(np.int64) - f_offset
    acc = canvas(x.shape, filt.shape[0], d, np.int64)
    for ky, kx, win in taps_in_input_order(x.shape, d):
        acc[win] += xs @ f[:, ky, kx, :].T
    return crop(acc, d)


def transpose_conv_quantized(x, filt, bias, d, dtype) -> np.ndarray:
    """``reference_integer_ops::TransposeConv`` (int8, 16x8): the sums + bias, requantized per channel by
    the node's recipe; ties up in the channels below ``up_channels`` (litert-x86), else away."""
    acc = transpose_conv_sums(x, filt, d, d.input_zero_point)
    co = acc.shape[3]
    b = np.zeros(co, np.int64) if bias is None else bias.astype(np.int64)
    out = np.empty(acc.shape, dtype)
    args = (acc.reshape(-1, co), b, d.output_multiplier, d.output_shift, d.output_zero_point,
            d.output_activation_min, d.output_activation_max, out.reshape(-1, co))
    if d.recipe == "int64":
        quant.requantize_int64_rows(*args)
    else:
        quant.requantize_int32_rows(*args, d.up_channels)
    return out


def transpose_conv_uint8(x, filt, bias, d) -> np.ndarray:
    """``reference_ops::TransposeConv`` (uint8): the sums + bias, one multiplier, ties away from zero —
    except the first ``up_values`` values of the flat output, which litert-x86 rounds up."""
    acc = transpose_conv_sums(x, filt, d, d.input_zero_point, d.filter_zero_point)
    flat = (acc + (0 if bias is None else bias.astype(np.int64))).reshape(-1)
    v = quant.multiply_by_quantized_multiplier_array(flat, d.output_multiplier, d.output_shift)
    n_up = d.up_values
    v[:n_up] = quant.multiply_by_quantized_multiplier_array(flat[:n_up], d.output_multiplier, d.output_shift, True)
    v = np.clip(v + d.output_zero_point, d.output_activation_min, d.output_activation_max)
    return v.astype(np.uint8).reshape(acc.shape)


def transpose_conv_hybrid(x, filt, bias, d) -> np.ndarray:
    """``HybridTransposeConv``: image b quantized as one asymmetric row (sf_b, zp_b); every tap adds
    float32(float32((q − zp_b)·w)·filter_scale[o])·sf_b to its output element, in input order (row,
    column, channel) — a float32 sum per tap, not one int32 sum scaled once; + bias; clamp."""
    n, ci = x.shape[0], x.shape[3]
    q, sf, zp = quant.asymmetric_quantize_rows(x.reshape(n, -1))
    qz = (q.reshape(x.shape).astype(np.int32) - zp.reshape(-1, 1, 1, 1)).astype(np.float32)
    s, fs = sf.astype(np.float32).reshape(-1, 1, 1, 1), np.asarray(d.filter_scale, np.float32)
    out = canvas(x.shape, filt.shape[0], d, np.float32)
    for ky, kx, win in taps_in_input_order(x.shape, d):
        for i in range(ci):
            out[win] += ((qz[..., i, None] * filt[:, ky, kx, i]) * fs) * s
    return float_clamp(crop(out, d) if bias is None else crop(out, d) + bias, d)


class TransposeConvBase(Kernel):
    """Shared by TRANSPOSE_CONV and MediaPipe's Convolution2DTransposeBias: only the slots differ."""

    slots = (2, 1, 3)   # (input, weights, bias)

    def make_data(self, context, node, padding, sh, sw, pt, pl, out_shape, act_code):
        co, kh, kw, _ = context.shape(node.input(self.slots[1]))
        return TransposeConvData(padding, sh, sw, kh, kw, pt, pl, tuple(out_shape), activation_name(act_code),
                                 *activation_range(act_code))

    def invoke(self, context, node, d):
        t, kind = context.tensors, type(d)
        x_t, f_t, b_t = (node.input(s) for s in self.slots)
        x, filt, bias = t[x_t], t[f_t], (t[b_t] if b_t >= 0 else None)
        if kind is TransposeConvQuantizedData:
            y = transpose_conv_quantized(x, filt, bias, d, t[node.outputs[0]].dtype)
        elif kind is TransposeConvUint8Data:
            y = transpose_conv_uint8(x, filt, bias, d)
        elif kind is TransposeConvHybridData:
            y = transpose_conv_hybrid(x, filt, bias, d)
        else:
            y = transpose_conv_float(x, filt, bias, d, context.variant.transpose_conv_kernel)
        t[node.outputs[0]][...] = y


@kernel(BuiltinOperator.TRANSPOSE_CONV, versions=(1, 2, 3, 4, 5))
class TransposeConv(TransposeConvBase):
    name = "transpose_conv"
    value_inputs = (0, 1, 2, 3)

    def prepare(self, context, node):
        x_dt, f_dt = context.dtype(node.input(2)), context.dtype(node.input(1))
        blocks = context.variant.transpose_conv_kernel == "gemm+col2im"
        if x_dt in (U8, I8, I16):
            return prepare_quantized(context, node, x_dt, blocks)
        if x_dt == F32 and f_dt == I8:
            return prepare_hybrid(context, node)
        check_shapes(node, context, node.input(2), node.input(1), node.input(3))
        geo, code, _, _ = output_geometry(context, node, F32)
        lo, hi = activation_range(code)
        return TransposeConvData(**geo.as_dict(), output_activation_min=lo, output_activation_max=hi)
