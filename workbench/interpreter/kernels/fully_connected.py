"""FULLY_CONNECTED (float32): y = x W^T + b, W of shape [units, K].

The input is read as [batch, K] with batch = (number of elements) / K.  The output is
[batch, units], or x's leading dims + [units] with ``keep_num_dims`` (version 5).  The bias slot
may be -1 or missing altogether (version 6).  Only the DEFAULT weights format.

int8 (version 4; 5 and 6 as for float): acc = Σ (w − w_zp)·(x − input_zero_point) + bias in int32,
requantized with ``output_multiplier`` / ``output_shift`` (one pair, or one per unit for per-channel
weights), + output_zero_point, clamped.  The fast path is one exact float BLAS product
(:func:`workbench.interpreter.quant.exact_float_dtype`), or, on a CPU with AVX-512 VNNI and for
products of at least ``_vnni.MIN_MACS`` multiply-adds, the int8 dot-product instruction on a packed
copy of W (:mod:`workbench.perf.vnni`); :func:`reference_int8` uses int64 numpy.

16x8 (int16 input/output, int8 weights; version 11, or the int8 version 4 a converter stamped): input
and output zero points must be 0.  TFLite's fully_connected.cc picks one of two kernels (both measured
against litert on x86):
  * ruy — int32 bias or none, ``quantized_bias_type`` not INT64, weight zero point 0: int32 sums that
    wrap, the double rounding of int8 with last-shift ties up; a per-tensor multiplier comes from the
    float32 product input_scale·weight_scale (``GetQuantizedConvolutionMultipler``), per-channel
    ones from double products;
  * the reference kernel — int64 bias, or ``quantized_bias_type=INT64``, or a (per-tensor) weight
    zero point ≠ 0: out = (int32)round((double)acc · effective_scale), effective_scale =
    double(input_scale)·double(weight_scale[c])/double(output_scale), C's round (halves away from
    zero); a value outside int32 becomes INT32_MIN (x86's conversion), i.e. the lowest int16.
An int32 bias that the reference kernel would read as int64 (option unset) is refused.
:func:`reference_int16` is the plain int64 numpy version of both.

uint8 (version 1, 5, 6; ties up, ruy) and hybrid (float input/output, int8 weights; version 3, 9
with asymmetric_quantize_inputs, 12 per-channel): see the section "uint8 / hybrid" at the end of
this file.  The SHUFFLED4x16INT8 format (version 2) is refused.

int16 weights (version 7: int16 input, weights and output) and sparse weights (version 8: float32
random-sparse or 1x4 blocks, int8 1x16 blocks): see the section at the end of this file.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ..fast import requantize   # moving to the speed layer (issue 15)
from ...perf import vnni as _vnni
from .. import quant
from ._common import F32, activation_name, activation_range, apply_activation, check_bias
from . import _fc_int4

I8 = np.dtype(np.int8)


@opdata
class FullyConnectedData(OpData):
    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple
    activation: str
    output_activation_min: float
    output_activation_max: float
    impl: str = "blas"
    weights_t: object = None     # [K, units]: the transposed view of W (no copy), when W is constant
    bias: object = None


def reference(x, w, b, act_range):
    k = w.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
        y = x.reshape(-1, k).astype(np.float64) @ w.astype(np.float64).T
        if b is not None:
            y = y + b
        return np.clip(y, *act_range).astype(np.float32)


@opdata
class FullyConnectedInt8Data(OpData):
    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple
    activation: str
    input_scale: float
    input_zero_point: int
    filter_scale: object          # float32 [1] or [units]
    filter_zero_point: int
    output_scale: float
    output_zero_point: int
    effective_scale: object       # float64 [units]
    output_multiplier: object     # int64 [units]
    output_shift: object          # int64 [units]
    output_activation_min: int
    output_activation_max: int
    impl: str = "blas"
    weights_t: object = None      # float [K, units]: (W − w_zp)ᵀ, exact; vnni: W − w_zp packed for vpdpbusd
    bias_folded: object = None    # int64 [units]: bias − input_zero_point·Σ(W − w_zp) (vnni: zero point + 128)
    cols: object = None           # scratch: the input as float [batch, K]
    acc: object = None            # scratch: float [batch, units]
    rounding: str = "up"          # ties of the final rounding shift: "up" (what TFLite runs on x86:
                                  # ruy / NEON vrshl) or "away" (reference kernels, gemmlowp)

    @property
    def half_up(self) -> bool:
        return self.rounding == "up"


def reference_int8(x, w, b, d):
    k = w.shape[1]
    xs = x.reshape(-1, k).astype(np.int64) - d.input_zero_point
    acc = xs @ (w.astype(np.int64) - d.filter_zero_point).T
    if b is not None:
        acc = acc + b.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.half_up) + d.output_zero_point
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(np.int8)


def prepare_int8(context, node, p, batch, units, k, keep, out):
    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, w_t, (I8,), "weights")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.int32,), "bias")
    in_s, in_zp = quant.tensor_scale_zp(context, x_t)
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    f_scales, f_zps, _ = quant.quant_params(context, w_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, units)
    code = p.get("fused_activation_function", 0)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp)
    context.set_output(y_t, out, I8)
    w = context.value(w_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(units, np.int32)
    wt = folded = cols = acc = None
    impl = "reference"
    w_zp = int(f_zps[0])
    if (w is not None and bias is not None and _vnni.worth_it(batch, k, units)
            and -128 <= int(w.min(initial=0)) - w_zp and int(w.max(initial=0)) - w_zp <= 127):
        wm = (w.astype(np.int64) - w_zp).astype(np.int8)       # [units, K]
        wt = _vnni.pack_filter(wm)
        folded = _vnni.folded_bias(bias, wm, in_zp)
        impl = "vnni(int8, exact)"
    elif w is not None and bias is not None:
        wm = w.astype(np.int64) - w_zp                         # [units, K]
        fdt = quant.exact_float_dtype(float(np.abs(wm).sum(axis=1).max(initial=0)))
        wt = np.ascontiguousarray(wm.T, fdt)
        folded = bias.astype(np.int64) - in_zp * wm.sum(axis=1)
        cols = np.empty((batch, k), fdt)
        acc = np.empty((batch, units), fdt)
        impl = f"blas({fdt.name}, exact)"
    return FullyConnectedInt8Data(batch, units, k, keep, out, activation_name(code), in_s, in_zp, f_scales, w_zp,
                                  out_s, out_zp, eff, mult, shift, lo, hi, impl, wt, folded, cols, acc)


# ----------------------------------------------------------------------------------------------
# 16x8: int16 input/output, int8 weights (per-tensor or per-channel), int64 / int32 / no bias


I16 = np.dtype(np.int16)


@opdata
class FullyConnectedInt16Data(OpData):
    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple
    activation: str
    input_scale: float
    input_zero_point: int         # 0 (TFLite refuses others)
    filter_scale: object          # float32 [1] or [units]
    filter_zero_point: int        # per-tensor weights only (TFLite ignores per-channel zero points)
    output_scale: float
    output_zero_point: int        # 0
    effective_scale: object       # float64 [units]: double(in_s)·double(w_s[c])/double(out_s) ("double" recipe)
    output_multiplier: object     # int64 [units] ("int32" recipe; per-tensor: from the float32 product in_s·w_s)
    output_shift: object          # int64 [units]
    output_activation_min: int
    output_activation_max: int
    bias_type: str                # "int64" | "int32" | "none"
    quantized_bias_type: str      # the option: "unset" | "int32" | "int64"
    recipe: str                   # "int32": ruy, int32 sums that wrap, double rounding, ties up;
                                  # "double": reference, round(acc · effective_scale) in double
    accumulator: str              # "int32" (wraps) | "int64"
    impl: str = "blas"
    per_channel: bool = False
    weights_t: object = None      # float [K, units]: (W − w_zp)ᵀ, exact
    bias: object = None           # int64 [units] (zeros without bias)
    cols: object = None           # scratch [batch, K]
    acc: object = None            # scratch [batch, units]


def fc16_output(acc, bias, d, out2d, jit: bool) -> None:
    """Exact sums acc [batch, units] (+ bias) → int16 out2d by the node's recipe."""
    if d.recipe == "int32":
        args = (acc, bias, d.output_multiplier, d.output_shift, 0, d.output_activation_min,
                d.output_activation_max, out2d, d.units)
        (requantize.requantize_int32_rows_jit if jit else quant.requantize_int32_rows)(*args)
        return
    v = np.asarray(acc).astype(np.int64) + bias
    if d.accumulator == "int32":
        v = quant.wrap_int32_array(v)
    out2d[...] = quant.scale_by_double(v, d.effective_scale, 0, d.output_activation_min, d.output_activation_max)


