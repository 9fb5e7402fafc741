"""Hybrid FULLY_CONNECTED: float32 input and output, constant int8 weights (versions 3, 9 with
asymmetric_quantize_inputs, 12 with per-channel weights; 5 / 6 as for float).

TFLite's ``EvalHybridDense``: every input row is quantized at run time (``BatchQuantizeFloats``:
:func:`workbench.interpreter.quant.symmetric_quantize_rows`, or ``asymmetric_quantize_rows`` with
asymmetric_quantize_inputs — both in litert's x86 rounding, see ``quant/hybrid.py``), then
acc = q·Wᵀ in int32, minus input_offsets[b]·row_sums[u] when the rows are asymmetric (the row sums as
TFLite's SSE routine adds them), then in float32
output = bias + float(acc) · float32(scaling_factors[b] · filter_scale[u]), then the activation
(``ApplyActivationToVector``; no clamp for NONE).  An input that is entirely zero skips all of it:
the output is the bias (TFLite's ``IsZeroVector`` shortcut).  With symmetric rows TFLite passes its
input_offsets buffer without filling it; the workbench takes those offsets as 0, which is what they
are meant to be.

Both of TFLite's builds run this same code (the row quantizer and the row sums come from
``tensor_utils``, which the reference kernels share), so there is no variant here — except for int4
weights, which litert's builtin build may send to its 4-bit kernels (``_fc_int4.py``,
``Variant.fc_4bit_kernel``); otherwise they are unpacked to int8 and take this path.
The speed layer: ``workbench/interpreter/fast/fully_connected.py``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import UnsupportedOpError
from .. import quant
from ..registry import opdata
from . import _fc_int4
from ._common import F32, activation_name
from ._fc_geometry import FullyConnectedGeometry


@opdata
class FullyConnectedHybridData(FullyConnectedGeometry):
    asymmetric_quantize_inputs: bool   # per-row zero points (input_offsets) or symmetric rows
    per_channel: bool
    filter_scale: object               # float32 [1] or [units]
    row_sums: object                   # int64 [units]: Σ W[u] as TFLite's SSE routine adds it (int16 lanes)
    output_activation_min: float       # what the activation clamps to (NONE: nothing)
    output_activation_max: float
    activation_code: int = dataclasses.field(default=0, repr=False)


def hybrid_fc_output(acc, offsets, row_sums, scaling_factors, filter_scale, bias, code, product_out=None):
    """The float tail: exact int32 dot products ``acc`` [batch, units] → float32 [batch, units]."""
    acc = np.asarray(acc).astype(np.int64)
    if offsets is not None and np.any(offsets):
        acc = quant.wrap_int32(acc - offsets.astype(np.int64)[:, None] * row_sums[None, :])
    scales = (scaling_factors[:, None] * np.asarray(filter_scale, np.float32)[None, :]).astype(np.float32)
    if product_out is not None:
        product_out[...] = scales
    prod = (acc.astype(np.float32) * scales).astype(np.float32)
    base = (np.zeros(prod.shape, np.float32) if bias is None
            else np.broadcast_to(np.asarray(bias, np.float32), prod.shape))
    return quant.apply_float_activation((base + prod).astype(np.float32), code)


def zero_input_output(bias, shape, code) -> np.ndarray:
    """``IsZeroVector``: an all-zero input gives the bias (or 0), then the activation."""
    base = np.zeros(shape, np.float32) if bias is None else np.broadcast_to(np.asarray(bias, np.float32), shape)
    return quant.apply_float_activation(np.array(base, np.float32), code)


def fully_connected_hybrid(x, w, b, d) -> np.ndarray:
    """``EvalHybridDense`` (see the module docstring), one numpy step per stage."""
    x2 = np.asarray(x, np.float32).reshape(d.batch, d.depth)
    if not np.any(x2 != 0):
        return zero_input_output(b, (d.batch, d.units), d.activation_code)
    if d.asymmetric_quantize_inputs:
        q, sf, zp = quant.asymmetric_quantize_rows(x2)
    else:
        q, sf = quant.symmetric_quantize_rows(x2)
        zp = np.zeros(len(sf), np.int32)
    acc = q.astype(np.int64) @ w.astype(np.int64).T
    return hybrid_fc_output(acc, zp, d.row_sums, sf, d.filter_scale, b, d.activation_code)


def prepare(context, node, p, geo):
    """Float input with int8 (or int4, unpacked) weights.  The weights and the bias must be constant."""
    w_t, b_t, y_t = node.input(1), node.input(2), node.outputs[0]
    batch, units, k, keep, out = geo
    context.expect_dtype(node, y_t, (F32,), "output")
    if b_t >= 0:
        context.expect_dtype(node, b_t, (F32,), "bias")
    code = p.get("fused_activation_function", 0)
    w = context.value(w_t)
    if w is None:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): hybrid weights must be a constant tensor")
    bias = context.value(b_t) if b_t >= 0 else None
    if b_t >= 0 and bias is None:
        raise UnsupportedOpError(f"FULLY_CONNECTED (node {node.index}): a hybrid bias must be a constant tensor")
    blockwise = _fc_int4.blockwise_details(context, w_t)
    four_bit = (context.variant.fc_4bit_kernel and context.packed_bits(w_t) == 4
                and _fc_int4.uses_4bit_kernel(batch, units, k))
    if blockwise is not None or four_bit:       # int4 weights: litert's 4-bit kernels (_fc_int4.py)
        context.set_output(y_t, out, F32)
        if blockwise is not None:
            return _fc_int4.prepare_blockwise(context, node, geo, w, code, blockwise, four_bit)
        return _fc_int4.prepare_4bit(context, node, geo, code)
    fs, per_channel = quant.hybrid_filter_scales(node, context, w_t, units, 0)
    context.set_output(y_t, out, F32)
    lo, hi = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}[int(code)]
    return FullyConnectedHybridData(**geo._asdict(), activation=activation_name(code),
                                    asymmetric_quantize_inputs=bool(p.get("asymmetric_quantize_inputs", False)),
                                    per_channel=per_channel, filter_scale=fs, row_sums=quant.sse_row_sums(w),
                                    output_activation_min=lo, output_activation_max=hi, activation_code=int(code))
