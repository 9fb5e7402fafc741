"""FULLY_CONNECTED: y = x·Wᵀ + b, W of shape [units, K].

The input is read as [batch, K] with batch = (number of elements) / K.  The output is [batch, units],
or x's leading dims + [units] with ``keep_num_dims`` (version 5).  The bias slot may be -1 or missing
(version 6).  Only the DEFAULT weights format (SHUFFLED4x16INT8, version 2, is refused).

* float32 (version 1): one float32 sum per output (``reference_ops::FullyConnected``), then the
  activation clamp.
* int8 (version 4): acc = Σ (w − filter_zero_point)·(x − input_zero_point) + bias in int32, turned
  into output units by :func:`rescale`, + output_zero_point, clamped to the activation range.
  Per-channel weights (one scale per unit) have zero point 0.  A per-tensor multiplier comes from the
  float32 product input_scale·filter_scale (``GetQuantizedConvolutionMultipler``), a per-channel one
  from double products.
* uint8 (version 1): the same with asymmetric uint8 weights and the per-tensor multiplier.
* 16x8 (int16 input/output, int8 weights; version 11, or the int8 version 4 a converter stamped):
  zero points 0, int64 / int32 / no bias.  ``recipe`` says which kernel TFLite runs (see
  :func:`prepare_int16`); an int32 bias that the reference kernel would read as int64 is refused.
* hybrid (float input, int8 or int4 weights; versions 3, 9, 12): ``_fc_hybrid.py`` and ``_fc_int4.py``.
* int16 weights (version 7) and sparse weights (version 8): ``_fc_int16_or_sparse.py``.

Where TFLite's two builds differ, the variant says which rule runs (:mod:`..variants`):
``float_matmul`` (float32 order), ``fc_rescale`` and ``final_shift`` (int8 / uint8 / 16x8 rescaling),
``fc_4bit_kernel`` and ``fc_sparse_kernels``.  Speed layer: ``workbench/interpreter/fast/fully_connected.py``.
Over 300 lines: four dtypes with their TFLite checks share one prepare (the others are in helpers).
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, kernel, opdata
from . import _fc_hybrid, _fc_int4, _fc_int16_or_sparse
from ._common import F32, I8, I16, U8, activation_name, activation_range, apply_activation
from ._fc_geometry import FullyConnectedGeometry, geometry


@opdata
class FullyConnectedData(FullyConnectedGeometry):
    output_activation_min: float
    output_activation_max: float


@opdata
class FullyConnectedInt8Data(FullyConnectedGeometry):
    input_scale: float
    input_zero_point: int
    filter_scale: object          # float32 [1] or [units]
    filter_zero_point: int
    output_scale: float
    output_zero_point: int
    effective_scale: object       # float64 [units]: double(in_s)·double(w_s[u])/double(out_s)
    output_multiplier: object     # int64 [units]
    output_shift: object          # int64 [units]
    output_activation_min: int
    output_activation_max: int
    per_channel: bool = False


@opdata
class FullyConnectedUint8Data(FullyConnectedGeometry):
    input_scale: float
    input_zero_point: int
    filter_scale: float
    filter_zero_point: int
    output_scale: float
    output_zero_point: int
    effective_scale: float        # float32(input_scale · filter_scale) / output_scale (the legacy recipe)
    output_multiplier: int
    output_shift: int
    output_activation_min: int
    output_activation_max: int


@opdata
class FullyConnectedInt16Data(FullyConnectedGeometry):
    input_scale: float
    input_zero_point: int         # 0 (TFLite refuses others)
    filter_scale: object          # float32 [1] or [units]
    filter_zero_point: int        # per-tensor weights only (TFLite ignores per-channel zero points)
    output_scale: float
    output_zero_point: int        # 0
    effective_scale: object       # float64 [units]: double(in_s)·double(w_s[u])/double(out_s)
    output_multiplier: object     # int64 [units] (per-tensor: from the float32 product in_s·w_s)
    output_shift: object          # int64 [units]
    output_activation_min: int
    output_activation_max: int
    bias_type: str                # "int64" | "int32" | "none"
    quantized_bias_type: str      # the option: "unset" | "int32" | "int64"
    recipe: str                   # "int32": ruy, int32 sums that wrap, MultiplyByQuantizedMultiplier ties up;
                                  # "double": the reference kernel, round(acc · effective_scale) in double
    accumulator: str              # "int32" (wraps) | "int64"
    per_channel: bool = False


# ----------------------------------------------------------------------------------------------
# the arithmetic, one function per type


def fully_connected_float(x, w, b, d, order: str) -> np.ndarray:
    """``reference_ops::FullyConnected``: per output one float32 total, Σ x[k]·w[u, k] one product and
    one add at a time in k order, then total + bias (0 without one), then the activation clamp
    (``order="sequential"``, ``Variant.float_matmul``).  ``"blas"``: the same product as numpy's BLAS
    matmul, which sums in its own blocks (LiteRT's builtin float kernels block differently too)."""
    x2 = x.reshape(d.batch, d.depth)
    with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
        if order == "sequential":
            wt = np.ascontiguousarray(np.asarray(w, np.float32).T)
            total = np.zeros((d.batch, d.units), np.float32)
            for k in range(d.depth):
                total += x2[:, k, None] * wt[k]
            y = total + (np.float32(0) if b is None else b)
        else:
            y = np.matmul(x2, w.T)
            if b is not None:
                y += b
    apply_activation(y, d.output_activation_min, d.output_activation_max)
    return y


def rescale(acc, d, variant, double_scale) -> np.ndarray:
    """int32 sums → output units + output_zero_point, clamped: the step TFLite's builds do differently.

    ``Variant.fc_rescale == "double"`` (``reference_integer_ops::FullyConnected``): (int32)round(acc ·
    double_scale) in double, halves away from zero.  ``"multiplier"`` (ruy):
    MultiplyByQuantizedMultiplier(acc, output_multiplier, output_shift), the last shift's ties by
    ``Variant.final_shift``."""
    lo, hi = d.output_activation_min, d.output_activation_max
    if variant.fc_rescale == "double":
        return quant.scale_by_double(acc, double_scale, d.output_zero_point, lo, hi)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift,
                                                     variant.final_shift == "ties-up")
    return np.clip(v + d.output_zero_point, lo, hi)


