"""TRANSPOSE_CONV (float32): inputs [output_shape (int32 [4]), weights OHWI, input NHWC, bias (v3)].

Each input pixel (y, x) scatters its weighted values to output rows y*S_h - pad_h + fy and columns
x*S_w - pad_w + fx; taps landing outside the output are dropped; then the bias, then the fused
activation (version 4).  The output size is given, not computed; the padding is the forward-conv
padding of that output size (TFLITE_FACTS §3.3, dilation 1).  litert (2.3.0) refuses an output
shape whose forward convolution would not give back the input's height and width, and empty inputs
or outputs (:func:`workbench.interpreter.kernels._common.transpose_window`).

Fast path: one matrix product input[N*H*W, I] @ W[I, KH*KW*O] gives every pixel's scattered
contributions ("columns"); a numba loop (col2im) adds them into place.

Quantized (TFLite's transpose_conv.cc; bit-exact with litert on x86, measured):
  * int8 (version 2; 3 with a bias, 4 with an activation), per-channel int8 weights, int32 bias: the
    optimized kernel — int32 sums Σ w·(x − input_zero_point) (wrapping), + bias, then
    ``optimized_ops::Quantize``: output channels in blocks of 8 take the NEON path (double rounding,
    last-shift ties up; litert's x86 build runs NEON code through NEON_2_SSE), the last O % 8
    channels are requantized one by one (ties away from zero);
  * 16x8 (int16 input/output, zero points 0): with ``quantized_bias_type=INT32`` (int32 bias or
    none) the same optimized kernel; otherwise the reference kernel: int64 sums, int64 bias, the
    int64 overload of MultiplyByQuantizedMultiplier.  An int32 bias with the option unset would be
    read as int64 (undefined output): refused.  op_version.cc tests the 16x8 rule on input 0, which
    is the output-shape tensor, so a 16x8 node gets version 2-4 like an int8 one; version 5 is
    registered too.
Fast path: one exact float BLAS product, a numba col2im in int64, the recipe in numba;
:func:`reference_quantized` scatters tap by tap in int64 numpy.

uint8 (version 1, 3, 4): see the section "uint8 (version 1; 3 with a bias, 4 with a fused activation)"
at the end of this file: the legacy per-tensor multiplier; litert requantizes the output as one flat
array, ties up in blocks of 16 and away from zero for the last (size mod 16) values.
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ...perf.jit import njit
from ..registry import Kernel, OpData, kernel, opdata
from ..fast import requantize   # moving to the speed layer (issue 15)
from .. import quant
from ._common import F32, PADDING_NAMES, activation_name, activation_range, transpose_window


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


def zero_canvas(x_shape, f_shape, stride, pad, out_hw, dtype) -> np.ndarray:
    """Zeros [N, CH, CW, O] big enough for every tap of every input pixel and for the padded output."""
    n, h, w, _ = x_shape
    co, kh, kw, _ = f_shape
    (sh, sw), (pt, pl), (oh, ow) = stride, pad, out_hw
    return np.zeros((n, max((h - 1) * sh + kh, pt + oh), max((w - 1) * sw + kw, pl + ow), co), dtype)


def scatter_taps(x, filt, stride, pad, out_hw, dtype) -> np.ndarray:
    """Σ over filter taps of ``x @ filt[:, ky, kx, :].T`` scattered onto a ``dtype`` canvas (input pixel
    (y, x) lands at (y·S_h + ky, x·S_w + kx)), cropped to the output [N, OH, OW, O]: taps off it dropped."""
    n, h, w, _ = x.shape
    co, kh, kw, _ = filt.shape
    (sh, sw), (pt, pl), (oh, ow) = stride, pad, out_hw
    if x.size == 0 or n * oh * ow * co == 0:     # nothing to scatter (an empty input) or to keep
        return np.zeros((n, oh, ow, co), dtype)
    canvas = zero_canvas(x.shape, filt.shape, stride, pad, out_hw, dtype)
    for ky in range(kh):
        for kx in range(kw):
            canvas[:, ky:ky + (h - 1) * sh + 1:sh, kx:kx + (w - 1) * sw + 1:sw, :] += x @ filt[:, ky, kx, :].T
    return canvas[:, pt:pt + oh, pl:pl + ow, :]


def reference(x, filt, bias, stride, pad, out_shape, act_range):
    """Scatter every filter tap's contribution onto a canvas, then crop the padding off."""
    out = scatter_taps(x, filt, stride, pad, out_shape[1:3], np.float32)
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
    return check_operands(node, context, x_t, f_t, b_t)


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


