"""FULLY_CONNECTED with int16 weights (version 7) or sparse weights (version 8).

int16 × int16 → int16 (version 7; TFLite's ``FullyConnectedInt16FilterInt16``, a plain loop that both
builds run): acc = Σ (w − w_zp)·x in int64, + bias (int32, or int64 when quantized_bias_type is
INT64), then the int64 MultiplyByQuantizedMultiplier (a 16-bit multiplier, ONE rounding, ties up),
+ 0, clamped.  The per-tensor multiplier comes from the float32 product input_scale·weight_scale
(``GetQuantizedConvolutionMultipler``), per-channel ones from double products; per-channel weights
ignore their zero points.  Input and output zero points must be 0.  An int64 bias without
quantized_bias_type=INT64 would be read by TFLite as int32 values (undefined), so it is refused.

Sparse weights (version 8: a constant weight tensor with ``SparsityParameters`` — dense rows, CSR
column blocks, decoded by ``densify.dense_positions``):

* float32, "random sparse" (two levels) or 1x4 blocks (a third, dense level of size 4).  TFLite's
  reference kernel densifies the weights and runs the dense float loop (zeros included); the
  builtin sparse kernels add only the stored weights, in their stored order, into one float32 sum
  per row (random sparse) or into four lane sums, one per position in the block, added
  ((l0 + l1) + l2) + l3 at the end (1x4 blocks).  ``Variant.fc_sparse_kernels`` picks one.
* int8, 1x16 blocks with symmetric weights (both builds run the same kernel): acc = Σ w·(x −
  input_zero_point) + bias in int32, then MultiplyByQuantizedMultiplier per tensor or per channel
  (ties away from zero), + output zero point, clamped.
* A hybrid FC (float input, int8 weights) and int16 inputs with sparse weights are refused.

The speed layer: ``workbench/interpreter/fast/fully_connected.py`` (weights decoded once, exact BLAS for v7).
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from .. import quant
from ..registry import opdata
from ._common import F32, I8, I16, activation_name, activation_range, apply_activation
from ._fc_geometry import FullyConnectedGeometry
from .densify import dense_positions

DIM_DENSE, DIM_CSR = 0, 1


@opdata
class FullyConnectedInt16WeightsData(FullyConnectedGeometry):
    """int16 input, int16 weights, int16 output (version 7)."""

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


@opdata
class FullyConnectedSparseData(FullyConnectedGeometry):
    """Sparse constant weights (version 8), float32 or int8."""

    sparse_format: str            # "random sparse" | "1x4 blocks" | "1x16 blocks"
    stored_weights: int           # how many weights the file stores (zeros inside blocks included)
    output_activation_min: object
    output_activation_max: object
    input_zero_point: int = 0
    output_zero_point: int = 0
    output_multiplier: object = None   # int8: int64 [units]
    output_shift: object = None


def fully_connected_int16_weights(x, w, b, d) -> np.ndarray:
    """``FullyConnectedInt16FilterInt16``: int64 sums, then one rounding (ties up) per output."""
    acc = x.reshape(d.batch, d.depth).astype(np.int64) @ (w.astype(np.int64) - d.filter_zero_point).T
    bias = np.zeros(d.units, np.int64) if b is None else b.astype(np.int64)
    out = np.empty((d.batch, d.units), np.int16)
    quant.requantize_int64_rows(acc, bias, d.output_multiplier, d.output_shift, 0, d.output_activation_min,
                                d.output_activation_max, out)
    return out


def stored_rows(values, d, sparsity, lanes: int):
    """The stored weights of every row, in stored order, by lane (column mod ``lanes``): per lane
    (columns [units, n], values [units, n], present [units, n]), padded at the end of each row."""
    flat, pos, _ = dense_positions((d.units, d.depth), sparsity)
    order = np.argsort(pos, kind="stable")                          # the stored order...
    order = order[np.argsort(flat[order] // d.depth, kind="stable")]   # ...row by row
    unit, col = np.divmod(flat[order], d.depth)
    vals = np.asarray(values)[pos[order]]
    per_lane = []
    for lane in range(lanes):
        keep = col % lanes == lane
        u, c, v = unit[keep], col[keep], vals[keep]
        rank = np.arange(len(u)) - np.searchsorted(u, u)            # place of each weight in its row
        n = int(rank.max(initial=-1)) + 1
        cols, ws, present = np.zeros((d.units, n), np.int64), np.zeros((d.units, n), v.dtype), \
            np.zeros((d.units, n), bool)
        cols[u, rank], ws[u, rank], present[u, rank] = c, v, True
        per_lane.append((cols, ws, present))
    return per_lane


def densified(values, d, sparsity) -> np.ndarray:
    """The dense [units, K] weights (``FormatConverter::SparseToDense``)."""
    flat, pos, _ = dense_positions((d.units, d.depth), sparsity)
    dense = np.zeros(d.units * d.depth, np.asarray(values).dtype)
    dense[flat] = np.asarray(values)[pos]
    return dense.reshape(d.units, d.depth)


def sparse_int8(x2, dense, b, d) -> np.ndarray:
    """``FullyConnectedSparseWeight1x16``: int32 sums with the dense weights [units, K], requantized."""
    acc = (x2.astype(np.int64) - d.input_zero_point) @ dense.astype(np.int64).T
    if b is not None:
        acc = acc + b.astype(np.int64)
    v = quant.multiply_by_quantized_multiplier_array(quant.wrap_int32_array(acc), d.output_multiplier,
                                                     d.output_shift) + d.output_zero_point
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(np.int8)


def sparse_float_stored(x2, rows, b, d) -> np.ndarray:
    """The builtin sparse float sums: per lane of :func:`stored_rows`, one float32 add per stored
    weight in stored order (vectorized over batch and rows), the lanes added in order, + bias."""
    y = None
    with np.errstate(over="ignore", invalid="ignore"):
        for cols, ws, present in rows:
            acc = np.zeros((d.batch, d.units), np.float32)
            for j in range(cols.shape[1]):
                acc = np.where(present[:, j], acc + ws[:, j] * x2[:, cols[:, j]], acc)
            y = acc if y is None else y + acc
        return y if b is None else y + b


def fully_connected_sparse(x, w, b, d, sparsity, variant) -> np.ndarray:
    """int8: :func:`sparse_int8`.  float32: ``reference_ops::FullyConnectedSparseWeight`` (densify,
    then the dense loop in k order, zeros included) or, with ``variant.fc_sparse_kernels``, the
    builtin ``FullyConnectedSparseWeight`` / ``FullyConnectedSparseWeight1x4`` sums
    (:func:`sparse_float_stored`); then the activation clamp."""
    x2 = x.reshape(d.batch, d.depth)
    if d.output_multiplier is not None:
        return sparse_int8(x2, densified(w, d, sparsity), b, d)
    if variant.fc_sparse_kernels:
        y = sparse_float_stored(x2, stored_rows(w, d, sparsity, 4 if d.sparse_format == "1x4 blocks" else 1), b, d)
    else:
        dense_t = np.ascontiguousarray(densified(w, d, sparsity).T)
        y = np.zeros((d.batch, d.units), np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            for k in range(d.depth):
                y += x2[:, k, None] * dense_t[k]
            y = y + (np.float32(0) if b is None else b)
    y = np.asarray(y, np.float32)
    apply_activation(y, d.output_activation_min, d.output_activation_max)
    return y


# ----------------------------------------------------------------------------------------------
# prepare


def prepare(context, node, p, geo):
    """The branch of prepare for int16 weights (v7) and sparse weights (v8)."""
    if context.tensor_meta(node.input(1)).sparsity is not None:
        return _prepare_sparse(context, node, p, geo)
    return _prepare_int16_weights(context, node, p, geo)


def _multipliers(in_s, f_scales, out_s, units):
    """Per channel from double products, per tensor from the float32 product in_s·w_s."""
    if len(f_scales) > 1:
        return quant.per_channel_multipliers(in_s, f_scales, out_s, units)[1:]
    real = float(np.float64(np.float32(in_s) * np.float32(f_scales[0])) / np.float64(np.float32(out_s)))
    m, s = quant.quantize_multiplier(real)
    return np.full(units, m, np.int64), np.full(units, s, np.int64)


def _prepare_int16_weights(context, node, p, geo):
    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    units = geo.units
    context.expect_dtype(node, x_t, (I16,), "input (int16 weights need int16 activations)")
    context.expect_dtype(node, y_t, (I16,), "output")
    code = p.get("fused_activation_function", 0)
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
    mult, shift = _multipliers(in_s, f_scales, out_s, units)
    lo, hi = quant.activation_range_quantized(code, out_s, 0, quant.INT16_MIN, quant.INT16_MAX)
    context.set_output(y_t, geo.output_shape, I16)
    return FullyConnectedInt16WeightsData(
        **geo._asdict(), activation=activation_name(code), input_scale=in_s,
        filter_scale=np.asarray(f_scales, np.float32), filter_zero_point=0 if per_channel else int(f_zps[0]),
        output_scale=out_s, output_multiplier=mult, output_shift=shift, output_activation_min=lo,
        output_activation_max=hi, bias_type=bias_type, quantized_bias_type=option, per_channel=per_channel)


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


def _prepare_sparse(context, node, p, geo):
    x_t, w_t, b_t, y_t = node.input(0), node.input(1), node.input(2), node.outputs[0]
    batch, units, k, keep, out = geo
    wdt, xdt = context.dtype(w_t), context.dtype(x_t)
    if not ((xdt == F32 and wdt == F32) or (xdt == I8 and wdt == I8)):
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): sparse {wdt} weights with a {xdt} input; "
                                 f"the workbench implements sparse float32 and int8 FULLY_CONNECTED (a sparse "
                                 f"hybrid or int16 one is not implemented)")
    values = context.value(w_t)
    if values is None:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): sparse weights must be a constant")
    sparsity = context.tensor_meta(w_t).sparsity
    fmt = _sparse_format(node, sparsity, wdt)
    _, pos, _ = dense_positions((units, k), sparsity)
    if len(pos) and pos.max() >= len(values):
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): the sparsity indexes weight {pos.max()} of "
                                 f"{len(values)} stored")
    code = p.get("fused_activation_function", 0)
    common = dict(geo._asdict(), activation=activation_name(code), sparse_format=fmt, stored_weights=len(values))
    if wdt == F32:
        if b_t >= 0:
            context.expect_dtype(node, b_t, (F32,), "bias")
        lo, hi = activation_range(code)
        context.set_output(y_t, out, F32)
        return FullyConnectedSparseData(**common, output_activation_min=lo, output_activation_max=hi)
    context.expect_dtype(node, y_t, (I8,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (np.dtype(np.int32),), "bias")
    in_s, in_zp = quant.tensor_scale_zp(context, x_t)
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    f_scales, f_zps, _ = quant.quant_params(context, w_t)
    if np.any(f_zps != 0):
        raise KernelError(f"FULLY_CONNECTED (node {node.index}): sparse int8 weights with zero points "
                          f"{f_zps.tolist()[:4]}; TFLite's sparse kernel takes symmetric weights only")
    mult, shift = _multipliers(in_s, f_scales, out_s, units)
    lo, hi = quant.activation_range_quantized(code, out_s, out_zp)
    context.set_output(y_t, out, I8)
    return FullyConnectedSparseData(**common, output_activation_min=lo, output_activation_max=hi,
                                    input_zero_point=in_zp, output_zero_point=out_zp, output_multiplier=mult,
                                    output_shift=shift)