def reference_int16(x, w, b, d):
    xs = x.reshape(-1, d.depth).astype(np.int64)
    acc = xs @ (w.astype(np.int64) - d.filter_zero_point).T
    bias = np.zeros(d.units, np.int64) if b is None else b.astype(np.int64)
    out = np.empty((d.batch, d.units), np.int16)
    fc16_output(acc, bias, d, out, jit=False)
    return out


def prepare_int16(context, node, p, batch, units, k, keep, out):
    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, w_t, (I8,), "weights")
    context.expect_dtype(node, y_t, (I16,), "output")
    code = p.get("fused_activation_function", 0)
    if code not in (0, 1, 2, 3):
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): fused activation {activation_name(code)}; "
                                 f"TFLite's quantized FULLY_CONNECTED takes only NONE, RELU, RELU_N1_TO_1, RELU6")
    bias_type, option = quant.bias_type_16x8(node, context, b_t, p)
    in_s, out_s = quant.symmetric_int16_scales(node, context, x_t, y_t)
    f_scales, f_zps, qdim = quant.quant_params(context, w_t)
    per_channel = len(f_scales) > 1
    if per_channel and (len(f_scales) != units or qdim != 0):
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): {len(f_scales)} weight scales on axis {qdim} "
                                 f"for {units} units (per-channel weights need one scale per unit, axis 0)")
    w_zp = 0 if per_channel else int(f_zps[0])
    fs = np.asarray(f_scales, np.float32)
    eff = np.array([float(np.float64(np.float32(in_s)) * np.float64(s) / np.float64(np.float32(out_s)))
                    for s in np.resize(fs, units)], np.float64)
    if per_channel:
        _, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, units)
    else:   # GetQuantizedConvolutionMultipler: the scale product is taken in float32
        b_scales, _, _ = quant.quant_params(context, b_t) if b_t >= 0 else (None, None, None)
        if b_scales is not None and len(b_scales):
            diff = abs(float(np.float32(in_s)) * float(fs[0]) - float(b_scales[0]))
            if not diff / float(np.float32(out_s)) <= 0.02:
                raise KernelError(f"FULLY_CONNECTED (node {node.index}): bias scale {float(b_scales[0]):.6g} is not "
                                  f"input_scale·weight_scale ({float(np.float32(in_s)) * float(fs[0]):.6g}); TFLite "
                                  f"requires |difference| / output_scale <= 0.02")
        real = float(np.float64(np.float32(in_s) * fs[0]) / np.float64(np.float32(out_s)))
        m, s = quant.quantize_multiplier(real)
        mult, shift = np.full(units, m, np.int64), np.full(units, s, np.int64)
    if w_zp != 0 or bias_type == "int64" or option == "int64":
        recipe, accumulator = "double", ("int32" if option == "int32" else "int64")
        if accumulator == "int64" and bias_type == "int32":
            raise KernelError(f"FULLY_CONNECTED (node {node.index}): int32 bias, quantized_bias_type unset and weight "
                              f"zero point {w_zp}: TFLite's reference 16x8 kernel then reads the bias as int64 (past "
                              f"its end), so its output is undefined; set quantized_bias_type=INT32")
    else:
        recipe, accumulator = "int32", "int32"
    lo, hi = quant.activation_range_quantized(code, out_s, 0, quant.INT16_MIN, quant.INT16_MAX)
    context.set_output(y_t, out, I16)
    w = context.value(w_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(units, np.int64)
    wt = cols = acc = None
    impl = "reference"
    if w is not None:
        wm = w.astype(np.int64) - w_zp                          # [units, K]
        fdt = quant.exact_matmul_dtype(-quant.INT16_MIN, float(np.abs(wm).sum(axis=1).max(initial=0)))
        if fdt is not None:
            wt = np.ascontiguousarray(wm.T, fdt)
            cols = np.empty((batch, k), fdt)
            acc = np.empty((batch, units), fdt)
            impl = f"blas({fdt.name}, exact)"
    return FullyConnectedInt16Data(batch, units, k, keep, out, activation_name(code), in_s, 0, f_scales, w_zp, out_s,
                                   0, eff, mult, shift, lo, hi, bias_type, option, recipe, accumulator, impl,
                                   per_channel, wt, None if bias is None else bias.astype(np.int64), cols, acc)


def invoke_int16(context, node, d) -> None:
    t = context.tensors
    b_t = node.input(2)
    bias = d.bias if d.bias is not None else t[b_t].astype(np.int64)
    out2d = t[node.outputs[0]].reshape(d.batch, d.units)
    if d.weights_t is None:
        out2d[...] = reference_int16(t[node.inputs[0]], t[node.inputs[1]], bias, d)
        return
    np.copyto(d.cols, t[node.inputs[0]].reshape(d.batch, d.depth), casting="unsafe")
    np.matmul(d.cols, d.weights_t, out=d.acc)
    fc16_output(d.acc, bias, d, out2d, jit=True)


@kernel(BuiltinOperator.FULLY_CONNECTED, versions=(1, 3, 4, 5, 6, 7, 8, 9, 11, 12))
class FullyConnected(Kernel):
    name = "fully_connected"

    def prepare(self, context, node):
        p = node.params
        x_t, w_t, b_t = node.input(0), node.input(1), node.input(2)
        if context.tensor_meta(w_t).sparsity is not None or context.dtype(w_t) == I16:    # v8 / v7
            return prepare_v7_v8(context, node, p)
        if context.dtype(x_t) == U8 or (context.dtype(x_t) == F32 and context.dtype(w_t) == I8):
            return prepare_uint8_or_hybrid(context, node, p)
        int8 = context.dtype(x_t) == I8
        int16 = context.dtype(x_t) == I16
        if not int8 and not int16:
            context.expect_dtype(node, x_t, (F32,), "input")
            context.expect_dtype(node, w_t, (F32,), "weights")
            if b_t >= 0:
                context.expect_dtype(node, b_t, (F32,), "bias")
        if p.get("weights_format", 0) != 0:
            raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): weights format {p['weights_format']} "
                                     f"(shuffled int8) is not implemented")
        wshape = context.shape(w_t)
        if len(wshape) != 2:
            raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): weights of shape {list(wshape)}")
        units, k = wshape
        check_bias(node, context, b_t, units)
        xshape = context.shape(x_t)
        total = math.prod(xshape)
        if k == 0 or total % k:
            raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): input {list(xshape)} is not a whole "
                                     f"number of rows of {k}")
        batch = total // k
        keep = bool(p.get("keep_num_dims", False))
        if keep:
            if xshape[-1] != k:
                raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): keep_num_dims needs the last input "
                                         f"dim to be {k}")
            out = tuple(xshape[:-1]) + (units,)
        else:
            out = (batch, units)
        if int8:
            return prepare_int8(context, node, p, batch, units, k, keep, out)
        if int16:
            return prepare_int16(context, node, p, batch, units, k, keep, out)
        context.set_output(node.outputs[0], out, F32)
        code = p.get("fused_activation_function", 0)
        lo, hi = activation_range(code)
        w = context.value(w_t)
        wt = np.asarray(w, np.float32).T if w is not None else None   # a view: BLAS reads W transposed
        bias = context.value(b_t) if b_t >= 0 else None
        return FullyConnectedData(batch, units, k, keep, out, activation_name(code), lo, hi, "blas", wt,
                                  None if bias is None else np.ascontiguousarray(bias, np.float32))

    def invoke(self, context, node, d):
        t = context.tensors
        if type(d) in (FullyConnectedInt16WeightsData, FullyConnectedSparseData):
            return invoke_v7_v8(context, node, d)
        if type(d) is FullyConnectedHybridData:
            return invoke_hybrid(context, node, d)
        if type(d) in (_fc_int4.FullyConnectedHybrid4BitData, _fc_int4.FullyConnectedBlockwise4BitData):
            return _invoke_int4(context, node, d, reference=False)
        if type(d) is FullyConnectedUint8Data:
            return invoke_uint8(context, node, d)
        if type(d) is FullyConnectedInt16Data:
            return invoke_int16(context, node, d)
        if type(d) is FullyConnectedInt8Data:
            if d.weights_t is None:
                return self.invoke_reference(context, node, d)
            if d.impl.startswith("vnni"):
                _vnni.conv(t[node.inputs[0]].reshape(d.batch, 1, 1, d.depth), d.weights_t, d.bias_folded,
                           d.output_multiplier, d.output_shift, d.output_zero_point, d.output_activation_min,
                           d.output_activation_max, d.half_up, t[node.outputs[0]].reshape(d.batch, d.units),
                           (1, 1, 1, 1, 1, 1, 1, 1, 0, 0, d.input_zero_point + 128), context.num_threads)
                return
            np.copyto(d.cols, t[node.inputs[0]].reshape(d.batch, d.depth), casting="unsafe")
            np.matmul(d.cols, d.weights_t, out=d.acc)
            requantize.requantize_rows_jit(d.acc, d.bias_folded, d.output_multiplier, d.output_shift, d.output_zero_point,
                                      d.output_activation_min, d.output_activation_max,
                                      t[node.outputs[0]].reshape(d.batch, d.units), d.half_up)
            return
        out2d = t[node.outputs[0]].reshape(d.batch, d.units)
        wt = d.weights_t if d.weights_t is not None else t[node.inputs[1]].T
        b_t = node.input(2)
        with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
            np.matmul(t[node.inputs[0]].reshape(d.batch, d.depth), wt, out=out2d)
            if d.bias is not None:
                out2d += d.bias
            elif b_t >= 0:
                out2d += t[b_t]
        apply_activation(out2d, d.output_activation_min, d.output_activation_max)

    def invoke_reference(self, context, node, d):
        t = context.tensors
        b_t = node.input(2)
        if type(d) in (FullyConnectedInt16WeightsData, FullyConnectedSparseData):
            return invoke_v7_v8(context, node, d, reference=True)
        if type(d) in (FullyConnectedUint8Data, FullyConnectedHybridData):
            return invoke_reference_uint8_or_hybrid(context, node, d)
        if type(d) in (_fc_int4.FullyConnectedHybrid4BitData, _fc_int4.FullyConnectedBlockwise4BitData):
            return _invoke_int4(context, node, d, reference=True)
        if type(d) is FullyConnectedInt16Data:
            y = reference_int16(t[node.inputs[0]], t[node.inputs[1]], t[b_t] if b_t >= 0 else None, d)
            t[node.outputs[0]][...] = y.reshape(d.output_shape)
            return
        if type(d) is FullyConnectedInt8Data:
            y = reference_int8(t[node.inputs[0]], t[node.inputs[1]], t[b_t] if b_t >= 0 else None, d)
            t[node.outputs[0]][...] = y.reshape(d.output_shape)
            return
        y = reference(t[node.inputs[0]], t[node.inputs[1]], t[b_t] if b_t >= 0 else None,
                      (d.output_activation_min, d.output_activation_max))
        t[node.outputs[0]][...] = y.reshape(d.output_shape)