def integer_sums(x, w, b, d) -> np.ndarray:
    """Σ (w − filter_zero_point)·(x − input_zero_point) + bias, exact, [batch, units]."""
    acc = (x.reshape(d.batch, d.depth).astype(np.int64) - d.input_zero_point) @ \
        (w.astype(np.int64) - d.filter_zero_point).T
    return acc if b is None else acc + b.astype(np.int64)


def fully_connected_int8(x, w, b, d, variant) -> np.ndarray:
    """``reference_integer_ops::FullyConnected`` / ``FullyConnectedPerChannel`` (int8): the sums, then
    :func:`rescale` with the per-unit effective_scale."""
    return rescale(integer_sums(x, w, b, d), d, variant, d.effective_scale).astype(np.int8)


def fully_connected_uint8(x, w, b, d, variant) -> np.ndarray:
    """``reference_ops::FullyConnected`` (uint8): the sums, then :func:`rescale`; the reference kernel
    takes double(input_scale)·double(filter_scale)/double(output_scale), ruy the legacy multiplier."""
    scale = float(np.float64(np.float32(d.input_scale)) * np.float64(np.float32(d.filter_scale))
                  / np.float64(np.float32(d.output_scale)))
    return rescale(integer_sums(x, w, b, d), d, variant, scale).astype(np.uint8)


def fully_connected_int16(x, w, b, d) -> np.ndarray:
    """16x8 by ``d.recipe``: ``"double"`` — ``reference_integer_ops::FullyConnected(PerChannel)`` with
    int64 (or int32, wrapping) sums and (int32)round(acc · effective_scale) in double (a value beyond
    int32 becomes INT32_MIN, as x86 converts it); ``"int32"`` — ruy's int32 sums, then
    MultiplyByQuantizedMultiplier with ties up."""
    acc = integer_sums(x, w, None, d)
    bias = np.zeros(d.units, np.int64) if b is None else b.astype(np.int64)
    out = np.empty((d.batch, d.units), np.int16)
    if d.recipe == "int32":
        quant.requantize_int32_rows(acc, bias, d.output_multiplier, d.output_shift, 0, d.output_activation_min,
                                    d.output_activation_max, out, d.units)
        return out
    v = acc + bias
    if d.accumulator == "int32":
        v = quant.wrap_int32_array(v)
    out[...] = quant.scale_by_double(v, d.effective_scale, 0, d.output_activation_min, d.output_activation_max)
    return out


# ----------------------------------------------------------------------------------------------
# prepare


def matrix_activation(node, code) -> None:
    """The quantized, hybrid and sparse kernels apply NONE, RELU, RELU_N1_TO_1 and RELU6 only."""
    if code not in (0, 1, 2, 3):
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): fused activation {activation_name(code)}; "
                                 f"this kernel handles NONE, RELU, RELU_N1_TO_1 and RELU6")