def output_geometry(node, context, p, xs, fs):
    """The constant output shape (input 0) checked against input ``xs`` and weights ``fs``, the strides and
    padding of the options, and the forward-conv padding: (output shape, stride_h, stride_w, padding code,
    pad_top, pad_left)."""
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
    pt, pl = transpose_window(node, padding, out[1], out[2], fs[1], fs[2], sh, sw, xs[1], xs[2])
    return out, sh, sw, padding, pt, pl


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


# ----------------------------------------------------------------------------------------------
# int8 (per-channel) and 16x8: quantized input/output, int8 weights


I8 = np.dtype(np.int8)
I16 = np.dtype(np.int16)


@opdata
class TransposeConvQuantizedData(OpData):
    padding: str
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    output_shape: tuple
    activation: str
    input_scale: float
    input_zero_point: int
    filter_scale: object          # float32 [1] or [O]
    output_scale: float
    output_zero_point: int
    effective_scale: object       # float64 [O]
    output_multiplier: object     # int64 [O]
    output_shift: object          # int64 [O]
    output_activation_min: int
    output_activation_max: int
    bias_type: str                # "int32" | "int64" | "none"
    quantized_bias_type: str      # 16x8 option: "unset" | "int32" | "int64" ("-" for int8)
    recipe: str                   # "int32": int32 sums that wrap, double rounding (optimized kernel);
                                  # "int64": int64 sums, MultiplyByQuantizedMultiplier(int64) (reference)
    up_channels: int              # "int32": channels [0, up_channels) round ties up (8 at a time, NEON
                                  # vrshl), the rest — the last O % 8 — one by one, ties away from zero
    impl: str = "blas+col2im"
    per_channel: bool = False
    weights: object = None        # float [I, KH*KW*O] (exact), when constant
    bias: object = None           # int64 [O] (zeros without bias)
    cols: object = None           # scratch [N*H*W, KH*KW*O]
    acc: object = None            # scratch int64 [N, OH, OW, O]


def scatter_sums_int64(x, filt, stride, pad, out_hw, in_zp) -> np.ndarray:
    """Σ w·(x − zp) scattered onto the output canvas in int64 numpy (taps off the output dropped)."""
    return scatter_taps(x.astype(np.int64) - in_zp, filt.astype(np.int64), stride, pad, out_hw, np.int64)


def requantize_tc(acc2d, bias, d, out2d, jit: bool) -> None:
    args = (acc2d, bias, d.output_multiplier, d.output_shift, d.output_zero_point, d.output_activation_min,
            d.output_activation_max, out2d)
    if d.recipe == "int64":
        (requantize.requantize_int64_rows_jit if jit else quant.requantize_int64_rows)(*args)
    else:
        (requantize.requantize_int32_rows_jit if jit else quant.requantize_int32_rows)(*args, d.up_channels)


def reference_quantized(x, filt, bias, d, dtype) -> np.ndarray:
    acc = scatter_sums_int64(x, filt, (d.stride_h, d.stride_w), (d.pad_top, d.pad_left), d.output_shape[1:3],
                             d.input_zero_point)
    co = acc.shape[3]
    out = np.empty(acc.shape, dtype)
    b = np.zeros(co, np.int64) if bias is None else bias.astype(np.int64)
    requantize_tc(acc.reshape(-1, co), b, d, out.reshape(-1, co), jit=False)
    return out


@njit
def col2im_int_numba(cols, acc, h, w, kh, kw, sh, sw, pt, pl):
    """acc = 0; acc[y*sh - pt + fy, x*sw - pl + fx] += cols[(y, x), (fy, fx, :)] in int64."""
    n_b, oh, ow, co = acc.shape
    for b in range(n_b):
        for oy in range(oh):
            for ox in range(ow):
                for c in range(co):
                    acc[b, oy, ox, c] = 0
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
                            acc[b, oy, ox, c] += np.int64(cols[row, base + c])


def quantized_weights_matrix(filt, dtype):
    """OHWI int8 → [I, KH*KW*O] in an exact float type."""
    return np.ascontiguousarray(filt.transpose(3, 1, 2, 0).reshape(filt.shape[3], -1), dtype)


