"""What TRANSPOSE_CONV and MediaPipe's Convolution2DTransposeBias share: the prepared facts (OpData) and
the operand checks; and TRANSPOSE_CONV's prepare for each type (transpose_conv.cc's rules).

The output size is input 0 (a constant); the padding is the forward-conv padding of that size
(``kernels/padding.h``, dilation 1), after litert's checks (``_common.transpose_window``).  Quantized
nodes: int8 (per-tensor or per-channel int8 weights, int32 bias with zero point 0), 16x8 (int16
input/output, zero points 0: ``quantized_bias_type=INT32`` with an int32 bias or none takes int8's
recipe — int32 sums that wrap, double rounding — otherwise int64 sums, an int64 bias and the int64
MultiplyByQuantizedMultiplier; an int32 bias with the option unset would be read as int64 and is
refused), uint8 (the legacy per-tensor multiplier, ``quant.legacy_conv_multiplier``); hybrid: float
input and output, int8 weights with zero point 0 (per-tensor or per-channel), float32 bias.
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from .. import quant
from ..registry import OpData, opdata
from ._common import F32, I8, I16, PADDING_NAMES, U8, activation_name, activation_range, transpose_window


@opdata
class TransposeConvGeometry(OpData):
    padding: str
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    output_shape: tuple
    activation: str


@opdata
class TransposeConvData(TransposeConvGeometry):
    output_activation_min: float
    output_activation_max: float


@opdata
class TransposeConvQuantized(TransposeConvGeometry):    # int8 / 16x8: one multiplier per channel; uint8: one
    input_scale: float
    input_zero_point: int
    filter_scale: object          # float32 [1] or [O] (uint8: one float)
    output_scale: float
    output_zero_point: int
    effective_scale: object       # float64 [O] (uint8: float32(input_scale·filter_scale) / output_scale)
    output_multiplier: object     # int64 [O] (uint8: one int)
    output_shift: object          # int64 [O] (uint8: one int)
    output_activation_min: int
    output_activation_max: int


@opdata
class TransposeConvQuantizedData(TransposeConvQuantized):
    bias_type: str                # "int32" | "int64" | "none"
    quantized_bias_type: str      # 16x8 option: "unset" | "int32" | "int64" ("-" for int8)
    recipe: str                   # "int32": int32 sums that wrap, double rounding; "int64": int64 everything
    up_channels: int              # channels below it round ties up (litert-x86's blocks of 8); the rest away
    per_channel: bool


@opdata
class TransposeConvUint8Data(TransposeConvQuantized):
    filter_zero_point: int
    up_values: int                # flat outputs below it round ties up (litert-x86's blocks of 16); the rest away


@opdata
class TransposeConvHybridData(TransposeConvGeometry):
    filter_scale: object            # float32 [O] (a per-tensor scale repeated)
    per_channel: bool
    output_activation_min: float
    output_activation_max: float
    asymmetric_quantize_inputs: bool = True   # TRANSPOSE_CONV always quantizes its input asymmetrically


# -- prepare ------------------------------------------------------------------------------------------


def check_operands(node, context, x_t, f_t, b_t):
    """Input NHWC and weights OHWI of the same depth, a bias (if any) of O values: (input, weights) shapes."""
    xs, fs = context.shape(x_t), context.shape(f_t)
    if len(xs) != 4 or len(fs) != 4 or xs[3] != fs[3]:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): input {list(xs)} and weights {list(fs)} "
                                 f"(OHWI) do not match")
    if b_t >= 0 and context.shape(b_t) != (fs[0],):
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): bias {list(context.shape(b_t))} for "
                                 f"{fs[0]} output channels")
    return xs, fs


def check_shapes(node, context, x_t, f_t, b_t):
    """float32 operands (also MediaPipe's Convolution2DTransposeBias): their shapes."""
    for t, what in ((x_t, "input"), (f_t, "weights"), (b_t, "bias")):
        if t >= 0:
            context.expect_dtype(node, t, (F32,), what)
    return check_operands(node, context, x_t, f_t, b_t)


def output_geometry(context, node, out_dtype) -> tuple[TransposeConvGeometry, int, tuple, tuple]:
    """The constant output shape (input 0) checked against input and weights, the strides and padding of the
    options and the forward-conv padding: (the TransposeConvGeometry, activation code, input shape, weights
    shape)."""
    p = node.params
    xs, fs = check_operands(node, context, node.input(2), node.input(1), node.input(3))
    shape = np.asarray(context.require_value(node, 0, "the output shape")).reshape(-1)
    where = f"TRANSPOSE_CONV (node {node.index})"
    if shape.shape != (4,):
        raise UnsupportedOpError(f"{where}: output shape {shape.tolist()} must have 4 values")
    out = tuple(int(v) for v in shape)
    if any(v < 0 for v in out):
        raise UnsupportedOpError(f"{where}: output shape {list(out)} has a negative dimension")
    if out[0] != xs[0] or out[3] != fs[0]:
        raise UnsupportedOpError(f"{where}: output shape {list(out)} does not fit batch {xs[0]} / {fs[0]} output "
                                 f"channels")
    sh, sw, padding = p["stride_h"], p["stride_w"], p["padding"]
    if sh <= 0 or sw <= 0 or padding not in (1, 2):
        raise UnsupportedOpError(f"{where}: strides ({sh}, {sw}) / padding {PADDING_NAMES.get(padding, padding)} "
                                 f"unusable (absent options table?)")
    pt, pl = transpose_window(node, padding, out[1], out[2], fs[1], fs[2], sh, sw, xs[1], xs[2])
    code = p.get("fused_activation_function", 0)
    context.set_output(node.outputs[0], out, out_dtype)
    geo = TransposeConvGeometry(padding=PADDING_NAMES[padding], stride_h=sh, stride_w=sw, filter_h=fs[1],
                                filter_w=fs[2], pad_top=pt, pad_left=pl, output_shape=out,
                                activation=activation_name(code))
    return geo, code, xs, fs


def prepare_quantized(context, node, dt, blocks: bool):
    """int8, 16x8 and uint8 (transpose_conv.cc's rules).  ``blocks`` (``Variant.transpose_conv_kernel``
    "gemm+col2im"): litert-x86's requantization in NEON blocks, ties up — 8 channels at a time for the
    "int32" recipe (the last O % 8 away from zero), 16 flat values at a time for uint8 (the last
    size % 16 away)."""
    x_t, f_t, b_t, y_t = node.input(2), node.input(1), node.input(3), node.outputs[0]
    context.expect_dtype(node, f_t, (U8 if dt == U8 else I8,), "weights")
    context.expect_dtype(node, y_t, (dt,), "output")
    check_operands(node, context, x_t, f_t, b_t)
    if dt == U8:
        in_s, in_zp, f_s, f_zp, out_s, out_zp, real, m, s = quant.uint8_matrix_scales(node, context, x_t, f_t, b_t, y_t)
        geo, code, _, _ = output_geometry(context, node, U8)
        lo, hi = quant.activation_range_quantized(code, out_s, out_zp, 0, 255)
        total = int(np.prod(geo.output_shape))
        return TransposeConvUint8Data(**geo.as_dict(), input_scale=in_s, input_zero_point=in_zp, filter_scale=f_s,
                                      output_scale=out_s, output_zero_point=out_zp, effective_scale=real,
                                      output_multiplier=m, output_shift=s, output_activation_min=lo,
                                      output_activation_max=hi, filter_zero_point=f_zp,
                                      up_values=total - total % 16 if blocks else 0)
    if dt == I16:
        bias_type, option = quant.bias_type_16x8(node, context, b_t, node.params)
        (in_s, out_s), in_zp, out_zp = quant.symmetric_int16_scales(node, context, x_t, y_t), 0, 0
        if option != "int32" and bias_type == "int32":
            raise KernelError(f"TRANSPOSE_CONV (node {node.index}): int32 bias with quantized_bias_type unset; TFLite "
                              f"then reads the bias as int64 (past its end), so its output is undefined. Set "
                              f"quantized_bias_type=INT32 or store the bias as int64")
        recipe = "int32" if option == "int32" else "int64"
    else:
        option, bias_type, recipe = "-", "none" if b_t < 0 else "int32", "int32"
        if b_t >= 0:
            context.expect_dtype(node, b_t, (np.int32,), "bias")
            _, bzp, _ = quant.quant_params(context, b_t)
            if np.any(bzp != 0):
                raise KernelError(f"TRANSPOSE_CONV (node {node.index}): bias zero point {bzp.tolist()[:4]} is not 0")
        (in_s, in_zp), (out_s, out_zp) = quant.tensor_scale_zp(context, x_t), quant.tensor_scale_zp(context, y_t)
    geo, code, _, (co, _, _, _) = output_geometry(context, node, dt)
    f_scales, _, _ = quant.quant_params(context, f_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, co)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp, *quant.quantized_range(dt))
    up = 8 * (co // 8) if recipe == "int32" and blocks else 0
    return TransposeConvQuantizedData(**geo.as_dict(), input_scale=in_s, input_zero_point=in_zp,
                                      filter_scale=f_scales, output_scale=out_s, output_zero_point=out_zp,
                                      effective_scale=eff, output_multiplier=mult, output_shift=shift,
                                      output_activation_min=lo, output_activation_max=hi, bias_type=bias_type,
                                      quantized_bias_type=option, recipe=recipe, up_channels=up,
                                      per_channel=len(f_scales) > 1)


def prepare_hybrid(context, node):
    """Float input and output, int8 weights (a per-tensor scale is repeated for every channel)."""
    f_t, b_t = node.input(1), node.input(3)
    context.expect_dtype(node, node.outputs[0], (F32,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    check_operands(node, context, node.input(2), f_t, b_t)
    co = context.shape(f_t)[0]
    scales, per_channel = quant.hybrid_filter_scales(node, context, f_t, co, 0)
    geo, code, _, _ = output_geometry(context, node, F32)
    lo, hi = activation_range(code)
    return TransposeConvHybridData(**geo.as_dict(),
                                   filter_scale=np.ascontiguousarray(np.broadcast_to(scales, (co,)), np.float32),
                                   per_channel=per_channel, output_activation_min=lo, output_activation_max=hi)