def per_tensor_multiplier(in_s, w_s, out_s, units):
    """``GetQuantizedConvolutionMultipler``: float32(in_s·w_s) / out_s in double, per unit."""
    _, m, s = quant.legacy_conv_multiplier(in_s, w_s, out_s)
    return np.full(units, m, np.int64), np.full(units, s, np.int64)


def prepare_int8(context, node, p, geo):
    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    units = geo.units
    context.expect_dtype(node, w_t, (I8,), "weights")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.int32,), "bias")
    in_s, in_zp = quant.tensor_scale_zp(context, x_t)
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    f_scales, f_zps, _ = quant.quant_params(context, w_t)
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, units)
    per_channel = len(f_scales) > 1
    if not per_channel:
        mult, shift = per_tensor_multiplier(in_s, f_scales[0], out_s, units)
    code = p.get("fused_activation_function", 0)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp)
    context.set_output(y_t, geo.output_shape, I8)
    return FullyConnectedInt8Data(**geo._asdict(), activation=activation_name(code), input_scale=in_s,
                                  input_zero_point=in_zp, filter_scale=f_scales, filter_zero_point=int(f_zps[0]),
                                  output_scale=out_s, output_zero_point=out_zp, effective_scale=eff,
                                  output_multiplier=mult, output_shift=shift, output_activation_min=lo,
                                  output_activation_max=hi, per_channel=per_channel)


def prepare_uint8(context, node, p, geo):
    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    context.expect_dtype(node, w_t, (U8,), "weights")
    context.expect_dtype(node, y_t, (U8,), "output (uint8 input with an int16 output, the LSTM format, is "
                                           "not implemented)")
    code = p.get("fused_activation_function", 0)
    in_s, in_zp, w_s, w_zp, out_s, out_zp, real, m, s = quant.uint8_matrix_scales(node, context, x_t, w_t, b_t, y_t)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp, 0, 255)
    context.set_output(y_t, geo.output_shape, U8)
    return FullyConnectedUint8Data(**geo._asdict(), activation=activation_name(code), input_scale=in_s,
                                   input_zero_point=in_zp, filter_scale=w_s, filter_zero_point=w_zp,
                                   output_scale=out_s, output_zero_point=out_zp, effective_scale=real,
                                   output_multiplier=m, output_shift=s, output_activation_min=lo,
                                   output_activation_max=hi)


def prepare_int16(context, node, p, geo):
    """16x8.  litert-x86 (``Variant.fc_rescale == "multiplier"``) runs ruy — recipe "int32" — for an
    int32 bias or none, quantized_bias_type not INT64 and weight zero point 0, else the reference
    kernel ("double").  The reference build always runs the reference kernel, whose sums are int32
    with quantized_bias_type INT32 and int64 otherwise (then an int32 bias would be read as int64)."""
    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    units = geo.units
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
    eff, mult, shift = quant.per_channel_multipliers(in_s, f_scales, out_s, units)
    if not per_channel:
        b_scales = quant.quant_params(context, b_t)[0] if b_t >= 0 else ()
        if len(b_scales):
            product = float(np.float32(in_s)) * float(np.float32(f_scales[0]))
            if not abs(product - float(b_scales[0])) / float(np.float32(out_s)) <= 0.02:
                raise KernelError(f"FULLY_CONNECTED (node {node.index}): bias scale {float(b_scales[0]):.6g} is not "
                                  f"input_scale·weight_scale ({product:.6g}); TFLite requires |difference| / "
                                  f"output_scale <= 0.02")
        mult, shift = per_tensor_multiplier(in_s, f_scales[0], out_s, units)
    ruy = context.variant.fc_rescale == "multiplier" and w_zp == 0 and bias_type != "int64" and option != "int64"
    if ruy:
        recipe, accumulator = "int32", "int32"
    else:
        recipe, accumulator = "double", ("int32" if option == "int32" else "int64")
        if accumulator == "int64" and bias_type == "int32":
            raise KernelError(f"FULLY_CONNECTED (node {node.index}): int32 bias, quantized_bias_type unset and weight "
                              f"zero point {w_zp}: TFLite's reference 16x8 kernel then reads the bias as int64 (past "
                              f"its end), so its output is undefined; set quantized_bias_type=INT32")
    lo, hi = quant.activation_range_quantized(code, out_s, 0, quant.INT16_MIN, quant.INT16_MAX)
    context.set_output(y_t, geo.output_shape, I16)
    return FullyConnectedInt16Data(**geo._asdict(), activation=activation_name(code), input_scale=in_s,
                                   input_zero_point=0, filter_scale=f_scales, filter_zero_point=w_zp,
                                   output_scale=out_s, output_zero_point=0, effective_scale=eff,
                                   output_multiplier=mult, output_shift=shift, output_activation_min=lo,
                                   output_activation_max=hi, bias_type=bias_type, quantized_bias_type=option,
                                   recipe=recipe, accumulator=accumulator, per_channel=per_channel)