def prepare_quantized(context, node, p):
    """TRANSPOSE_CONV with int8 or int16 activations (TFLite's transpose_conv.cc rules)."""
    x_t, f_t, b_t, y_t = node.input(2), node.input(1), node.input(3), node.outputs[0]
    dt = context.dtype(x_t)
    context.expect_dtype(node, f_t, (I8,), "weights")
    context.expect_dtype(node, y_t, (dt,), "output")
    xs, fs = check_operands(node, context, x_t, f_t, b_t)
    if dt == I16:
        bias_type, option = quant.bias_type_16x8(node, context, b_t, p)
        in_s, out_s = quant.symmetric_int16_scales(node, context, x_t, y_t)
        in_zp = out_zp = 0
        if option == "int32":
            recipe = "int32"
        elif bias_type == "int32":
            raise KernelError(f"TRANSPOSE_CONV (node {node.index}): int32 bias with quantized_bias_type unset; TFLite "
                              f"then reads the bias as int64 (past its end), so its output is undefined. Set "
                              f"quantized_bias_type=INT32 or store the bias as int64")
        else:
            recipe = "int64"
        qmin, qmax = quant.INT16_MIN, quant.INT16_MAX
    else:
        option = "-"
        bias_type = "none" if b_t < 0 else "int32"
        if b_t >= 0:
            context.expect_dtype(node, b_t, (np.int32,), "bias")
            _, bzp, _ = quant.quant_params(context, b_t)
            if np.any(bzp != 0):
                raise KernelError(f"TRANSPOSE_CONV (node {node.index}): bias zero point {bzp.tolist()[:4]} is not 0")
        in_s, in_zp = quant.tensor_scale_zp(context, x_t)
        out_s, out_zp = quant.tensor_scale_zp(context, y_t)
        recipe = "int32"
        qmin, qmax = -128, 127
    out, sh, sw, padding, pt, pl = output_geometry(node, context, p, xs, fs)
    co, kh, kw, ci = fs
    f_scales, _, _ = quant.quant_params(context, f_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, co)
    code = p.get("fused_activation_function", 0)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp, qmin, qmax)
    context.set_output(y_t, out, dt)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(co, np.int64)
    in_abs = max(abs(qmin - in_zp), abs(qmax - in_zp))
    fdt = quant.exact_matmul_dtype(in_abs, 127.0 * ci) or np.dtype(np.int64)
    n, h, w, _ = xs
    return TransposeConvQuantizedData(
        PADDING_NAMES[padding], sh, sw, kh, kw, pt, pl, out, activation_name(code), in_s, in_zp, f_scales, out_s,
        out_zp, eff, mult, shift, lo, hi, bias_type, option, recipe, 8 * (co // 8) if recipe == "int32" else 0,
        f"blas({fdt.name}, exact)+col2im", len(f_scales) > 1,
        None if filt is None else quantized_weights_matrix(filt, fdt),
        None if bias is None else bias.astype(np.int64), np.empty((n * h * w, kh * kw * co), fdt),
        np.empty(out, np.int64))


def invoke_quantized(context, node, d) -> None:
    t = context.tensors
    x = t[node.inputs[2]]
    cols = d.cols
    wm = d.weights if d.weights is not None else quantized_weights_matrix(t[node.inputs[1]], cols.dtype)
    b_t = node.input(3)
    bias = d.bias if d.bias is not None else t[b_t].astype(np.int64)
    xs = x.reshape(-1, x.shape[3])
    if d.input_zero_point:
        xs = xs.astype(cols.dtype) - d.input_zero_point
    np.matmul(xs, wm, out=cols, casting="unsafe")
    col2im_int_numba(cols, d.acc, x.shape[1], x.shape[2], d.filter_h, d.filter_w, d.stride_h, d.stride_w,
                     d.pad_top, d.pad_left)
    out = t[node.outputs[0]]
    co = out.shape[3]
    requantize_tc(d.acc.reshape(-1, co), bias, d, out.reshape(-1, co), jit=True)


@kernel(BuiltinOperator.TRANSPOSE_CONV, versions=(1, 2, 3, 4, 5))
class TransposeConv(TransposeConvBase):
    name = "transpose_conv"
    value_inputs = (0, 1, 2, 3)

    def prepare(self, context, node):
        p = node.params
        x_t, f_t, b_t = node.input(2), node.input(1), node.input(3)
        if context.dtype(x_t) == U8:
            return prepare_uint8(context, node, p)
        if context.dtype(x_t) in (I8, I16):
            return prepare_quantized(context, node, p)
        if context.dtype(x_t) == F32 and context.dtype(f_t) == I8:
            return prepare_hybrid(context, node, p)
        xs, fs = check_shapes(node, context, x_t, f_t, b_t)
        out, sh, sw, padding, pt, pl = output_geometry(node, context, p, xs, fs)
        context.set_output(node.outputs[0], out, F32)
        return self.make_data(context, node, PADDING_NAMES[padding], sh, sw, pt, pl, out,
                              p.get("fused_activation_function", 0))

    def invoke(self, context, node, d):
        if type(d) is TransposeConvUint8Data:
            return invoke_uint8(context, node, d)
        if type(d) is TransposeConvQuantizedData:
            return invoke_quantized(context, node, d)
        if type(d) is TransposeConvHybridData:
            return invoke_hybrid(context, node, d)
        return super().invoke(context, node, d)

    def invoke_reference(self, context, node, d):
        if type(d) is TransposeConvData:
            return super().invoke_reference(context, node, d)
        t = context.tensors
        b_t = node.input(3)
        out = t[node.outputs[0]]
        args = (t[node.inputs[2]], t[node.inputs[1]], t[b_t] if b_t >= 0 else None, d)
        if type(d) is TransposeConvUint8Data:
            out[...] = reference_uint8(*args)
        elif type(d) is TransposeConvQuantizedData:
            out[...] = reference_quantized(*args, out.dtype)
        else:
            out[...] = reference_hybrid(*args)


# ----------------------------------------------------------------------------------------------
# uint8 (version 1; 3 with a bias, 4 with a fused activation)
#
# acc = Σ (weights − filter_zero_point)·(input − input_zero_point) scattered onto the output, + int32
# bias, the legacy per-tensor multiplier (:func:`workbench.interpreter.quant.legacy_conv_multiplier`),
# + output_zero_point, clamped.  litert's uint8 kernel requantizes the output as one flat array: 16
# values at a time with a rounding shift whose ties go up, then the last (size mod 16) values one by
# one with MultiplyByQuantizedMultiplier (ties away from zero) — ``up_values`` says where (measured).

U8 = np.dtype(np.uint8)


@opdata
class TransposeConvUint8Data(OpData):
    padding: str
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    output_shape: tuple
    activation: str
    input_scale: float
    input_zero_point: int
    filter_scale: float
    filter_zero_point: int
    output_scale: float
    output_zero_point: int
    effective_scale: float        # float32(input_scale·filter_scale) / output_scale (legacy recipe)
    output_multiplier: int
    output_shift: int
    output_activation_min: int
    output_activation_max: int
    up_values: int                # flat output values [0, up_values) round ties up; the rest away from zero
    impl: str = "blas+col2im"
    weights: object = None        # float [I, KH*KW*O]: weights − filter_zero_point (exact), when constant
    bias: object = None           # int64 [O] (zeros without bias)
    cols: object = None           # scratch [N*H*W, KH*KW*O]
    acc: object = None            # scratch int32 [N, OH, OW, O] (TFLite's col2im buffer is int32 too)


@njit
def requantize_flat_jit(acc, multiplier, shift, n_up, out_zp, lo, hi, out):
    """:func:`requantize_uint8` in one compiled loop over the flat int32 sums ``acc`` into ``out``."""
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


def requantize_uint8(acc, d) -> np.ndarray:
    """int64 sums (bias included) [N, OH, OW, O] → uint8, ties up for the first ``up_values`` values."""
    flat = np.asarray(acc, np.int64).reshape(-1)
    v = np.empty(flat.shape, np.int64)
    n_up = d.up_values
    v[:n_up] = quant.multiply_by_quantized_multiplier_array(flat[:n_up], d.output_multiplier, d.output_shift, True)
    v[n_up:] = quant.multiply_by_quantized_multiplier_array(flat[n_up:], d.output_multiplier, d.output_shift, False)
    v = np.clip(v + d.output_zero_point, d.output_activation_min, d.output_activation_max)
    return v.astype(np.uint8).reshape(np.shape(acc))


def reference_uint8(x, filt, bias, d) -> np.ndarray:
    """Scatter every tap's Σ (w − w_zp)·(x − x_zp) onto an int64 canvas, crop, add the bias, requantize."""
    acc = scatter_taps(x.astype(np.int64) - d.input_zero_point, filt.astype(np.int64) - d.filter_zero_point,
                       (d.stride_h, d.stride_w), (d.pad_top, d.pad_left), d.output_shape[1:3], np.int64)
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    return requantize_uint8(acc, d)


def prepare_uint8(context, node, p):
    x_t, f_t, b_t, y_t = node.input(2), node.input(1), node.input(3), node.outputs[0]
    context.expect_dtype(node, f_t, (U8,), "weights")
    context.expect_dtype(node, y_t, (U8,), "output")
    xs, fs = check_operands(node, context, x_t, f_t, b_t)
    in_s, in_zp, f_s, f_zp, out_s, out_zp, real, m, s = quant.uint8_matrix_scales(node, context, x_t, f_t, b_t, y_t)
    out, sh, sw, padding, pt, pl = output_geometry(node, context, p, xs, fs)
    co, kh, kw, ci = fs
    code = p.get("fused_activation_function", 0)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp, 0, 255)
    context.set_output(y_t, out, U8)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(co, np.int64)
    fdt = quant.exact_float_dtype(255.0 * ci, input_abs_max=255)
    n, h, w, _ = xs
    total = int(np.prod(out))
    weights = None
    if filt is not None:
        weights = np.ascontiguousarray((filt.astype(np.int64) - f_zp).transpose(3, 1, 2, 0).reshape(ci, -1), fdt)
    return TransposeConvUint8Data(
        PADDING_NAMES[padding], sh, sw, kh, kw, pt, pl, out, activation_name(code), in_s, in_zp, f_s, f_zp, out_s,
        out_zp, real, m, s, lo, hi, total - total % 16, f"blas({fdt.name}, exact)+col2im", weights,
        None if bias is None else bias.astype(np.int64), np.empty((n * h * w, kh * kw * co), fdt),
        np.empty(out, np.int32))


