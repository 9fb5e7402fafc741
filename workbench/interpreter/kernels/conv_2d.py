"""CONV_2D: input [N, H, W, C], filter [O, KH, KW, C / groups], optional bias [O] → output [N, OH, OW, O].

Each output value is the sum, over the filter taps (row, column, input channel) that fall inside the
image, of input · filter, plus the bias of its output channel, then clamped by the fused activation.
The window, padding and groups are in :mod:`._conv_geometry` (one code path for every type).

The types TFLite distinguishes, each with its reference routine below:
  * float32 (version 1; grouped 6) — :func:`conv_float`, adding in ``reference_ops::Conv``'s order
    (litert's builtin kernel sums ungrouped convolutions in its GEMM's order: equal to float32
    rounding, not bit for bit);
  * int8 (version 3, per-tensor or per-channel filter scales; ConvPerChannel) — :func:`conv_int8`:
    int32 sums of filter·(input − input_zero_point), requantized per output channel;
  * 16x8 (int16 input/output, int8 filter, int64 or int32 bias; version 8 — or the int8 version 3
    the converter leaves in some files: TFLite picks the arithmetic from the tensor types) —
    :func:`conv_int16`;
  * uint8 (version 1) and hybrid (float input/output, int8 filter; version 2, 5 with per-channel
    scales) — :mod:`._conv_uint8_hybrid`.

Where TFLite's two builds round differently (:mod:`workbench.interpreter.variants`), ``prepare`` reads
``context.variant`` and stores the rule in the OpData (``rounding``, ``recipe``): the routines follow
it, whichever build they stand for.  The speed layer: :mod:`workbench.interpreter.fast.conv_2d`.
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, kernel, opdata
from ._common import F32, I8, I16, activation_range
from ._conv_geometry import (
    ConvGeometry,
    conv_geometry,
    final_shift_rounding,
    float_sums,
    integer_sums,
    padded,
    padded_shape,
)
from ._conv_uint8_hybrid import (
    U8,
    Conv2DHybridData,
    Conv2DUint8Data,
    conv_hybrid,
    conv_uint8,
    prepare_hybrid,
    prepare_uint8,
)

__all__ = ["ConvGeometry", "Conv2DData", "Conv2DInt8Data", "Conv2DInt16Data", "Conv2DUint8Data", "Conv2DHybridData",
           "conv_float", "conv_int8", "conv_int16", "conv_uint8", "conv_hybrid", "padded_shape", "Conv2D"]



@opdata
class Conv2DData(ConvGeometry):
    """float32: the window and the float clamp of the fused activation."""

    output_activation_min: float
    output_activation_max: float


@opdata
class Conv2DInt8Data(ConvGeometry):
    input_scale: float
    input_zero_point: int
    filter_scale: object            # float32 [1] (per tensor) or [O] (per channel)
    output_scale: float
    output_zero_point: int
    effective_scale: object         # float64 [O]: input_scale · filter_scale[c] / output_scale
    output_multiplier: object       # int64 [O]: quantize_multiplier(effective_scale[c])[0]
    output_shift: object            # int64 [O]: ... [1] (positive = left shift)
    output_activation_min: int
    output_activation_max: int
    per_channel: bool
    rounding: str                   # ties of the last rounding shift: "up" (ruy) | "away" (reference kernel)


@opdata
class Conv2DInt16Data(ConvGeometry):
    input_scale: float
    input_zero_point: int           # 0: int16 activations are symmetric (TFLite refuses others)
    filter_scale: object            # float32 [1] or [O]
    output_scale: float
    output_zero_point: int          # 0
    effective_scale: object         # float64 [O]: input_scale · filter_scale[c] / output_scale
    output_multiplier: object       # int64 [O]
    output_shift: object            # int64 [O]
    output_activation_min: int
    output_activation_max: int
    bias_type: str                  # "int64" | "int32"
    quantized_bias_type: str        # the option: "unset" | "int32" | "int64"
    recipe: str                     # "int64": int64 sums, MultiplyByQuantizedMultiplier(int64), one rounding,
                                    # ties up (every build: only the reference kernel takes an int64 bias);
                                    # "int32": int32 sums that wrap, the double rounding of int8
    rounding: str                   # ties of the last rounding: "up" | "away" (see final_shift_rounding)
    per_channel: bool

    @property
    def up_channels(self) -> int:
        """Channels whose final rounding sends ties up ("int32" recipe): all (ruy) or none."""
        return len(self.output_multiplier) if self.rounding == "up" else 0


@np.errstate(over="ignore", invalid="ignore")           # float inf / nan silently, as TFLite
def conv_float(x, filt, bias, d) -> np.ndarray:
    """``reference_ops::Conv`` (float32): per output one float32 sum of input · filter over the taps
    inside the image (filter row, column, input channel), + bias, then ``min(max(v, lo), hi)``."""
    out = float_sums(padded(np.asarray(x, np.float32), d, np.float32(0)), np.asarray(filt, np.float32), d)
    if bias is not None:
        out += bias
    return quant.std_min(quant.std_max(out, np.float32(d.output_activation_min)), np.float32(d.output_activation_max))


def conv_int8(x, filt, bias, d) -> np.ndarray:
    """``reference_integer_ops::ConvPerChannel`` (int8): Σ filter · (input − input_zero_point) over the
    taps inside the image (the border holds input_zero_point: it adds nothing), + bias; then per output
    channel c MultiplyByQuantizedMultiplier(acc, output_multiplier[c], output_shift[c]) — its last
    shift's ties by ``d.rounding`` — + output_zero_point, clamped to the activation range."""
    acc = integer_sums(padded(x.astype(np.int64) - d.input_zero_point, d), filt, d)
    if bias is not None:
        acc += bias.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.rounding == "up")
    return np.clip(v + d.output_zero_point, d.output_activation_min, d.output_activation_max).astype(np.int8)


