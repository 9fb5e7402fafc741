"""What RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN share (float32 and hybrid).

A basic RNN cell, TFLite's ``RnnBatchStep`` (kernels/internal/kernel_utils.cc):

    h' = g(b + W·x + W_aux·x_aux + R·h)

with W [num_units, n_input], R [num_units, num_units], b [num_units], the hidden state h [n_batch,
num_units] kept in a variable tensor, and g the fused activation (NONE, RELU, RELU_N1_TO_1, RELU6, TANH or
SIGN_BIT; TFLite applies it in place, so NONE is the identity).  The output of a step is h'.

float32 (:func:`rnn_batch_step_float`): output = bias, then output += each product with TFLite's float
``MatrixBatchVectorMultiplyAccumulate`` -- in litert's x86 build NEON code run through NEON_2_SSE, whose
float32 order of additions quant.recurrent reproduces -- then the activation (tanh is Eigen's): bit-exact.

hybrid (:func:`rnn_batch_step_hybrid`; int8 weights with one scale each, float32 input, state and
output): output = bias; unless the block of rows is all zero, it is quantized row by row (symmetric, or
asymmetric with asymmetric_quantize_inputs) and output += float32(Σ q·w − zp·row_sum) · float32(row_scale
· w_scale) for the input, the aux input and the hidden state; then the activation.  Time-major input steps
all rows together, batch-major input one row at a time (TFLite's loops; the all-zero shortcut sees a
different block).  LiteRT's BUILTIN_REF resolver registers these same kernels: both variants agree.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from .. import quant
from ..quant.recurrent import (
    apply_activation_to_vector,
    hybrid_matrix_batch_vector_multiply_accumulate,
    matrix_batch_vector_multiply_accumulate,
    quantize_rows,
)
from ._common import F32, I8
from ._elementwise import refuse

ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}


def check_activation(node, code: int) -> None:
    if code not in ACTIVATIONS:
        refuse(node, f"fused activation {code} is not one TFLite's RNN kernels apply")


def is_hybrid(context, w: int) -> bool:
    """A float RNN with int8 weights is the hybrid (dynamic-range) kind (versions 2, 3)."""
    return w >= 0 and context.dtype(w) == I8


def check_cell(node, context, w, r, b, h, n_input, n_batch, prefix="", aux_w=-1, n_aux=0, hybrid=False) -> int:
    """Check one cell's tensors; returns num_units."""
    for what, t in (("weights", w), ("recurrent weights", r), ("bias", b), ("hidden state", h)):
        if t < 0:
            refuse(node, f"{prefix}{what} is absent; it is required")
        context.expect_dtype(node, t, (I8,) if hybrid and "weights" in what else (F32,), prefix + what)
    ws = context.shape(w)
    if len(ws) != 2 or ws[1] != n_input:
        refuse(node, f"{prefix}weights '{context.name(w)}' has shape {list(ws)}; expected [num_units, {n_input}]")
    units = ws[0]
    if tuple(context.shape(r)) != (units, units):
        refuse(node, f"{prefix}recurrent weights have shape {list(context.shape(r))}; expected [{units}, {units}]")
    if tuple(context.shape(b)) != (units,):
        refuse(node, f"{prefix}bias has shape {list(context.shape(b))}; expected [{units}]")
    if not context.tensor_meta(h).is_variable:
        refuse(node, f"{prefix}hidden state '{context.name(h)}' is not a variable tensor (is_variable)")
    if int(np.prod(context.shape(h))) != n_batch * units:
        raise ModelError(f"{node.op_name} (node {node.index}): {prefix}hidden state '{context.name(h)}' has shape "
                         f"{list(context.shape(h))}; it must hold {n_batch} x {units} values")
    if aux_w >= 0:
        context.expect_dtype(node, aux_w, (I8,) if hybrid else (F32,), prefix + "aux weights")
        if tuple(context.shape(aux_w)) != (units, n_aux):
            refuse(node, f"{prefix}aux weights have shape {list(context.shape(aux_w))}; expected [{units}, {n_aux}]")
    return units