def invoke_uint8(context, node, d) -> None:
    t = context.tensors
    x = t[node.inputs[2]]
    cols = d.cols
    wm = d.weights
    if wm is None:
        f = t[node.inputs[1]]
        wm = np.ascontiguousarray((f.astype(np.int64) - d.filter_zero_point).transpose(3, 1, 2, 0)
                                  .reshape(f.shape[3], -1), cols.dtype)
    b_t = node.input(3)
    bias = d.bias if d.bias is not None else t[b_t].astype(np.int64)
    xs = x.reshape(-1, x.shape[3]).astype(cols.dtype) - d.input_zero_point
    np.matmul(xs, wm, out=cols)
    col2im_int_numba(cols, d.acc, x.shape[1], x.shape[2], d.filter_h, d.filter_w, d.stride_h, d.stride_w,
                     d.pad_top, d.pad_left)
    acc = d.acc
    acc += bias.astype(np.int32)
    requantize_flat_jit(acc.reshape(-1), d.output_multiplier, d.output_shift, d.up_values, d.output_zero_point,
                        d.output_activation_min, d.output_activation_max, t[node.outputs[0]].reshape(-1))


# ----------------------------------------------------------------------------------------------
# hybrid ("dynamic range"): float32 input and output, int8 weights (per-tensor or per-channel,
# zero point 0), float32 bias
#
# What litert 2.3.0 runs (measured bit for bit on one-op models; TFLite's ``EvalHybrid`` calls the
# reference ``HybridTransposeConv`` — no matrix product, no col2im):
#   * every batch image (H·W·C values) is quantized as one asymmetric row
#     (:func:`workbench.interpreter.quant.asymmetric_quantize_rows`: scaling factor sf_b and input
#     offset zp_b);
#   * the output starts at 0.0 and every tap is scattered in the order batch, input row, input
#     column, input channel (then filter row, column, output channel):
#     ``out += float32(float32((q − zp_b)·w) · filter_scale[o]) · sf_b`` — a float32 product and a
#     float32 sum per tap, NOT one int32 sum scaled once (that differs in the last bit for about
#     half of the outputs), and the filter scale multiplies before the input's scaling factor;
#   * then the bias is added, then the activation clamp ``min(max(v, lo), hi)``.
# A per-tensor filter scale is used for every output channel.