# ----------------------------------------------------------------------------------------------
# uint8 / hybrid
#
# uint8 (version 1; 5 and 6 as for float): the int8 arithmetic with the weights' zero point
# (TFLite's uint8 weights are asymmetric), the legacy per-tensor multiplier
# (:func:`workbench.interpreter.quant.legacy_conv_multiplier`: float32 product of the scales) and
# outputs clamped to [0, 255].  litert runs it through ruy: ties of the final rounding go up
# (``rounding = "up"``), as for int8.  Per-channel uint8 weights, an int16 output and the
# SHUFFLED4x16INT8 weights format (version 2) are refused.
#
# hybrid (float32 input and output, int8 weights; version 3, 9 with asymmetric_quantize_inputs, 12
# with per-channel weights; 5 / 6 as for float): every input row is quantized at run time
# (:func:`workbench.interpreter.requantize.quantize_rows_jit`), acc = q·Wᵀ in int32, minus
# input_offsets[b]·row_sums when the inputs are asymmetric, then in float32
# output = bias + float(acc) · float32(scaling_factors[b] · filter_scale[u]), then the activation
# (``ApplyActivationToVector``; no clamp for NONE).  An input that is entirely zero skips all of it:
# the output is the bias (TFLite's ``IsZeroVector`` shortcut).  With symmetric rows TFLite passes its
# input_offsets buffer without filling it (BatchQuantizeFloats writes only asymmetric offsets); the
# workbench takes those offsets as 0, which is what they are meant to be.

