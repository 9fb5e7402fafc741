"""CONV_2D's uint8 and hybrid kernels (the conv itself: :mod:`.conv_2d`).

uint8 (version 1; grouped 6): acc = Σ (filter − filter_zero_point) · (input − input_zero_point) over
the taps inside the image (+ int32 bias), requantized with TFLite's legacy per-tensor multiplier
(:func:`workbench.interpreter.quant.legacy_conv_multiplier`), + output_zero_point, clamped to the
uint8 activation range.  Ties of the last rounding shift: ``rounding`` (see
:func:`._conv_geometry.final_shift_rounding`).  Per-channel uint8 filters are refused (TFLite's uint8
path would use only the first scale).

hybrid (float32 input and output, int8 filter; version 2, 5 with per-channel scales): every image of
the batch is quantized at run time (:mod:`workbench.interpreter.quant.hybrid`: litert's x86 order of
float operations, NEON-style rounding of the first 8·⌊K/8⌋ values), the int8 products are summed in
int32 and scaled back to float32.  TFLite picks the routine by the scales' *values*, not their count
(``recipe``):
  * "per-tensor" (the scales are all equal; ``optimized_ops::HybridConv``, in every build): symmetric
    images, a zero border, float32(acc) · float32(scaling_factor · filter_scale) + bias, then
    ``min(max(v, lo), hi)``;
  * "per-channel" (``optimized_ops::HybridConvPerChannel``, litert's builtin kernels; variant field
    ``hybrid_conv``): asymmetric images, the border holds each image's zero point, acc = Σ filter·q −
    zero_point · row_sums (int32; the row sums as litert's SSE routine adds them,
    :func:`workbench.interpreter.quant.sse_row_sums`), float32(acc) · float32(filter_scale[o] ·
    scaling_factor) + bias, then Eigen's ``max(min(v, hi), lo)``;
  * "reference" (``reference_ops::HybridConvPerChannel``: grouped convolutions in every build, all
    per-channel ones in the reference build): asymmetric images, int32 Σ filter · (q − zero_point)
    over the taps inside the image, (float32(acc) · filter_scale[o]) · scaling_factor + bias, then
    ``min(max(v, lo), hi)``.  With one filter scale for all channels a grouped hybrid convolution is
    refused: that kernel would read the per-channel scales past the end of the array.
The activation range is the float one (±FLT_MAX for NONE: an infinity becomes FLT_MAX).
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from .. import quant
from ..registry import opdata
from ._common import F32, U8, activation_range
from ._conv_geometry import ConvGeometry, conv_geometry, final_shift_rounding, integer_sums, padded


@opdata
class Conv2DUint8Data(ConvGeometry):
    input_scale: float
    input_zero_point: int
    filter_scale: float
    filter_zero_point: int
    output_scale: float
    output_zero_point: int
    effective_scale: float          # float32(input_scale · filter_scale) / output_scale (legacy recipe)
    output_multiplier: int
    output_shift: int
    output_activation_min: int
    output_activation_max: int
    rounding: str                   # ties of the last rounding shift: "up" (ruy) | "away" (reference kernel)


@opdata
class Conv2DHybridData(ConvGeometry):
    per_channel: bool               # TFLite's is_hybrid_per_channel: the filter scales are not all equal
    asymmetric_quantize_inputs: bool   # the per-channel routines quantize images asymmetrically
    filter_scale: object            # float32 [1] or [O]
    row_sums: object                # int64 [O]: Σ filter[o] as litert's SSE routine adds it ("per-channel")
    recipe: str                     # "per-tensor" | "per-channel" | "reference" (see the module docstring)
    output_activation_min: float
    output_activation_max: float


def conv_uint8(x, filt, bias, d) -> np.ndarray:
    """``reference_ops::Conv`` (uint8): Σ (filter − filter_zero_point) · (input − input_zero_point) over
    the taps inside the image, + bias, MultiplyByQuantizedMultiplier (ties of its last shift by
    ``d.rounding``), + output_zero_point, clamped."""
    acc = integer_sums(padded(x.astype(np.int64) - d.input_zero_point, d), filt.astype(np.int64) - d.filter_zero_point,
                       d)
    if bias is not None:
        acc += bias.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.rounding == "up")
    return np.clip(v + d.output_zero_point, d.output_activation_min, d.output_activation_max).astype(np.uint8)


def conv_hybrid(x, filt, bias, d) -> np.ndarray:
    """Hybrid CONV_2D by ``d.recipe`` (module docstring): ``optimized_ops::HybridConv`` ("per-tensor"),
    ``optimized_ops::HybridConvPerChannel`` ("per-channel") or ``reference_ops::HybridConvPerChannel``."""
    n = x.shape[0]
    rows = np.asarray(x, np.float32).reshape(n, -1)
    if d.recipe == "per-tensor":
        q, sf = quant.symmetric_quantize_rows(rows)
        zp = np.zeros(n, np.int64)
    else:
        q, sf, zp = quant.asymmetric_quantize_rows(rows)
    q = q.reshape(x.shape).astype(np.int64)
    zp = zp.astype(np.int64).reshape(-1, 1, 1, 1)
    sf = sf.reshape(-1, 1, 1, 1)
    fs = np.asarray(d.filter_scale, np.float32)
    bias = np.zeros(d.output_shape[3], np.float32) if bias is None else bias
    lo, hi = np.float32(d.output_activation_min), np.float32(d.output_activation_max)
    if d.recipe == "reference":
        acc = quant.wrap_int32(integer_sums(padded(q - zp, d), filt, d)).astype(np.float32)
        v = ((acc * fs).astype(np.float32) * sf).astype(np.float32) + bias
        return quant.std_min(quant.std_max(v.astype(np.float32), lo), hi)
    acc = integer_sums(padded(q, d, zp), filt, d)        # the border holds each image's zero point
    if d.recipe == "per-channel":
        acc = quant.wrap_int32(acc - zp * d.row_sums)
        scales = (fs * sf).astype(np.float32)
    else:
        scales = (sf * fs[0]).astype(np.float32)
    v = ((acc.astype(np.float32) * scales).astype(np.float32) + bias).astype(np.float32)
    if d.recipe == "per-channel":                         # Eigen: cwiseMin(max), then cwiseMax(min)
        return quant.std_max(quant.std_min(v, hi), lo)
    return quant.std_min(quant.std_max(v, lo), hi)


def prepare_uint8(context, node) -> Conv2DUint8Data:
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (U8,), "filter")
    context.expect_dtype(node, y_t, (U8,), "output")
    g = conv_geometry(context, node)
    in_s, in_zp, f_s, f_zp, out_s, out_zp, real, m, s = quant.uint8_matrix_scales(node, context, x_t, f_t, b_t, y_t)
    lo, hi = quant.activation_range_quantized(node.params["fused_activation_function"], out_s, out_zp, 0, 255)
    context.set_output(y_t, g.output_shape, U8)
    return Conv2DUint8Data(**g.as_dict(), input_scale=in_s, input_zero_point=in_zp, filter_scale=f_s,
                           filter_zero_point=f_zp, output_scale=out_s, output_zero_point=out_zp, effective_scale=real,
                           output_multiplier=m, output_shift=s, output_activation_min=lo, output_activation_max=hi,
                           rounding=final_shift_rounding(context, g.groups))


def prepare_hybrid(context, node) -> Conv2DHybridData:
    f_t, b_t, y_t = node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, y_t, (F32,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    g = conv_geometry(context, node)
    o = g.output_shape[3]
    filt = context.value(f_t)
    if filt is None or (b_t >= 0 and context.value(b_t) is None):
        raise UnsupportedOpError(f"CONV_2D (node {node.index}): hybrid filter and bias must be constant tensors")
    fs, _ = quant.hybrid_filter_scales(node, context, f_t, o, 0, "filter")
    per_channel = bool(len(fs) > 1 and np.any(fs != fs[0]))
    if g.groups > 1 and not per_channel:
        raise UnsupportedOpError(f"CONV_2D (node {node.index}): a grouped hybrid convolution ({g.groups} groups) "
                                 f"with one filter scale: TFLite's reference kernel then reads per-channel "
                                 f"scales past the end of the scale array (undefined output)")
    if context.packed_bits(f_t) == 2:       # int4 filters (AEQ's dynamic_wi4) are unpacked to int8, as litert does
        raise UnsupportedOpError(f"CONV_2D: int2 filter '{context.name(f_t)}' with a float input: litert's "
                                 f"results differ from the unpacked-int8 hybrid path, not implemented")
    if not per_channel:
        recipe = "per-tensor"
    elif g.groups == 1 and context.variant.hybrid_conv == "optimized":
        recipe = "per-channel"
    else:
        recipe = "reference"
    lo, hi = activation_range(node.params["fused_activation_function"])
    context.set_output(y_t, g.output_shape, F32)
    return Conv2DHybridData(**g.as_dict(), per_channel=per_channel, asymmetric_quantize_inputs=per_channel,
                            filter_scale=fs, row_sums=quant.sse_row_sums(filt.reshape(o, -1)), recipe=recipe,
                            output_activation_min=lo, output_activation_max=hi)
