"""BATCH_MATMUL: lhs @ rhs over the last two dims, ``adj_x``/``adj_y`` transposing them first
(BatchMatMulOptions), batch dims broadcast as numpy (ranks 2..5, as TFLite).

float32 (version 1).

Quantized (per-tensor scales only; TFLite's kernel is its reference kernel on every CPU —
``reference_ops::BatchMatMul`` — and that is what litert runs):

* int8 × int8 → int8 (version 2): acc = Σ (x − lhs_zero_point)·(y − rhs_zero_point) in int32 (wraps
  on overflow), then MultiplyByQuantizedMultiplier with the gemmlowp double rounding (ties of the
  last shift away from zero), + output_zero_point, clamped to int8 (BATCH_MATMUL has no fused
  activation).  The multiplier comes from the float32 product lhs_scale·rhs_scale divided (in
  double) by output_scale (``GetQuantizedConvolutionMultipler``).
* int8 × int8 → int32 (version 2): the plain integer product Σ x·y — TFLite ignores every zero point
  and scale on this path.
* int16 × int16 → int16 and int16 × int8 → int16 (version 3): zero points must be 0; int64 sums and
  the int64 overload of MultiplyByQuantizedMultiplier (one rounding, ties up).

A per-channel quantized operand is refused: TFLite reads the tensor's single "legacy" scale, which
is 0 when a tensor has several scales, so every output would be the output zero point.

TFLite registers its reference kernel as the builtin one (``Register_BATCH_MATMUL`` returns
``Register_BATCH_MATMUL_REF``), so both variants compute the same integers; float32 follows
``Variant.float_matmul`` (:func:`batch_matmul_float`).  The speed layer
(``workbench/interpreter/fast/batch_matmul.py``) computes the integer products with one exact float
BLAS matmul and requantizes in numba.

Hybrid (float32 lhs × constant int8 rhs → float32; version 1, or 4 with asymmetric_quantize_inputs):
see the section "hybrid" at the end of this file.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, I32
from ._elementwise import fail, refuse


@opdata
class BatchMatMulData(OpData):
    adj_x: bool
    adj_y: bool
    output_shape: tuple


@opdata
class BatchMatMulQuantizedData(BatchMatMulData):
    lhs_scale: float
    lhs_zero_point: int
    rhs_scale: float
    rhs_zero_point: int
    output_scale: float
    output_zero_point: int
    effective_scale: float        # float(lhs_scale·rhs_scale) / output_scale, in double
    output_multiplier: int
    output_shift: int
    output_activation_min: int
    output_activation_max: int
    recipe: str                   # "int32": int32 sums, double rounding, ties away; "int64": int64 sums,
                                  # MultiplyByQuantizedMultiplier(int64); "raw int32": the int32 product


def operands(a, b, adj_x, adj_y):
    if adj_x:
        a = np.swapaxes(a, -1, -2)
    if adj_y:
        b = np.swapaxes(b, -1, -2)
    return a, b


def batch_matmul_float(a, b, d, order: str) -> np.ndarray:
    """``reference_ops::BatchMatMul`` (float32): per output one float32 total, Σ lhs[m, k]·rhs[k, n]
    one product and one add at a time in k order (``order="sequential"``, ``Variant.float_matmul``);
    ``"blas"``: numpy's matmul, which sums in its own blocks."""
    a, b = operands(a, b, d.adj_x, d.adj_y)
    with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
        if order != "sequential":
            return np.matmul(a, b)
        total = np.zeros(d.output_shape, np.float32)
        for k in range(a.shape[-1]):
            total += a[..., :, k, None] * b[..., None, k, :]
        return total


def requantize_sums(acc, d, out) -> None:
    """acc (exact integer sums, any shape) → out, by the node's recipe (plain numpy)."""
    if d.recipe == "raw int32":
        out[...] = quant.wrap_int32_array(acc)
        return
    n = out.shape[-1] if out.ndim else 1
    args = (np.reshape(acc, (-1, n)), np.zeros(n, np.int64), np.full(n, d.output_multiplier, np.int64),
            np.full(n, d.output_shift, np.int64), d.output_zero_point, d.output_activation_min,
            d.output_activation_max, out.reshape(-1, n))
    if d.recipe == "int64":
        quant.requantize_int64_rows(*args)
    else:
        quant.requantize_int32_rows(*args, 0)


def batch_matmul_quantized(a, b, d, dtype) -> np.ndarray:
    """``reference_ops::BatchMatMul`` (int8 / int16): int64 numpy matmul of the zero-point-corrected
    operands, then :func:`requantize_sums` (the "raw int32" product ignores the zero points)."""
    a, b = operands(a, b, d.adj_x, d.adj_y)
    za, zb = (0, 0) if d.recipe == "raw int32" else (d.lhs_zero_point, d.rhs_zero_point)
    acc = np.matmul(a.astype(np.int64) - za, b.astype(np.int64) - zb)
    out = np.empty(d.output_shape, dtype)
    requantize_sums(acc, d, out)
    return out