U8 = np.dtype(np.uint8)


def _fc_geometry(context, node, p):
    """(batch, units, depth, keep_num_dims, output shape) with the checks of the float path."""
    x_t, w_t, b_t = node.input(0), node.input(1), node.input(2)
    wshape = context.shape(w_t)
    if len(wshape) != 2:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): weights of shape {list(wshape)}")
    units, k = wshape
    check_bias(node, context, b_t, units)
    xshape = context.shape(x_t)
    total = math.prod(xshape)
    if k == 0 or total % k:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): input {list(xshape)} is not a whole "
                                 f"number of rows of {k}")
    batch = total // k
    keep = bool(p.get("keep_num_dims", False))
    if keep:
        if xshape[-1] != k:
            raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): keep_num_dims needs the last input "
                                     f"dim to be {k}")
        out = tuple(xshape[:-1]) + (units,)
    else:
        out = (batch, units)
    return batch, units, k, keep, out


def _matrix_activation(node, code) -> None:
    if code not in (0, 1, 2, 3):
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): fused activation {activation_name(code)}; "
                                 f"this kernel handles NONE, RELU, RELU_N1_TO_1 and RELU6")


@opdata
class FullyConnectedUint8Data(OpData):
    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple
    activation: str
    input_scale: float
    input_zero_point: int
    filter_scale: float
    filter_zero_point: int
    output_scale: float
    output_zero_point: int
    effective_scale: float        # float32(input_scale · filter_scale) / output_scale (TFLite's legacy recipe)
    output_multiplier: int
    output_shift: int
    output_activation_min: int
    output_activation_max: int
    impl: str = "blas"
    weights_t: object = None      # float [K, units]: (W − filter_zero_point)ᵀ, exact
    bias_folded: object = None    # int64 [units]: bias − input_zero_point·Σ(W − filter_zero_point)
    cols: object = None           # scratch: the uint8 input as float [batch, K]
    acc: object = None            # scratch: float [batch, units]
    rounding: str = "up"          # ruy on x86: ties of the final rounding shift go up
    multipliers: object = dataclasses.field(default=None, repr=False)   # int64 [units] (one value repeated)
    shifts: object = dataclasses.field(default=None, repr=False)        # int64 [units]

    @property
    def half_up(self) -> bool:
        return self.rounding == "up"


def reference_uint8(x, w, b, d):
    k = w.shape[1]
    acc = (x.reshape(-1, k).astype(np.int64) - d.input_zero_point) @ (w.astype(np.int64) - d.filter_zero_point).T
    if b is not None:
        acc = acc + b.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, d.half_up)
    return np.clip(v + d.output_zero_point, d.output_activation_min, d.output_activation_max).astype(np.uint8)