def hybrid_scales(node, context, tensors: dict) -> dict:
    """role -> the float32 scale of the cell's int8 weights (one per tensor; constant tensors only)."""
    scales = {}
    for role, t in tensors.items():
        if t < 0:
            continue
        sc, _, _ = quant.quant_params(context, t)
        if len(sc) != 1:
            refuse(node, f"{role} '{context.name(t)}' has {len(sc)} scales; a hybrid RNN takes one per tensor")
        if not context.is_constant(t):
            refuse(node, f"{role} '{context.name(t)}' must be a constant tensor")
        scales[role] = np.float32(sc[0])
    return scales


def row_sums(W, R, Waux, asymmetric: bool) -> dict | None:
    """The SSE row sums of the int8 weights (they enter the products with asymmetric inputs only)."""
    if not asymmetric:
        return None
    return {role: quant.sse_row_sums(m) for role, m in (("weights", W), ("recurrent weights", R),
                                                         ("aux weights", Waux)) if m is not None}


def rnn_batch_step_float(x, aux, h, W, Waux, R, b, code: int) -> np.ndarray:
    """One float RnnBatchStep on the rows x [rows, n_input], h [rows, units]; returns the new h."""
    out = np.broadcast_to(b, (len(x), W.shape[0])).astype(np.float32)
    out = matrix_batch_vector_multiply_accumulate(W, x, out)
    if Waux is not None and aux is not None:
        out = matrix_batch_vector_multiply_accumulate(Waux, aux, out)
    out = matrix_batch_vector_multiply_accumulate(R, h, out)
    return apply_activation_to_vector(out, code)


def rnn_batch_step_hybrid(x, aux, h, W, Waux, R, b, scales: dict, sums, asymmetric: bool, code: int) -> np.ndarray:
    """One hybrid RnnBatchStep on the rows x [rows, n_input], h [rows, units] (float32); returns the new h."""
    out = np.broadcast_to(b, (len(x), W.shape[0])).astype(np.float32)
    for role, v, w in (("weights", x, W), ("aux weights", aux, Waux), ("recurrent weights", h, R)):
        if v is None or w is None or not np.any(v):
            continue
        out = hybrid_matrix_batch_vector_multiply_accumulate(out, quantize_rows(v, asymmetric), w, scales[role],
                                                             None if sums is None else sums[role])
    return apply_activation_to_vector(out, code)


def eval_float(x, aux, W, R, b, Waux, h, code: int, reverse: bool = False) -> np.ndarray:
    """x [T, B, n_input] (aux [T, B, n_aux] or None); h [B, units] updated in place; outputs [T, B, units].
    (Batch rows are independent here, so both layouts step all rows together.)"""
    T = x.shape[0]
    out = np.empty((T, x.shape[1], W.shape[0]), np.float32)
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        h[...] = rnn_batch_step_float(x[t], None if aux is None else aux[t], h, W, Waux, R, b, code)
        out[t] = h
    return out


def eval_hybrid(x, aux, W, R, b, Waux, h, code: int, scales: dict, asymmetric: bool, time_major: bool = True,
                reverse: bool = False, sums: dict | None = None) -> np.ndarray:
    """As :func:`eval_float` for the hybrid kind; ``sums``: the row sums if already made.  Time-major
    steps all rows together, batch-major one row at a time."""
    T, B, _ = x.shape
    if sums is None:
        sums = row_sums(W, R, Waux, asymmetric)
    out = np.empty((T, B, W.shape[0]), np.float32)
    order = range(T - 1, -1, -1) if reverse else range(T)
    for rows in ([slice(0, B)] if time_major else [slice(k, k + 1) for k in range(B)]):
        for t in order:
            h[rows] = rnn_batch_step_hybrid(x[t, rows], None if aux is None else aux[t, rows], h[rows], W, Waux, R, b,
                                            scales, sums, asymmetric, code)
            out[t, rows] = h[rows]
    return out