def prepare_quantized(context, node, a, b, y, ax, ay, out_shape, k):
    """int8 / int16 operands (TFLite batch_matmul.cc Prepare rules)."""
    ta, _, ty = context.dtype(a), context.dtype(b), context.dtype(y)
    if ta == I8:
        context.expect_dtype(node, b, (I8,), "rhs")
        context.expect_dtype(node, y, (I8, I32), "output")
    else:
        context.expect_dtype(node, b, (I16, I8), "rhs")
        context.expect_dtype(node, y, (I16,), "output")
    for t, what in ((a, "lhs"), (b, "rhs")) + (((y, "output"),) if ty != I32 else ()):
        scales, _, _ = quant.quant_params(context, t)
        if len(scales) > 1:
            refuse(node, f"{what} '{context.name(t)}' is quantized per channel ({len(scales)} scales); TFLite's "
                         f"BATCH_MATMUL reads a single scale, which is 0 for such a tensor (every output would be "
                         f"the output zero point)")
    sa, za = quant.tensor_scale_zp(context, a)
    sb, zb = quant.tensor_scale_zp(context, b)
    if ty == I32:
        so, zo, recipe = 1.0, 0, "raw int32"
        lo, hi = int(quant.INT32_MIN), int(quant.INT32_MAX)
    else:
        so, zo = quant.tensor_scale_zp(context, y)
        if ta == I16 and (za or zb or zo):
            fail(node, f"int16 zero points lhs {za}, rhs {zb}, output {zo}: TFLite requires all of them 0")
        recipe = "int64" if ta == I16 else "int32"
        lo, hi = (-128, 127) if ty == I8 else (quant.INT16_MIN, quant.INT16_MAX)
    eff = float(np.float64(np.float32(sa) * np.float32(sb)) / np.float64(np.float32(so)))
    mult, shift = quant.quantize_multiplier(eff) if recipe != "raw int32" else (0, 0)
    context.set_output(y, out_shape, ty)
    return BatchMatMulQuantizedData(ax, ay, out_shape, sa, za, sb, zb, so, zo, eff, mult, shift, lo, hi, recipe)


@kernel(BuiltinOperator.BATCH_MATMUL, versions=(1, 2, 3, 4))
class BatchMatMul(Kernel):
    name = "batch_matmul"

    def prepare(self, context, node):
        a, b, y = node.inputs[0], node.inputs[1], node.outputs[0]
        sa, sb = context.shape(a), context.shape(b)
        if not (2 <= len(sa) <= 5 and 2 <= len(sb) <= 5):
            fail(node, f"lhs {list(sa)} and rhs {list(sb)} must have rank 2 to 5")
        ax, ay = bool(node.params.get("adj_x", False)), bool(node.params.get("adj_y", False))
        m, k = (sa[-1], sa[-2]) if ax else (sa[-2], sa[-1])
        k2, n = (sb[-1], sb[-2]) if ay else (sb[-2], sb[-1])
        if k != k2:
            fail(node, f"contraction sizes differ: lhs {list(sa)} (adj_x={ax}) vs rhs {list(sb)} (adj_y={ay})")
        try:
            batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
        except ValueError:
            fail(node, f"batch dims of {list(sa)} and {list(sb)} do not broadcast")
        out = batch + (m, n)
        if context.dtype(a) == F32 and context.dtype(b) == I8:
            return prepare_hybrid(context, node, a, b, y, ax, ay, out, k)
        if context.dtype(a) in (I8, I16):
            return prepare_quantized(context, node, a, b, y, ax, ay, out, k)
        context.expect_dtype(node, a, (F32,), "lhs")
        context.expect_dtype(node, b, (F32,), "rhs")
        context.set_output(y, out, F32)
        return BatchMatMulData(ax, ay, out)

    def invoke(self, context, node, d):
        t = context.tensors
        a, b, out = t[node.inputs[0]], t[node.inputs[1]], t[node.outputs[0]]
        if type(d) is BatchMatMulHybridData:
            out[...] = batch_matmul_hybrid(a, b, d)
        elif type(d) is BatchMatMulQuantizedData:
            out[...] = batch_matmul_quantized(a, b, d, out.dtype)
        else:
            out[...] = batch_matmul_float(a, b, d, context.variant.float_matmul)