def conv_int16(x, filt, bias, d) -> np.ndarray:
    """``reference_integer_ops::ConvPerChannel`` (16x8; zero points 0): Σ filter · input over the taps
    inside the image, + bias, then ``d.recipe``: "int64" (the int64 MultiplyByQuantizedMultiplier) or
    "int32" (the sum wraps in int32; the int8 double rounding, ties of its last shift by ``d.rounding``)."""
    acc = integer_sums(padded(x.astype(np.int64), d), filt, d)
    o = acc.shape[3]
    out = np.empty(acc.shape, np.int16)
    args = (acc.reshape(-1, o), bias.astype(np.int64), d.output_multiplier, d.output_shift, 0,
            d.output_activation_min, d.output_activation_max, out.reshape(-1, o))
    if d.recipe == "int64":
        quant.requantize_int64_rows(*args)
    else:
        quant.requantize_int32_rows(*args, d.up_channels)
    return out


def prepare_float(context, node) -> Conv2DData:
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    for t, what in ((x_t, "input"), (f_t, "filter")):
        context.expect_dtype(node, t, (F32,), what)
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    g = conv_geometry(context, node)
    context.set_output(y_t, g.output_shape, F32)
    lo, hi = activation_range(node.params["fused_activation_function"])
    return Conv2DData(**g.as_dict(), output_activation_min=lo, output_activation_max=hi)


def _quantized_output(context, node, g, y_t, dtype, qmin, qmax):
    """(filter scales, effective scales, multipliers, shifts, activation range) — TFLite's
    ``PopulateConvolutionQuantizationParams`` and ``CalculateActivationRangeQuantized``."""
    in_s, _ = quant.tensor_scale_zp(context, node.input(0))
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    f_scales, _, _ = quant.quant_params(context, node.input(1))
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, g.output_shape[3])
    lo, hi = quant.activation_range_quantized(node.params["fused_activation_function"], out_s, out_zp, qmin, qmax)
    context.set_output(y_t, g.output_shape, dtype)
    return f_scales, eff, mult, shift, lo, hi


