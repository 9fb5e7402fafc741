"""DEPTHWISE_CONV_2D: every input channel filtered on its own.

Input NHWC [N, H, W, C], filter [1, KH, KW, C·M], optional bias [C·M] → output [N, OH, OW, C·M]:
output channel ``c·M + m`` is input channel ``c`` times filter channel ``c·M + m``, summed over the
taps inside the image (padding never contributes).  The depth multiplier M comes from the shapes
(TFLite ignores the option since TF 2.0; only the hybrid kernel reads it, so there it must match).
Padding and output size as CONV_2D (``kernels/padding.h``); dilation needs version 2.

depthwise_conv.cc picks the kernel from the types — float32, int8 (version 3, ``integer_ops/depthwise_conv.h``),
uint8 (versions 1-2), 16x8 and hybrid (version 6) — one function below each, named after the
reference kernel it follows.  LiteRT's optimized x86 kernels differ in the last bit
(``context.variant``): the float kernel starts its sums at the bias (``depthwise_bias_first``); int8
and hybrid split the channels into a vector loop and a scalar tail that round or scale differently
(``depthwise_chunks``, :func:`vector_channels`).  Speed layer: ``interpreter/fast/depthwise_conv_2d.py``.
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, PADDING_NAMES, U8, activation_name, activation_range, check_bias, check_rank, window


@opdata
class DepthwiseGeometry(OpData):        # what every DEPTHWISE_CONV_2D prepares, whatever the types
    padding: str
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_top: int
    pad_left: int
    depth_multiplier: int          # M = output channels / input channels
    output_shape: tuple
    activation: str


@opdata
class DepthwiseConv2DData(DepthwiseGeometry):
    output_activation_min: float
    output_activation_max: float


@opdata
class DepthwiseQuantized(DepthwiseGeometry):
    """int8 and 16x8 (one multiplier per output channel), uint8 (one for all)."""

    input_scale: float
    input_zero_point: int          # 0 for 16x8 (TFLite refuses others), as output_zero_point
    filter_scale: object           # float32 [1] or [C·M] (uint8: one float)
    output_scale: float
    output_zero_point: int
    effective_scale: object        # float64 [C·M]: input_scale·filter_scale / output_scale (uint8: one float)
    output_multiplier: object      # int64 [C·M] (uint8: one int)
    output_shift: object           # int64 [C·M] (uint8: one int)
    output_activation_min: int
    output_activation_max: int
    per_channel: bool


@opdata
class DepthwiseConv2DInt8Data(DepthwiseQuantized):
    vector_channels: int           # channels below it round ties up (litert-x86's vector loop); 0: none


@opdata
class DepthwiseConv2DInt16Data(DepthwiseQuantized):
    accumulator: str = "int64"     # int64 sums; MultiplyByQuantizedMultiplier's int64 overload (ties up)


@opdata
class DepthwiseConv2DUint8Data(DepthwiseQuantized):     # one multiplier: the legacy recipe
    filter_zero_point: int
    rounding: str = "away"         # both builds round every tie away from zero (measured)


@opdata
class DepthwiseConv2DHybridData(DepthwiseGeometry):
    filter_scale: object           # float32 [C·M]
    output_activation_min: float
    output_activation_max: float
    vector_channels: int           # channels below it scaled (acc·filter_scale)·scaling_factor (litert-x86)


def vector_channels(channels: int, lanes: int, variant) -> int:
    """How many output channels LiteRT's optimized x86 kernel handles in its vector loop (lanes 8 for
    int8, 4 for hybrid): lanes·⌊C·M/lanes⌋ under ``depthwise_chunks``; 0 under the reference kernel."""
    return lanes * (channels // lanes) if variant.depthwise_chunks else 0


# -- the computation: one numpy step per filter tap, over every image, pixel and channel at once --


def _reach(out_size: int, stride: int, pad: int, offset: int, size: int):
    """The outputs o with 0 ≤ o·stride − pad + offset < size, and the inputs they read: two slices."""
    first, stop = max(0, -(-(pad - offset) // stride)), min(out_size, (size - 1 + pad - offset) // stride + 1)
    i0 = first * stride - pad + offset
    return (slice(first, stop), slice(i0, i0 + (stop - first - 1) * stride + 1, stride)) if stop > first else None


def taps(d, x_shape, kh: int, kw: int):
    """Every filter tap inside the image, in TFLite's order (row, then column): (ky, kx, output
    window, input window), the windows as index tuples over [N, rows, columns]."""
    (_, h, w, _), (_, oh, ow, _) = x_shape, d.output_shape
    for ky in range(kh):
        rows = _reach(oh, d.stride_h, d.pad_top, ky * d.dilation_h, h)
        for kx in range(kw):
            cols = _reach(ow, d.stride_w, d.pad_left, kx * d.dilation_w, w)
            if rows and cols:
                yield ky, kx, (slice(None), rows[0], cols[0]), (slice(None), rows[1], cols[1])


def per_output_channel(x, d):
    """[N, H, W, C] → [N, H, W, C·M]: output channel c·M + m reads input channel c."""
    return x if d.depth_multiplier == 1 else np.repeat(x, d.depth_multiplier, axis=3)


def depthwise_sums(x, filt, d, x_offset=0, f_offset=0) -> np.ndarray:
    """int64 Σ (filter − f_offset)·(input − x_offset) over the in-image taps of every output
    (``x_offset``: one number, or one per image)."""
    xs = per_output_channel(x.astype(np.int64) - np.reshape(x_offset, (-1, 1, 1, 1)), d)
    f = filt.astype(np.int64) - f_offset
    acc = np.zeros(d.output_shape, np.int64)
    for ky, kx, out, inp in taps(d, x.shape, f.shape[1], f.shape[2]):
        acc[out] += xs[inp] * f[0, ky, kx]
    return acc


@np.errstate(over="ignore", invalid="ignore")           # float inf / nan silently, as TFLite
def depthwise_float(x, filt, bias, d, bias_first: bool = False) -> np.ndarray:
    """``reference_ops::DepthwiseConv``: per output, 0 + the in-image taps' input·filter one by one
    (row, then column), + bias, then min(max(v, lo), hi).  ``bias_first`` (litert-x86's optimized
    kernel): the sum starts at the bias instead."""
    xs, b = per_output_channel(x, d), (np.zeros(filt.shape[3], np.float32) if bias is None else bias)
    out = np.zeros(d.output_shape, np.float32) + (b if bias_first else np.float32(0))
    for ky, kx, o, inp in taps(d, x.shape, filt.shape[1], filt.shape[2]):
        out[o] += xs[inp] * filt[0, ky, kx]
    out += np.float32(0) if bias_first else b
    return np.clip(out, d.output_activation_min, d.output_activation_max, out=out)   # = min(max(v, lo), hi)


def depthwise_int8(x, filt, bias, d) -> np.ndarray:
    """``reference_integer_ops::DepthwiseConvPerChannel`` (int8): sums + bias, requantized per channel,
    ties away from zero — except the first ``vector_channels`` channels, which litert-x86 rounds up."""
    acc = depthwise_sums(x, filt, d, d.input_zero_point) + (0 if bias is None else bias.astype(np.int64))
    nv, m, s = d.vector_channels, d.output_multiplier, d.output_shift
    v = np.concatenate([quant.multiply_by_quantized_multiplier_array(acc[..., :nv], m[:nv], s[:nv], True),
                        quant.multiply_by_quantized_multiplier_array(acc[..., nv:], m[nv:], s[nv:])], axis=3)
    return np.clip(v + d.output_zero_point, d.output_activation_min, d.output_activation_max).astype(np.int8)


def depthwise_uint8(x, filt, bias, d) -> np.ndarray:
    """``reference_ops::DepthwiseConv`` (uint8): Σ (w − w_zp)·(x − x_zp) + bias, one multiplier, ties away."""
    acc = depthwise_sums(x, filt, d, d.input_zero_point, d.filter_zero_point)
    acc += 0 if bias is None else bias.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.rounding == "up")
    return np.clip(v + d.output_zero_point, d.output_activation_min, d.output_activation_max).astype(np.uint8)


def depthwise_int16(x, filt, bias, d) -> np.ndarray:
    """``reference_integer_ops::DepthwiseConvPerChannel`` (int16): int64 sums + int64 bias, the int64
    MultiplyByQuantizedMultiplier (one rounding, ties up), clamp."""
    acc = depthwise_sums(x, filt, d) + (0 if bias is None else bias.astype(np.int64))
    v = quant.multiply_by_quantized_multiplier_int64_array(acc, d.output_multiplier, d.output_shift)
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(np.int16)


def depthwise_hybrid(x, filt, bias, d, chunks: bool = False) -> np.ndarray:
    """``reference_integer_ops::DepthwiseConvHybridPerChannel``: image b quantized as one asymmetric row
    (scaling factor sf_b, zero point zp_b), acc = Σ w·(q − zp_b), float32(acc)·(filter_scale·sf_b),
    + bias, clamp.  ``chunks`` (litert-x86's optimized kernel): (acc·filter_scale)·sf_b in the first
    ``vector_channels`` channels (its 4-wide loop), (acc·sf_b)·filter_scale in the rest."""
    n = x.shape[0]
    q, sf, zp = quant.asymmetric_quantize_rows(np.asarray(x, np.float32).reshape(n, -1))
    acc = depthwise_sums(q.reshape(x.shape), filt, d, zp).astype(np.float32)
    fs, s = np.asarray(d.filter_scale, np.float32), sf.astype(np.float32).reshape(-1, 1, 1, 1)
    if chunks:
        nv = d.vector_channels
        out = np.concatenate([(acc[..., :nv] * fs[:nv]) * s, (acc[..., nv:] * s) * fs[nv:]], axis=3)
    else:
        out = acc * (fs * s)
    out = out if bias is None else out + bias          # then std::min(std::max(v, lo), hi), as TFLite's C++
    return quant.std_min(quant.std_max(out, np.float32(d.output_activation_min)), np.float32(d.output_activation_max))


# -- prepare: the facts TFLite's Prepare computes ---------------------------------------------------


def _geometry(context, node, out_dtype) -> tuple[DepthwiseGeometry, int]:
    """Shapes and window → the DepthwiseGeometry, and the fused activation code."""
    p = node.params
    n, h, w, c = check_rank(node, context, node.input(0), 4)
    one, kh, kw, co = check_rank(node, context, node.input(1), 4, "filter")
    check_bias(node, context, node.input(2), co)
    if one != 1 or c == 0 or co % c:
        raise KernelError(f"DEPTHWISE_CONV_2D node {node.index}: filter {[one, kh, kw, co]} does not fit "
                          f"{c} input channels")
    sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
    oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
    context.set_output(node.outputs[0], (n, oh, ow, co), out_dtype)
    code = p["fused_activation_function"]
    geo = DepthwiseGeometry(padding=PADDING_NAMES[p["padding"]], stride_h=sh, stride_w=sw, dilation_h=dh, dilation_w=dw,
                            pad_top=pt, pad_left=pl, depth_multiplier=co // c, output_shape=(n, oh, ow, co),
                            activation=activation_name(code))
    return geo, code


def _prepare_quantized(context, node, dt):
    """int8, 16x8 (per-channel multipliers, ``kernel_util.cc``) and uint8 (the legacy one), with their bias rules."""
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (U8 if dt == U8 else I8,), "filter")
    if dt != I8:
        context.expect_dtype(node, y_t, (dt,), "output")
    where = f"DEPTHWISE_CONV_2D (node {node.index})"
    if dt == I16:
        if len(node.inputs) > 2 and b_t < 0:
            raise KernelError(f"{where}: the bias slot is marked optional (-1); TFLite refuses that ('Tensor at "
                              f"index 2 was optional but was expected') — leave the slot out")
        if b_t >= 0:
            context.expect_dtype(node, b_t, (np.int64,), "bias (TFLite's 16x8 depthwise takes int64 only)")
            bzp = quant.quant_params(context, b_t)[1]
            if np.any(bzp != 0):
                raise KernelError(f"{where}: bias zero point {bzp.tolist()[:4]} is not 0")
        (in_s, out_s), in_zp, out_zp = quant.symmetric_int16_scales(node, context, x_t, y_t), 0, 0
    elif dt == I8:
        if b_t >= 0:
            context.expect_dtype(node, b_t, (np.int32,), "bias")
        (in_s, in_zp), (out_s, out_zp) = quant.tensor_scale_zp(context, x_t), quant.tensor_scale_zp(context, y_t)
    geo, code = _geometry(context, node, dt)
    if dt == U8:
        in_s, in_zp, f_s, f_zp, out_s, out_zp, real, m, s = quant.uint8_matrix_scales(node, context, x_t, f_t, b_t, y_t)
        lo, hi = quant.activation_range_quantized(code, out_s, out_zp, 0, 255)
        return DepthwiseConv2DUint8Data(**geo.as_dict(), input_scale=in_s, input_zero_point=in_zp, filter_scale=f_s,
                                        output_scale=out_s, output_zero_point=out_zp, effective_scale=real,
                                        output_multiplier=m, output_shift=s, output_activation_min=lo,
                                        output_activation_max=hi, per_channel=False, filter_zero_point=f_zp)
    co = geo.output_shape[3]
    f_scales, _, _ = quant.quant_params(context, f_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, co)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp, *quant.quantized_range(dt))
    fields = dict(geo.as_dict(), input_scale=in_s, input_zero_point=in_zp, filter_scale=f_scales, output_scale=out_s,
                  output_zero_point=out_zp, effective_scale=eff, output_multiplier=mult, output_shift=shift,
                  output_activation_min=lo, output_activation_max=hi, per_channel=len(f_scales) > 1)
    if dt == I16:
        return DepthwiseConv2DInt16Data(**fields)
    return DepthwiseConv2DInt8Data(**fields, vector_channels=vector_channels(co, 8, context.variant))


def _prepare_hybrid(context, node):
    f_t, b_t, y_t = node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, y_t, (F32,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    geo, code = _geometry(context, node, F32)
    co, mult = geo.output_shape[3], geo.depth_multiplier
    where, bits = f"DEPTHWISE_CONV_2D (node {node.index})", context.packed_bits(f_t)
    if context.value(f_t) is None or (b_t >= 0 and context.value(b_t) is None):
        raise UnsupportedOpError(f"{where}: hybrid filter and bias must be constant tensors")
    if bits:
        raise UnsupportedOpError(f"{where}: a float input with an int{bits} filter '{context.name(f_t)}' (hybrid); "
                                 f"litert 2.3 refuses it too ('Type FLOAT32 with filter type INT4 not currently "
                                 f"supported')")
    fs, _ = quant.hybrid_filter_scales(node, context, f_t, co, 3, "filter")
    if len(fs) != co:
        raise UnsupportedOpError(f"{where}: a hybrid filter needs one scale per output channel ({co}); TFLite's "
                                 f"prepare refuses a per-tensor scale")
    if node.params.get("depth_multiplier", 0) != mult:
        raise UnsupportedOpError(f"{where}: depth_multiplier option is {node.params.get('depth_multiplier', 0)} but "
                                 f"the shapes say {mult}; TFLite's hybrid kernel reads the option, so it must match")
    lo, hi = activation_range(code)
    return DepthwiseConv2DHybridData(**geo.as_dict(), filter_scale=fs, output_activation_min=lo,
                                     output_activation_max=hi, vector_channels=vector_channels(co, 4, context.variant))


@kernel(BuiltinOperator.DEPTHWISE_CONV_2D, versions=(1, 2, 3, 6))
class DepthwiseConv2D(Kernel):
    name = "depthwise_conv_2d"

    def prepare(self, context, node):
        x_dt, f_dt = context.dtype(node.input(0)), context.dtype(node.input(1))
        if x_dt == F32 and f_dt == I8:
            return _prepare_hybrid(context, node)
        if x_dt in (U8, I8, I16):
            return _prepare_quantized(context, node, x_dt)
        for t, what in ((node.input(0), "input"), (node.input(1), "filter"), (node.input(2), "bias")):
            if t >= 0:
                context.expect_dtype(node, t, (F32,), what)
        geo, code = _geometry(context, node, F32)
        lo, hi = activation_range(code)
        return DepthwiseConv2DData(**geo.as_dict(), output_activation_min=lo, output_activation_max=hi)

    def invoke(self, context, node, d):
        t = context.tensors
        x, filt, bias = t[node.inputs[0]], t[node.inputs[1]], (t[node.input(2)] if node.input(2) >= 0 else None)
        t[node.outputs[0]][...] = REFERENCE[type(d)](x, filt, bias, d, context.variant)


# OpData class → its teaching routine, run as (x, filter, bias, d, variant) → y: the float and hybrid
# routines are given the variant's rule (``depthwise_bias_first``, ``depthwise_chunks``) here.
REFERENCE = {
    DepthwiseConv2DData: lambda x, f, b, d, variant: depthwise_float(x, f, b, d, variant.depthwise_bias_first),
    DepthwiseConv2DInt8Data: lambda x, f, b, d, variant: depthwise_int8(x, f, b, d),
    DepthwiseConv2DUint8Data: lambda x, f, b, d, variant: depthwise_uint8(x, f, b, d),
    DepthwiseConv2DInt16Data: lambda x, f, b, d, variant: depthwise_int16(x, f, b, d),
    DepthwiseConv2DHybridData: lambda x, f, b, d, variant: depthwise_hybrid(x, f, b, d, variant.depthwise_chunks),
}