# ----------------------------------------------------------------------------------------------
# hybrid: float32 lhs, constant int8 rhs (per-tensor, or one scale per output column), float32 out
#
# Version 1, or 4 with asymmetric_quantize_inputs.  TFLite's ``EvalHybrid``: every row of the lhs
# (one output row's contraction vector) is quantized at run time
# (:func:`workbench.interpreter.quant.symmetric_quantize_rows` / ``asymmetric_quantize_rows``);
# per-tensor weights fold their scale into each row's factor (float32(scaling_factors[r]·rhs_scale)),
# per-channel ones multiply it per column.
# Then, all in TFLite's reference kernel: total = (int32)(float(Σ q·w) − float(row_sums[n]) ·
# float(input_offsets[r])) (float32 arithmetic, truncated back to an integer), output = scale ·
# float(total).  The row sums are the SSE ones (:func:`workbench.interpreter.quant.sse_row_sums`).
#
# Refused: more than one batch dimension larger than 1 (after TFLite's own folding of an rhs
# [..., 1, K, N]) — TFLite's kernel then reads the wrong rows' scaling factors and offsets (measured:
# half of the outputs differ from the exact product) — and, with asymmetric inputs, a rank-5 rhs whose
# first dimension is larger than 1 (TFLite leaves those row sums uncomputed).


@opdata
class BatchMatMulHybridData(BatchMatMulData):
    asymmetric_quantize_inputs: bool
    per_channel: bool
    filter_scale: object            # float32 [1] or [N]
    row_sums: object                # int64 [rhs batch..., N]: Σ_k rhs[..., k, n] (SSE int16 lanes)


def hybrid_bmm_output(dot, scaling_factors, offsets, d) -> np.ndarray:
    """Float tail of hybrid BATCH_MATMUL: exact integer sums [..., M, N] → float32 (section comment)."""
    dotf = np.asarray(dot).astype(np.float64).astype(np.float32)
    prod = (d.row_sums[..., None, :].astype(np.float32) * offsets[..., :, None].astype(np.float32)).astype(np.float32)
    total = np.trunc((dotf - prod).astype(np.float32)).astype(np.float32)
    fs = np.asarray(d.filter_scale, np.float32)
    if d.per_channel:
        scale = (scaling_factors[..., :, None] * fs).astype(np.float32)
    else:
        scale = (scaling_factors * fs[0]).astype(np.float32)[..., :, None]
    return (np.float32(0.0) + (scale * total).astype(np.float32)).astype(np.float32)


def batch_matmul_hybrid(a, b, d) -> np.ndarray:
    """TFLite's ``EvalHybrid`` (section comment): rows quantized, exact int products, the float tail."""
    a, b = operands(a, b, d.adj_x, d.adj_y)
    k = a.shape[-1]
    x2 = np.asarray(a, np.float32).reshape(-1, k)
    if d.asymmetric_quantize_inputs:
        q, sf, zp = quant.asymmetric_quantize_rows(x2)
    else:
        q, sf = quant.symmetric_quantize_rows(x2)
        zp = np.zeros(len(sf), np.int32)
    dot = np.matmul(q.reshape(a.shape).astype(np.int64), b.astype(np.int64))
    return hybrid_bmm_output(dot, sf.reshape(a.shape[:-1]), zp.reshape(a.shape[:-1]), d)


def prepare_hybrid(context, node, a, b, y, ax, ay, out_shape, k):
    context.expect_dtype(node, y, (F32,), "output")
    sa, sb = context.shape(a), context.shape(b)
    w = context.value(b)
    if w is None:
        refuse(node, "a hybrid BATCH_MATMUL needs a constant int8 rhs")
    asym = bool(node.params.get("asymmetric_quantize_inputs", False))
    ea, eb = tuple(sa), tuple(sb)
    if not ax and len(ea) > 2 and len(eb) > 2 and eb[-3] == 1:      # TFLite folds rhs [..., 1, K, N]
        ea, eb = ea[:-3] + (ea[-3] * ea[-2], ea[-1]), eb[:-3] + eb[-2:]
    batch = np.broadcast_shapes(ea[:-2], eb[:-2])
    if sum(1 for v in batch if v > 1) > 1:
        refuse(node, f"hybrid BATCH_MATMUL of {list(sa)} and {list(sb)}: more than one batch dimension larger than "
                     f"1; TFLite's hybrid kernel indexes the per-row scaling factors wrongly then (its results are "
                     f"not the product)")
    if asym and len(eb) == 5 and eb[0] > 1:
        refuse(node, f"hybrid BATCH_MATMUL with asymmetric inputs and a rank-5 rhs {list(sb)}: TFLite computes the "
                     f"row sums of the first {eb[1] * eb[2]} weight matrices only")
    n = out_shape[-1]
    fs, per_channel = quant.hybrid_filter_scales(node, context, b, n, len(sb) - 2 if ay else len(sb) - 1, "rhs")
    wk = np.swapaxes(w, -1, -2) if ay else w                         # [..., K, N]
    w64 = wk.astype(np.int64)
    rows = np.swapaxes(w64, -1, -2)                                  # [..., N, K]
    row_sums = quant.sse_row_sums(rows.reshape(-1, k)).reshape(rows.shape[:-1])
    context.set_output(y, out_shape, F32)
    return BatchMatMulHybridData(ax, ay, out_shape, asym, per_channel, fs, row_sums)