def prepare_uint8(context, node, p):
    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, w_t, (U8,), "weights")
    context.expect_dtype(node, y_t, (U8,), "output (uint8 input with an int16 output, the LSTM format, is "
                                           "not implemented)")
    if p.get("weights_format", 0) != 0:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): the SHUFFLED4x16INT8 weights format "
                                 f"(version 2: uint8 in, int16 out, a second workspace output) is not implemented")
    batch, units, k, keep, out = _fc_geometry(context, node, p)
    code = p.get("fused_activation_function", 0)
    _matrix_activation(node, code)
    in_s, in_zp, w_s, w_zp, out_s, out_zp, real, m, s = quant.uint8_matrix_scales(node, context, x_t, w_t, b_t, y_t)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp, 0, 255)
    context.set_output(y_t, out, U8)
    w = context.value(w_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(units, np.int32)
    wt = folded = cols = acc = None
    impl = "reference"
    if w is not None and bias is not None:
        wm = w.astype(np.int64) - w_zp                              # [units, K]
        fdt = quant.exact_float_dtype(float(np.abs(wm).sum(axis=1).max(initial=0)), input_abs_max=255)
        wt = np.ascontiguousarray(wm.T, fdt)
        folded = bias.astype(np.int64) - in_zp * wm.sum(axis=1)
        cols = np.empty((batch, k), fdt)
        acc = np.empty((batch, units), fdt)
        impl = f"blas({fdt.name}, exact)"
    return FullyConnectedUint8Data(batch, units, k, keep, out, activation_name(code), in_s, in_zp, w_s, w_zp, out_s,
                                   out_zp, real, m, s, lo, hi, impl, wt, folded, cols, acc, "up",
                                   np.full(units, m, np.int64), np.full(units, s, np.int64))


def invoke_uint8(context, node, d) -> None:
    t = context.tensors
    if d.weights_t is None:
        b_t = node.input(2)
        y = reference_uint8(t[node.inputs[0]], t[node.inputs[1]], t[b_t] if b_t >= 0 else None, d)
        t[node.outputs[0]][...] = y.reshape(d.output_shape)
        return
    np.copyto(d.cols, t[node.inputs[0]].reshape(d.batch, d.depth), casting="unsafe")
    np.matmul(d.cols, d.weights_t, out=d.acc)
    requantize.requantize_rows_jit(d.acc, d.bias_folded, d.multipliers, d.shifts, d.output_zero_point,
                              d.output_activation_min, d.output_activation_max,
                              t[node.outputs[0]].reshape(d.batch, d.units), d.half_up)


@opdata
class FullyConnectedHybridData(OpData):
    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple
    activation: str
    asymmetric_quantize_inputs: bool   # per-row zero points (input_offsets) or symmetric rows
    per_channel: bool
    filter_scale: object               # float32 [1] or [units]
    row_sums: object                   # int64 [units]: Σ W[u] as TFLite's SSE routine adds it (int16 lanes)
    output_activation_min: float       # what the activation clamps to (NONE: nothing)
    output_activation_max: float
    impl: str
    weights_t: object = None           # float [K, units]: Wᵀ, exact for int8 × int8 products
    bias: object = None                # float32 [units] or None
    input_quantized: object = None     # scratch int8 [batch, K]: the last input, quantized row by row
    scaling_factors: object = None     # scratch float32 [batch]: each row's scale
    input_offsets: object = None       # scratch int32 [batch]: each row's zero point (0 when symmetric)
    product_scales: object = None      # scratch float32 [batch, units]: float32(scaling_factors[b]·filter_scale[u])
    cols: object = None                # scratch float [batch, K]
    acc: object = None                 # scratch float [batch, units]
    activation_code: int = dataclasses.field(default=0, repr=False)


def hybrid_fc_output(acc, offsets, row_sums, scaling_factors, filter_scale, bias, code, product_out=None):
    """The float tail shared by the fast and the reference path (see the section comment).

    ``acc`` holds the exact int32 dot products [batch, units].  Returns float32 [batch, units].
    """
    acc = np.asarray(acc).astype(np.int64)
    if offsets is not None and np.any(offsets):
        acc = quant.wrap_int32(acc - offsets.astype(np.int64)[:, None] * row_sums[None, :])
    scales = (scaling_factors[:, None] * np.asarray(filter_scale, np.float32)[None, :]).astype(np.float32)
    if product_out is not None:
        product_out[...] = scales
    prod = (acc.astype(np.float32) * scales).astype(np.float32)
    base = np.zeros(prod.shape, np.float32) if bias is None else np.broadcast_to(np.asarray(bias, np.float32), prod.shape)
    return quant.apply_float_activation((base + prod).astype(np.float32), code)


def _hybrid_zero_input(bias, shape, code):
    base = np.zeros(shape, np.float32) if bias is None else np.broadcast_to(np.asarray(bias, np.float32), shape)
    return quant.apply_float_activation(np.array(base, np.float32), code)


def reference_hybrid(x, w, b, d):
    x2 = np.asarray(x, np.float32).reshape(-1, w.shape[1])
    if not np.any(x2 != 0):
        return _hybrid_zero_input(b, (x2.shape[0], w.shape[0]), d.activation_code)
    if d.asymmetric_quantize_inputs:
        q, sf, zp = quant.asymmetric_quantize_rows(x2)
    else:
        q, sf = quant.symmetric_quantize_rows(x2)
        zp = np.zeros(len(sf), np.int32)
    acc = q.astype(np.int64) @ w.astype(np.int64).T
    return hybrid_fc_output(acc, zp, quant.sse_row_sums(w), sf, d.filter_scale, b, d.activation_code)


def prepare_hybrid(context, node, p):
    w_t, b_t, y_t = node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, y_t, (F32,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    if p.get("weights_format", 0) != 0:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): shuffled weights with a float input")
    batch, units, k, keep, out = _fc_geometry(context, node, p)
    code = p.get("fused_activation_function", 0)
    _matrix_activation(node, code)
    w = context.value(w_t)
    if w is None:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): hybrid weights must be a constant tensor")
    bias = context.value(b_t) if b_t >= 0 else None
    if b_t >= 0 and bias is None:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): a hybrid bias must be a constant tensor")
    blockwise = _fc_int4.blockwise_details(context, w_t)
    four_bit = context.packed_bits(w_t) == 4 and _fc_int4.uses_4bit_kernel(batch, units, k)
    if blockwise is not None or four_bit:       # int4 weights: litert's 4-bit kernels (_fc_int4.py)
        context.set_output(y_t, out, F32)
        geometry = (batch, units, k, keep, out)
        if blockwise is not None:
            return _fc_int4.prepare_blockwise(context, node, geometry, w, bias, code, blockwise, four_bit)
        return _fc_int4.prepare_4bit(context, node, geometry, w, bias, code)
    fs, per_channel = quant.hybrid_filter_scales(node, context, w_t, units, 0)
    asym = bool(p.get("asymmetric_quantize_inputs", False))
    context.set_output(y_t, out, F32)
    w64 = w.astype(np.int64)
    fdt = quant.exact_float_dtype(float(np.abs(w64).sum(axis=1).max(initial=0)), input_abs_max=128)
    lo, hi = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}[int(code)]
    packed = context.packed_bits(w_t)
    return FullyConnectedHybridData(
        batch, units, k, keep, out, activation_name(code), asym, per_channel, fs, quant.sse_row_sums(w), lo, hi,
        (f"int{packed} weights (unpacked to int8), " if packed else "") + f"quantize(numba)+blas({fdt.name}, exact)", np.ascontiguousarray(w64.T, fdt),
        None if bias is None else np.ascontiguousarray(bias, np.float32), np.zeros((batch, k), np.int8),
        np.ones(batch, np.float32), np.zeros(batch, np.int32), np.zeros((batch, units), np.float32),
        np.empty((batch, k), fdt), np.empty((batch, units), fdt), int(code))


