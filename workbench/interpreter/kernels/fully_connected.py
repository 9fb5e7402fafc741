"""FULLY_CONNECTED (float32): y = x W^T + b, W of shape [units, K].

The input is read as [batch, K] with batch = (number of elements) / K.  The output is
[batch, units], or x's leading dims + [units] with ``keep_num_dims`` (version 5).  The bias slot
may be -1 or missing altogether (version 6).  Only the DEFAULT weights format.

int8 (version 4; 5 and 6 as for float): acc = Σ (w − w_zp)·(x − input_zero_point) + bias in int32,
requantized with ``output_multiplier`` / ``output_shift`` (one pair, or one per unit for per-channel
weights), + output_zero_point, clamped.  The fast path is one exact float BLAS product
(:func:`workbench.interpreter.quant.exact_float_dtype`); :func:`reference_int8` uses int64 numpy.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from .. import quant
from ._common import F32, activation_name, activation_range, apply_activation, check_bias

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
    weights_t: object = None     # contiguous [K, units] (W transposed), when W is constant
    bias: object = None


def reference(x, w, b, act_range):
    k = w.shape[1]
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
    weights_t: object = None      # float [K, units]: (W − w_zp)ᵀ, exact
    bias_folded: object = None    # int64 [units]: bias − input_zero_point·Σ(W − w_zp)
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
    if w is not None and bias is not None:
        wm = w.astype(np.int64) - w_zp                         # [units, K]
        fdt = quant.exact_float_dtype(float(np.abs(wm).sum(axis=1).max(initial=0)))
        wt = np.ascontiguousarray(wm.T, fdt)
        folded = bias.astype(np.int64) - in_zp * wm.sum(axis=1)
        cols = np.empty((batch, k), fdt)
        acc = np.empty((batch, units), fdt)
        impl = f"blas({fdt.name}, exact)"
    return FullyConnectedInt8Data(batch, units, k, keep, out, activation_name(code), in_s, in_zp, f_scales, w_zp,
                                  out_s, out_zp, eff, mult, shift, lo, hi, impl, wt, folded, cols, acc)


@kernel(BuiltinOperator.FULLY_CONNECTED, versions=(1, 4, 5, 6))
class FullyConnected(Kernel):
    name = "fully_connected"

    def prepare(self, context, node):
        p = node.params
        x_t, w_t, b_t = node.input(0), node.input(1), node.input(2)
        int8 = context.dtype(x_t) == I8
        if not int8:
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
        context.set_output(node.outputs[0], out, F32)
        code = p.get("fused_activation_function", 0)
        lo, hi = activation_range(code)
        w = context.value(w_t)
        wt = np.ascontiguousarray(w.T, np.float32) if w is not None else None
        bias = context.value(b_t) if b_t >= 0 else None
        return FullyConnectedData(batch, units, k, keep, out, activation_name(code), lo, hi, "blas", wt,
                                  None if bias is None else np.ascontiguousarray(bias, np.float32))

    def invoke(self, context, node, d):
        t = context.tensors
        if type(d) is FullyConnectedInt8Data:
            if d.weights_t is None:
                return self.invoke_reference(context, node, d)
            np.copyto(d.cols, t[node.inputs[0]].reshape(d.batch, d.depth), casting="unsafe")
            np.matmul(d.cols, d.weights_t, out=d.acc)
            quant.requantize_rows_jit(d.acc, d.bias_folded, d.output_multiplier, d.output_shift, d.output_zero_point,
                                      d.output_activation_min, d.output_activation_max,
                                      t[node.outputs[0]].reshape(d.batch, d.units), d.half_up)
            return
        out2d = t[node.outputs[0]].reshape(d.batch, d.units)
        wt = d.weights_t if d.weights_t is not None else t[node.inputs[1]].T
        np.matmul(t[node.inputs[0]].reshape(d.batch, d.depth), wt, out=out2d)
        b_t = node.input(2)
        if d.bias is not None:
            out2d += d.bias
        elif b_t >= 0:
            out2d += t[b_t]
        apply_activation(out2d, d.output_activation_min, d.output_activation_max)

    def invoke_reference(self, context, node, d):
        t = context.tensors
        b_t = node.input(2)
        if type(d) is FullyConnectedInt8Data:
            y = reference_int8(t[node.inputs[0]], t[node.inputs[1]], t[b_t] if b_t >= 0 else None, d)
            t[node.outputs[0]][...] = y.reshape(d.output_shape)
            return
        y = reference(t[node.inputs[0]], t[node.inputs[1]], t[b_t] if b_t >= 0 else None,
                      (d.output_activation_min, d.output_activation_max))
        t[node.outputs[0]][...] = y.reshape(d.output_shape)