def prepare_float(context, node, p, geo):
    w_t, b_t = node.input(1), node.input(2)
    context.expect_dtype(node, w_t, (F32,), "weights")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    code = p.get("fused_activation_function", 0)
    lo, hi = activation_range(code)
    context.set_output(node.outputs[0], geo.output_shape, F32)
    return FullyConnectedData(**geo._asdict(), activation=activation_name(code), output_activation_min=lo,
                              output_activation_max=hi)


FC16W, SPARSE = _fc_int16_or_sparse.FullyConnectedInt16WeightsData, _fc_int16_or_sparse.FullyConnectedSparseData

# OpData class → its teaching routine, run as (x, w, b, d, context, w_t) → y: the variant's rule and the
# weights' sparsity are read from the context here, so each routine takes only what it uses.
REFERENCE = {
    FullyConnectedData: lambda x, w, b, d, ctx, w_t: fully_connected_float(x, w, b, d, ctx.variant.float_matmul),
    FullyConnectedInt8Data: lambda x, w, b, d, ctx, w_t: fully_connected_int8(x, w, b, d, ctx.variant),
    FullyConnectedUint8Data: lambda x, w, b, d, ctx, w_t: fully_connected_uint8(x, w, b, d, ctx.variant),
    FullyConnectedInt16Data: lambda x, w, b, d, ctx, w_t: fully_connected_int16(x, w, b, d),
    _fc_hybrid.FullyConnectedHybridData: lambda x, w, b, d, ctx, w_t: _fc_hybrid.fully_connected_hybrid(x, w, b, d),
    _fc_int4.FullyConnectedHybrid4BitData: lambda x, w, b, d, ctx, w_t: _fc_int4.fully_connected_4bit(x, w, b, d),
    _fc_int4.FullyConnectedBlockwise4BitData:
        lambda x, w, b, d, ctx, w_t: _fc_int4.fully_connected_blockwise(x, w, b, d),
    FC16W: lambda x, w, b, d, ctx, w_t: _fc_int16_or_sparse.fully_connected_int16_weights(x, w, b, d),
    SPARSE: lambda x, w, b, d, ctx, w_t: _fc_int16_or_sparse.fully_connected_sparse(
        x, w, b, d, ctx.tensor_meta(w_t).sparsity, ctx.variant),
}


@kernel(BuiltinOperator.FULLY_CONNECTED, versions=(1, 3, 4, 5, 6, 7, 8, 9, 11, 12))
class FullyConnected(Kernel):
    name = "fully_connected"

    def prepare(self, context, node):
        p = node.params
        x_t, w_t = node.input(0), node.input(1)
        xdt, wdt = context.dtype(x_t), context.dtype(w_t)
        if xdt not in (I8, I16, U8):
            context.expect_dtype(node, x_t, (F32,), "input")
        if p.get("weights_format", 0) != 0:
            raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): weights format {p['weights_format']} "
                                     f"(SHUFFLED4x16INT8, version 2: uint8 in, int16 out, a workspace output) is "
                                     f"not implemented")
        geo = geometry(context, node, p)
        sparse = context.tensor_meta(w_t).sparsity is not None
        if sparse or wdt == I16 or xdt == U8 or wdt == I8 and xdt == F32:
            matrix_activation(node, p.get("fused_activation_function", 0))
        if sparse or wdt == I16:                                   # v8 / v7
            return _fc_int16_or_sparse.prepare(context, node, p, geo)
        if xdt == F32 and wdt == I8:                               # hybrid (int8 or int4 weights)
            return _fc_hybrid.prepare(context, node, p, geo)
        prepare_dtype = {I8: prepare_int8, I16: prepare_int16, U8: prepare_uint8}.get(xdt, prepare_float)
        return prepare_dtype(context, node, p, geo)

    def invoke(self, context, node, d):
        t = context.tensors
        x, w_t, b_t = t[node.inputs[0]], node.inputs[1], node.input(2)
        w, b = t[w_t], (t[b_t] if b_t >= 0 else None)
        y = REFERENCE[type(d)](x, w, b, d, context, w_t)
        t[node.outputs[0]][...] = y.reshape(d.output_shape)