def invoke_hybrid(context, node, d) -> None:
    t = context.tensors
    x2 = t[node.inputs[0]].reshape(d.batch, d.depth)
    out2d = t[node.outputs[0]].reshape(d.batch, d.units)
    if not x2.any():
        out2d[...] = _hybrid_zero_input(d.bias, out2d.shape, d.activation_code)
        return
    requantize.quantize_rows_jit(x2, d.asymmetric_quantize_inputs, d.input_quantized, d.scaling_factors, d.input_offsets)
    np.copyto(d.cols, d.input_quantized, casting="unsafe")
    np.matmul(d.cols, d.weights_t, out=d.acc)
    out2d[...] = hybrid_fc_output(d.acc, d.input_offsets, d.row_sums, d.scaling_factors, d.filter_scale, d.bias,
                                  d.activation_code, d.product_scales)


def _invoke_int4(context, node, d, reference: bool) -> None:
    """int4 weights through litert's 4-bit kernels (see ``_fc_int4.py``)."""
    t = context.tensors
    x, out = t[node.inputs[0]], t[node.outputs[0]]
    if type(d) is _fc_int4.FullyConnectedBlockwise4BitData:
        fn = _fc_int4.reference_blockwise if reference else _fc_int4.blockwise_output
        out.reshape(d.batch, d.units)[...] = fn(x, t[node.inputs[1]], d)
    elif reference:
        out.reshape(d.batch, d.units)[...] = _fc_int4.reference_4bit(x, d)
    else:
        _fc_int4.invoke_4bit(x, d, out)


def prepare_uint8_or_hybrid(context, node, p):
    """The dtype branch of prepare: a uint8 input, or a float input with int8 weights (hybrid)."""
    if context.dtype(node.input(0)) == U8:
        return prepare_uint8(context, node, p)
    return prepare_hybrid(context, node, p)


def invoke_reference_uint8_or_hybrid(context, node, d) -> None:
    t = context.tensors
    b_t = node.input(2)
    b = t[b_t] if b_t >= 0 else None
    fn = reference_uint8 if type(d) is FullyConnectedUint8Data else reference_hybrid
    t[node.outputs[0]][...] = fn(t[node.inputs[0]], t[node.inputs[1]], b, d).reshape(d.output_shape)


# ----------------------------------------------------------------------------------------------
# int16 weights (version 7) and sparse weights (version 8): a separate branch of prepare / invoke
#
# int16 × int16 → int16 (version 7; litert's FullyConnectedInt16FilterInt16, a plain loop):
# acc = Σ (w − w_zp)·x in int64, + bias (int32, or int64 when quantized_bias_type is INT64), then
# the int64 MultiplyByQuantizedMultiplier (a 16-bit multiplier, ONE rounding, ties up), + 0,
# clamped.  The per-tensor multiplier comes from the float32 product input_scale·weight_scale
# (GetQuantizedConvolutionMultipler), per-channel ones from double products; per-channel weights
# ignore their zero points.  Input and output zero points must be 0.  An int64 bias without
# quantized_bias_type=INT64 would be read by TFLite as int32 values (undefined), so it is refused.
# The fast path is one float64 BLAS product when its sums are exact, the reference int64 numpy.
#
# sparse weights (version 8; a constant weight tensor with SparsityParameters: dense rows, CSR
# column blocks): the weights are densified once in prepare (``densify.dense_positions``).
#   float32 — litert takes "random sparse" (two levels) or 1x4 blocks (a third, dense level of
#     size 4): out = Σ w·x over the stored weights of each row in float32, + bias, clamp.  The
#     fast path is one BLAS product with the dense matrix (the same numbers up to the float32
#     summation order), the reference TFLite's loops in their order (bit-exact with litert);
#   int8 — only 1x16 blocks with symmetric weights: acc = Σ w·(x − input_zero_point) + bias in
#     int32, then the per-tensor or per-channel requantization of the dense int8 path with the
#     double rounding of TFLite's reference code (ties away from zero), + output zero point, clamp.
#   A hybrid FC (float input, int8 weights) and int16 inputs with sparse weights are refused.

DIM_DENSE, DIM_CSR = 0, 1