@opdata
class TransposeConvHybridData(OpData):
    padding: str
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    output_shape: tuple
    activation: str
    filter_scale: object            # float32 [O] (a per-tensor scale repeated)
    per_channel: bool
    output_activation_min: float
    output_activation_max: float
    asymmetric_quantize_inputs: bool = True   # TRANSPOSE_CONV always quantizes its input asymmetrically
    impl: str = "numba scatter (float32, tap by tap)"
    weights: object = None          # float32 [I, KH, KW, O] (exact int8 values), when constant
    bias: object = None             # float32 [O] (zeros without bias)
    quantized: object = None        # scratch int8 [N, H·W·C]
    scaling_factors: object = None  # scratch float32 [N]
    input_offsets: object = None    # scratch int32 [N]


def prepare_hybrid(context, node, p):
    x_t, f_t, b_t, y_t = node.input(2), node.input(1), node.input(3), node.outputs[0]
    context.expect_dtype(node, y_t, (F32,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    xs, fs = check_operands(node, context, x_t, f_t, b_t)
    co, kh, kw, ci = fs
    scales, per_channel = quant.hybrid_filter_scales(node, context, f_t, co, 0)
    out, sh, sw, padding, pt, pl = output_geometry(node, context, p, xs, fs)
    code = p.get("fused_activation_function", 0)
    lo, hi = activation_range(code)
    context.set_output(y_t, out, F32)
    filt = context.value(f_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(co, np.float32)
    n = xs[0]
    return TransposeConvHybridData(
        PADDING_NAMES[padding], sh, sw, kh, kw, pt, pl, out, activation_name(code),
        np.ascontiguousarray(np.broadcast_to(scales, (co,)), np.float32), per_channel, lo, hi, True,
        weights=None if filt is None else hybrid_weights(filt),
        bias=None if bias is None else np.ascontiguousarray(bias, np.float32),
        quantized=np.empty((n, int(np.prod(xs[1:]))), np.int8), scaling_factors=np.empty(n, np.float32),
        input_offsets=np.empty(n, np.int32))


def hybrid_weights(filt):
    """OHWI int8 → float32 [I, KH, KW, O] (exact)."""
    return np.ascontiguousarray(np.asarray(filt).transpose(3, 1, 2, 0), np.float32)


def hybrid_clamp(v, lo, hi):
    return quant.std_min(quant.std_max(v, np.float32(lo)), np.float32(hi))


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


def invoke_hybrid(context, node, d) -> None:
    t = context.tensors
    x = t[node.inputs[2]]
    n = x.shape[0]
    wf = d.weights if d.weights is not None else hybrid_weights(t[node.inputs[1]])
    bias = d.bias if d.bias is not None else t[node.inputs[3]]
    requantize.quantize_rows_jit(x.reshape(n, -1), True, d.quantized, d.scaling_factors, d.input_offsets)
    out = t[node.outputs[0]]
    hybrid_scatter_numba(d.quantized.reshape(x.shape), d.scaling_factors, d.input_offsets, wf, d.filter_scale, out,
                         d.stride_h, d.stride_w, d.pad_top, d.pad_left)
    out[...] = hybrid_clamp((out + bias).astype(np.float32), d.output_activation_min, d.output_activation_max)


def reference_hybrid(x, filt, bias, d) -> np.ndarray:
    """Quantize each image, then add the taps one input value at a time onto a padded canvas."""
    n, h, w, ci = x.shape
    co, kh, kw, _ = filt.shape
    sh, sw, pt, pl = d.stride_h, d.stride_w, d.pad_top, d.pad_left
    oh, ow = d.output_shape[1], d.output_shape[2]
    q, sf, zp = quant.asymmetric_quantize_rows(x.reshape(n, -1))
    q = q.reshape(x.shape).astype(np.int32)
    canvas = zero_canvas(x.shape, filt.shape, (sh, sw), (pt, pl), (oh, ow), np.float32)
    wf = filt.astype(np.float32).transpose(3, 1, 2, 0)          # [I, KH, KW, O]
    for b in range(n):
        for iy in range(h):
            for ix in range(w):
                for ic in range(ci):
                    tap = (np.float32(q[b, iy, ix, ic] - zp[b]) * wf[ic]).astype(np.float32)
                    tap = (tap * d.filter_scale).astype(np.float32)
                    window = canvas[b, iy * sh:iy * sh + kh, ix * sw:ix * sw + kw, :]
                    window += (tap * sf[b]).astype(np.float32)
    out = canvas[:, pt:pt + oh, pl:pl + ow, :]
    if bias is not None:
        out = (out + bias).astype(np.float32)
    return hybrid_clamp(out, d.output_activation_min, d.output_activation_max)
