"""What RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN share (float32 and hybrid).

A basic RNN cell (TFLite's RnnBatchStep):  h' = g(b + W·x + W_aux·x_aux + R·h)
with W [num_units, n_input], R [num_units, num_units], b [num_units], the hidden state h
[n_batch, num_units] kept in a variable tensor, and g the fused activation (NONE, RELU,
RELU_N1_TO_1, RELU6, TANH or SIGN_BIT; TFLite applies it in place, so NONE is the identity).  The
output of a step is h'.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from ._common import F32
from ._elementwise import refuse
from ._lstm import activation as _act

I8 = np.dtype(np.int8)

ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}


def apply(code: int, x: np.ndarray) -> np.ndarray:
    return x if code == 0 else _act(code, x).astype(np.float32)


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


def run(x, aux, W, R, b, Waux, h, code, reverse=False, reference=False) -> np.ndarray:
    """x [T, B, n_input] (aux [T, B, n_aux] or None); h [B, units] updated in place; outputs [T, B, units]."""
    T, B, _ = x.shape
    units = W.shape[0]
    out = np.empty((T, B, units), np.float32)
    order = range(T - 1, -1, -1) if reverse else range(T)
    if reference:
        for t in order:
            for k in range(B):
                v = b + W @ x[t, k]
                if Waux is not None and aux is not None:
                    v = v + Waux @ aux[t, k]
                v = v + R @ h[k]
                h[k] = apply(code, v.astype(np.float32))
                out[t, k] = h[k]
        return out
    pre = (x.reshape(T * B, -1) @ W.T + b).astype(np.float32).reshape(T, B, units)
    if Waux is not None and aux is not None:
        pre += (aux.reshape(T * B, -1) @ Waux.T).reshape(T, B, units)
    Rt = R.T
    for t in order:
        h[...] = apply(code, (pre[t] + h @ Rt).astype(np.float32))
        out[t] = h
    return out


# ----------------------------------------------------------------------------------------------
# hybrid (float32 input, state and output; int8 weights): TFLite's quantized RnnBatchStep
#
# output = bias; if the input block is not all zero: quantize it row by row (symmetric, or
# asymmetric with asymmetric_quantize_inputs) and output += float(Σ q·w − zp·row_sum) ·
# float32(row_scale · w_scale); the same for the aux input and the hidden state; then the fused
# activation (tanh is Eigen's, see quant's "recurrent" section), and h = output.  Every float
# operation in float32 and in that order: bitwise equal to litert.


def hybrid_scales(node, context, tensors: dict) -> tuple[dict, dict]:
    """(weight scale, SSE-style row sums) per weight role."""
    from .. import quant
    scales, sums = {}, {}
    for role, t in tensors.items():
        if t < 0:
            continue
        sc, _, _ = quant.quant_params(context, t)
        if len(sc) != 1:
            refuse(node, f"{role} '{context.name(t)}' has {len(sc)} scales; a hybrid RNN takes one per tensor")
        if not context.is_constant(t):
            refuse(node, f"{role} '{context.name(t)}' must be a constant tensor")
        scales[role] = np.float32(sc[0])
        sums[role] = quant.sse_row_sums(context.value(t))
    return scales, sums


def _rows(v, asymmetric):
    from ._lstm import _quantize_rows
    return _quantize_rows(v, asymmetric)


def hybrid_step(x, aux, h, W, Waux, R, b, scales, sums, asymmetric, code):
    """One hybrid RnnBatchStep on the rows x [rows, n_input], h [rows, units] (float32)."""
    from .. import quant
    out = np.broadcast_to(b, (x.shape[0], W.shape[0])).astype(np.float32)
    for role, v, w in (("weights", x, W), ("aux weights", aux, Waux), ("recurrent weights", h, R)):
        if v is None or w is None or not np.any(v):
            continue
        q, sf, zp = _rows(v, asymmetric)
        acc = q.astype(np.int64) @ w.astype(np.int64).T
        if asymmetric:
            acc = quant.wrap_int32(acc - zp.astype(np.int64)[:, None] * sums[role][None, :])
        scale = (sf * scales[role]).astype(np.float32)
        out = (out + (acc.astype(np.float32) * scale[:, None]).astype(np.float32)).astype(np.float32)
    if code == 4:
        return quant.eigen_tanh_f32(out)
    return apply(code, out) if code in (0, 5) else quant.apply_float_activation(out, code)


def hybrid_step_reference(x, aux, h, W, Waux, R, b, scales, sums, asymmetric, code):
    """The same, one row and one unit at a time in float32 scalars."""
    from .. import quant
    f32 = np.float32
    rows, units = x.shape[0], W.shape[0]
    out = np.empty((rows, units), np.float32)
    parts = []
    for role, v, w in (("weights", x, W), ("aux weights", aux, Waux), ("recurrent weights", h, R)):
        if v is not None and w is not None and np.any(v):
            parts.append((role, _rows(v, asymmetric), w))
    for r in range(rows):
        for u in range(units):
            a = f32(b[u])
            for role, (q, sf, zp), w in parts:
                acc = int(np.dot(q[r].astype(np.int64), w[u].astype(np.int64)))
                if asymmetric:
                    acc = int(quant.wrap_int32(acc - int(zp[r]) * int(sums[role][u])))
                a = f32(a + f32(f32(acc) * f32(sf[r] * scales[role])))
            out[r, u] = a
    if code == 4:
        return np.array([quant.eigen_tanh_f32(np.float32([v]))[0] for v in out.reshape(-1)],
                        np.float32).reshape(out.shape)
    return apply(code, out) if code in (0, 5) else quant.apply_float_activation(out, code)


def run_hybrid(x, aux, W, R, b, Waux, h, code, scales, sums, asymmetric, time_major=True, reverse=False,
               reference=False) -> np.ndarray:
    """x [T, B, n_input] (aux [T, B, n_aux] or None), h [B, units] updated in place; outputs [T, B, units].
    Time-major steps all rows together, batch-major one row at a time (TFLite's loops; it matters
    for the all-zero shortcuts)."""
    T, B, _ = x.shape
    out = np.empty((T, B, W.shape[0]), np.float32)
    order = range(T - 1, -1, -1) if reverse else range(T)
    step = hybrid_step_reference if reference else hybrid_step
    groups = [slice(0, B)] if time_major else [slice(k, k + 1) for k in range(B)]
    for rows in groups:
        for t in order:
            h[rows] = step(x[t, rows], None if aux is None else aux[t, rows], h[rows], W, Waux, R, b, scales, sums,
                           asymmetric, code)
            out[t, rows] = h[rows]
    return out