def prepare_int8(context, node) -> Conv2DInt8Data:
    g = conv_geometry(context, node)
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (I8,), "filter")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.int32,), "bias")
    in_s, in_zp = quant.tensor_scale_zp(context, x_t)
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    f_scales, eff, mult, shift, lo, hi = _quantized_output(context, node, g, y_t, I8, -128, 127)
    return Conv2DInt8Data(**g.as_dict(), input_scale=in_s, input_zero_point=in_zp, filter_scale=f_scales,
                          output_scale=out_s, output_zero_point=out_zp, effective_scale=eff, output_multiplier=mult,
                          output_shift=shift, output_activation_min=lo, output_activation_max=hi,
                          per_channel=len(f_scales) > 1, rounding=final_shift_rounding(context, g.groups))


def prepare_int16(context, node) -> Conv2DInt16Data:
    """TFLite's rules (conv.cc Prepare): input and output zero points 0, filter zero points 0, a bias
    is required, int64 or int32; the option ``quantized_bias_type`` (INT32 / INT64) must match it.  An
    int32 bias with the option unset is refused: TFLite would read it as int64 (past its end)."""
    x_t, f_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, f_t, (I8,), "filter")
    context.expect_dtype(node, y_t, (I16,), "output")
    if b_t < 0:
        raise KernelError(f"CONV_2D (node {node.index}): no bias; TFLite's CONV_2D requires one (conv.cc: "
                          f"'has_bias was not true' / 'Tensor at index 2 was optional but was expected')")
    g = conv_geometry(context, node)
    quant.check_symmetric_filter(node, context, f_t)
    bias_type, option = quant.bias_type_16x8(node, context, b_t, node.params)
    if bias_type == "int32" and option != "int32":
        raise KernelError(f"CONV_2D (node {node.index}): int32 bias with quantized_bias_type unset; TFLite then "
                          f"reads the bias as int64 (past its end), so its output is undefined. Set "
                          f"quantized_bias_type=INT32 or store the bias as int64")
    in_s, out_s = quant.symmetric_int16_scales(node, context, x_t, y_t)
    f_scales, eff, mult, shift, lo, hi = _quantized_output(context, node, g, y_t, I16, quant.INT16_MIN,
                                                           quant.INT16_MAX)
    recipe = "int64" if bias_type == "int64" else "int32"
    return Conv2DInt16Data(**g.as_dict(), input_scale=in_s, input_zero_point=0, filter_scale=f_scales,
                           output_scale=out_s, output_zero_point=0, effective_scale=eff, output_multiplier=mult,
                           output_shift=shift, output_activation_min=lo, output_activation_max=hi,
                           bias_type=bias_type, quantized_bias_type=option, recipe=recipe,
                           rounding="up" if recipe == "int64" else final_shift_rounding(context, g.groups),
                           per_channel=len(f_scales) > 1)


REFERENCE = {Conv2DData: conv_float, Conv2DInt8Data: conv_int8, Conv2DInt16Data: conv_int16,
             Conv2DUint8Data: conv_uint8, Conv2DHybridData: conv_hybrid}


@kernel(BuiltinOperator.CONV_2D, versions=(1, 2, 3, 5, 6, 8))
class Conv2D(Kernel):
    name = "conv_2d"

    def prepare(self, context, node):
        x_dt, f_dt = context.dtype(node.input(0)), context.dtype(node.input(1))
        if x_dt == U8:
            return prepare_uint8(context, node)
        if x_dt == F32 and f_dt == I8:
            return prepare_hybrid(context, node)
        if x_dt == I16:
            return prepare_int16(context, node)
        if x_dt == I8:
            return prepare_int8(context, node)
        return prepare_float(context, node)

    @np.errstate(over="ignore", invalid="ignore")       # float inf / nan silently, as TFLite
    def invoke(self, context, node, d):
        t = context.tensors
        b_t = node.input(2)
        t[node.outputs[0]][...] = REFERENCE[type(d)](t[node.inputs[0]], t[node.inputs[1]],
                                                     t[b_t] if b_t >= 0 else None, d)