@opdata
class FullyConnectedInt16WeightsData(OpData):
    """int16 input, int16 weights, int16 output (version 7)."""

    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple
    activation: str
    input_scale: float
    filter_scale: object          # float32 [1] or [units]
    filter_zero_point: int        # per-tensor weights only
    output_scale: float
    output_multiplier: object     # int64 [units]
    output_shift: object          # int64 [units]
    output_activation_min: int
    output_activation_max: int
    bias_type: str                # "int32" | "int64" | "none"
    quantized_bias_type: str      # "unset" | "int32" | "int64"
    per_channel: bool
    impl: str = "int64"
    weights_t: object = dataclasses.field(default=None, repr=False)   # float64 [K, units], exact
    bias: object = dataclasses.field(default=None, repr=False)        # int64 [units]


@opdata
class FullyConnectedSparseData(OpData):
    """Sparse constant weights (version 8), float32 or int8."""

    batch: int
    units: int
    depth: int
    keep_num_dims: bool
    output_shape: tuple
    activation: str
    sparse_format: str            # "random sparse" | "1x4 blocks" | "1x16 blocks"
    stored_weights: int           # how many weights the file stores (zeros inside blocks included)
    output_activation_min: object
    output_activation_max: object
    input_zero_point: int = 0
    output_zero_point: int = 0
    output_multiplier: object = None   # int8: int64 [units]
    output_shift: object = None
    impl: str = "blas"
    dense_weights: object = dataclasses.field(default=None, repr=False)   # [units, K]
    rows: object = dataclasses.field(default=None, repr=False)            # per unit: (columns, values)
    bias: object = dataclasses.field(default=None, repr=False)


def prepare_v7_v8(context, node, p):
    """The branch of prepare for int16 weights (v7) and sparse weights (v8)."""
    if context.tensor_meta(node.input(1)).sparsity is not None:
        return _prepare_sparse(context, node, p)
    return _prepare_int16_weights(context, node, p)


def _prepare_int16_weights(context, node, p):
    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, x_t, (I16,), "input (int16 weights need int16 activations)")
    context.expect_dtype(node, y_t, (I16,), "output")
    if p.get("weights_format", 0) != 0:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): weights format {p['weights_format']} with "
                                 f"int16 weights; TFLite's shuffled format takes uint8 only")
    batch, units, k, keep, out = _fc_geometry(context, node, p)
    code = p.get("fused_activation_function", 0)
    _matrix_activation(node, code)
    bias_type, option = quant.bias_type_16x8(node, context, b_t, p)
    if bias_type == "int64" and option != "int64":
        raise KernelError(f"FULLY_CONNECTED (node {node.index}): int64 bias with quantized_bias_type unset: TFLite's "
                          f"int16-weights kernel then reads the bias as int32 values, so its output is undefined; "
                          f"set quantized_bias_type=INT64")
    in_s, out_s = quant.symmetric_int16_scales(node, context, x_t, y_t)
    f_scales, f_zps, qdim = quant.quant_params(context, w_t)
    per_channel = len(f_scales) > 1
    if per_channel and (len(f_scales) != units or qdim != 0):
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): {len(f_scales)} weight scales on axis {qdim} "
                                 f"for {units} units (per-channel weights need one scale per unit, axis 0)")
    if per_channel:
        _, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, units)
        w_zp = 0
    else:
        real = float(np.float64(np.float32(in_s) * np.float32(f_scales[0])) / np.float64(np.float32(out_s)))
        m, s = quant.quantize_multiplier(real)
        mult, shift = np.full(units, m, np.int64), np.full(units, s, np.int64)
        w_zp = int(f_zps[0])
    lo, hi = quant.activation_range_quantized(code, out_s, 0, quant.INT16_MIN, quant.INT16_MAX)
    context.set_output(y_t, out, I16)
    w = context.value(w_t)
    bias = context.value(b_t) if b_t >= 0 else np.zeros(units, np.int64)
    wt, impl = None, "int64"
    if w is not None:
        wm = w.astype(np.int64) - w_zp
        fdt = quant.exact_matmul_dtype(-quant.INT16_MIN, float(np.abs(wm).sum(axis=1).max(initial=0)))
        if fdt is not None:
            wt, impl = np.ascontiguousarray(wm.T, fdt), f"blas({np.dtype(fdt).name}, exact)"
    return FullyConnectedInt16WeightsData(
        batch, units, k, keep, out, activation_name(code), in_s, np.asarray(f_scales, np.float32), w_zp, out_s,
        mult, shift, lo, hi, bias_type, option, per_channel, impl, wt,
        None if bias is None else np.asarray(bias).astype(np.int64))


def _int16_weights_sums(x, w, d, exact_blas: bool):
    """Σ (w − w_zp)·x per [batch, unit]: int64 numpy, or the exact float BLAS product."""
    x2 = x.reshape(d.batch, d.depth)
    if exact_blas and d.weights_t is not None:
        return x2.astype(d.weights_t.dtype) @ d.weights_t
    return x2.astype(np.int64) @ (w.astype(np.int64) - d.filter_zero_point).T


def _sparse_format(node, sparsity, dtype) -> str:
    levels = tuple(sparsity.dim_metadata or ())
    ok = len(levels) in (2, 3) and int(levels[0].format) == DIM_DENSE and int(levels[1].format) == DIM_CSR
    if ok and len(levels) == 2 and dtype == F32:
        return "random sparse"
    if ok and len(levels) == 3 and int(levels[2].format) == DIM_DENSE:
        size = int(levels[2].dense_size)
        if (dtype == F32 and size == 4) or (dtype == I8 and size == 16):
            return f"1x{size} blocks"
    what = ", ".join(("dense" if int(m.format) == DIM_DENSE else "csr") + f"({int(m.dense_size)})" for m in levels)
    raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): sparse {dtype} weights stored as [{what}]; "
                             f"TFLite's kernel takes dense rows with CSR columns: float32 unblocked or in 1x4 "
                             f"blocks, int8 in 1x16 blocks")


def _prepare_sparse(context, node, p):
    from .densify import dense_positions

    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    wdt, xdt = context.dtype(w_t), context.dtype(x_t)
    if not ((xdt == F32 and wdt == F32) or (xdt == I8 and wdt == I8)):
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): sparse {wdt} weights with a {xdt} input; "
                                 f"the workbench implements sparse float32 and int8 FULLY_CONNECTED (a sparse "
                                 f"hybrid or int16 one is not implemented)")
    values = context.value(w_t)
    if values is None:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): sparse weights must be a constant")
    if p.get("weights_format", 0) != 0:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): sparse weights in weights format "
                                 f"{p['weights_format']}")
    sparsity = context.tensor_meta(w_t).sparsity
    fmt = _sparse_format(node, sparsity, wdt)
    batch, units, k, keep, out = _fc_geometry(context, node, p)
    flat, pos, _ = dense_positions((units, k), sparsity)
    if len(pos) and pos.max() >= len(values):
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): the sparsity indexes weight {pos.max()} of "
                                 f"{len(values)} stored")
    dense = np.zeros(units * k, wdt)
    dense[flat] = values[pos]
    dense = dense.reshape(units, k)
    order = np.argsort(pos, kind="stable")         # the stored order, row by row
    unit_of, col_of = np.divmod(flat[order], k)
    rows = tuple((col_of[unit_of == u], values[pos[order]][unit_of == u]) for u in range(units))
    code = p.get("fused_activation_function", 0)
    _matrix_activation(node, code)
    bias = context.value(b_t) if b_t >= 0 else None
    common = dict(batch=batch, units=units, depth=k, keep_num_dims=keep, output_shape=out,
                  activation=activation_name(code), sparse_format=fmt, stored_weights=len(values))
    if wdt == F32:
        if b_t >= 0:
            context.expect_dtype(node, b_t, (F32,), "bias")
        lo, hi = activation_range(code)
        context.set_output(y_t, out, F32)
        return FullyConnectedSparseData(**common, output_activation_min=lo, output_activation_max=hi,
                                        dense_weights=np.ascontiguousarray(dense.T), rows=rows,
                                        bias=None if bias is None else np.asarray(bias, np.float32))
    context.expect_dtype(node, y_t, (I8,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.dtype(np.int32),), "bias")
    in_s, in_zp = quant.tensor_scale_zp(context, x_t)
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    f_scales, f_zps, _ = quant.quant_params(context, w_t)
    if np.any(f_zps != 0):
        raise KernelError(f"FULLY_CONNECTED (node {node.index}): sparse int8 weights with zero points "
                          f"{f_zps.tolist()[:4]}; TFLite's sparse kernel takes symmetric weights only")
    if len(f_scales) > 1:
        _, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, units)
    else:
        real = float(np.float64(np.float32(in_s) * np.float32(f_scales[0])) / np.float64(np.float32(out_s)))
        m, s = quant.quantize_multiplier(real)
        mult, shift = np.full(units, m, np.int64), np.full(units, s, np.int64)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp)
    context.set_output(y_t, out, I8)
    return FullyConnectedSparseData(**common, output_activation_min=lo, output_activation_max=hi,
                                    input_zero_point=in_zp, output_zero_point=out_zp, output_multiplier=mult,
                                    output_shift=shift, impl="int64", dense_weights=dense.astype(np.int64).T,
                                    rows=rows, bias=None if bias is None else np.asarray(bias).astype(np.int64))


def _sparse_float_reference(x2, d):
    """TFLite's sparse float loops, in their order: per row the stored weights one float32 add at a
    time — into one sum (random sparse) or into four lane sums, one per position in the block,
    added ((l0 + l1) + l2) + l3 at the end (1x4 blocks, what litert's x86 build computes)."""
    out = np.zeros((d.batch, d.units), np.float32)
    lanes = 4 if d.sparse_format == "1x4 blocks" else 1
    for u, (cols, vals) in enumerate(d.rows):
        acc = np.zeros((lanes, d.batch), np.float32)
        for c, v in zip(cols, vals):
            acc[c % lanes] = acc[c % lanes] + np.float32(v) * x2[:, c]
        total = acc[0]
        for lane in acc[1:]:
            total = total + lane
        out[:, u] = total
    if d.bias is not None:
        out = (out + d.bias).astype(np.float32)
    return out


def invoke_v7_v8(context, node, d, reference: bool = False) -> None:
    t = context.tensors
    x = t[node.inputs[0]]
    out2d = t[node.outputs[0]].reshape(d.batch, d.units)
    if type(d) is FullyConnectedInt16WeightsData:
        b_t = node.input(2)
        bias = d.bias if d.bias is not None else (t[b_t].astype(np.int64) if b_t >= 0 else np.zeros(d.units, np.int64))
        acc = _int16_weights_sums(x, t[node.inputs[1]], d, exact_blas=not reference)
        if reference:
            quant.requantize_int64_rows(acc, bias, d.output_multiplier, d.output_shift, 0, d.output_activation_min,
                                        d.output_activation_max, out2d)
        else:
            requantize.requantize_int64_rows_jit(acc, bias, d.output_multiplier, d.output_shift, 0,
                                            d.output_activation_min, d.output_activation_max, out2d)
        return
    x2 = x.reshape(d.batch, d.depth)
    if d.output_multiplier is None:                        # float32
        y = _sparse_float_reference(x2, d) if reference else x2 @ d.dense_weights + (
            d.bias if d.bias is not None else np.float32(0))
        out2d[...] = y
        apply_activation(out2d, d.output_activation_min, d.output_activation_max)
        return
    if reference:
        acc = np.zeros((d.batch, d.units), np.int64)
        xs = x2.astype(np.int64) - d.input_zero_point
        for u, (cols, vals) in enumerate(d.rows):
            acc[:, u] = xs[:, cols] @ vals.astype(np.int64)
    else:
        acc = (x2.astype(np.int64) - d.input_zero_point) @ d.dense_weights
    if d.bias is not None:
        acc = acc + d.bias
    v = quant.multiply_by_quantized_multiplier_array(quant.wrap_int32_array(acc), d.output_multiplier,
                                                     d.output_shift) + d.output_zero_point
    out2d[...] = np.clip(v, d.output_activation_min, d.output_activation_max)
