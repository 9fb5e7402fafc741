"""The hybrid (dynamic-range) LSTM: float32 input, states, biases and output, int8 weights with one scale
each -- TFLite's lstm_eval ``EvalHybrid`` / ``LstmStepHybrid``, for the three LSTM ops.

Every step quantizes the input, the output state (and the aux input) row by row (``BatchQuantizeFloats``:
symmetric, or asymmetric with ``asymmetric_quantize_inputs``) and multiplies in integers; a block that is
entirely zero is not quantized and its product is skipped.  Per gate (``CalculateLstmGateHybrid``):
    gate = bias (0 with layer norm)
    gate += float32(Σ q·w − zp·row_sum) · float32(row_scale · w_scale)   input, aux input, recurrent
    gate += (p_scale · p) ⊙ c                                             peephole
    layer norm: MeanStddevNormalization, ⊙ coefficients, + bias
    activation: Eigen's sigmoid (gates) or the fused activation (cell gate)
then ``UpdateLstmCellFloat`` (c = f·c; c += z·i, CIFG i = 1 − f; CwiseClipping) and
``CalculateLstmOutputHybrid`` (m = o · g(c); projection = bias + the same quantized product, skipped
when m is all zero; clip).  Every float operation is float32 in TFLite's order, bit-exact with LiteRT.

Facts of the x86 build that decide bits (quant.recurrent's tensor_utils section): the int8 row sums are
SSE's (``ComputeRowSums``; used with asymmetric inputs); Eigen's sigmoid takes its one-value path for the
values before the first 16-byte boundary of the gate's buffer and after its last packet of 4, so where
TFLite's gate buffers start matters (:func:`gate_offsets`).  Time-major input steps all batch rows
together; batch-major input one row at a time (as TFLite: it matters for the zero-block shortcuts and the
buffer offsets).
"""

from __future__ import annotations

import numpy as np

from .. import quant
from ..quant.recurrent import (
    apply_activation_to_vector,
    cwise_clipping,
    hybrid_matrix_batch_vector_multiply_accumulate,
    mean_stddev_normalization,
    quantize_rows,
)
from ..registry import OpData, opdata
from ._elementwise import refuse
from ._lstm import I8, Direction, role_dtype, weights

# Every float array here is float32 (the checked tensors, the scales as np.float32, their products and
# sums), and numpy keeps float32 arithmetic float32: each operation rounds to float32 as TFLite's does.
SIGMOID = 6          # TFLite's kTfLiteActSigmoid, the gates' activation


@opdata
class HybridLstmParameter(OpData):
    """The hybrid facts of one direction: how inputs are quantized and each int8 tensor's scale."""

    asymmetric_quantize_inputs: bool
    weight_scales: dict              # role -> float32 scale of the int8 weights


def hybrid_params(node, context, d: Direction, asymmetric: bool) -> HybridLstmParameter:
    scales = {}
    for role, tid in d.tensors.items():
        if tid < 0 or role_dtype("hybrid", role) != I8:
            continue
        sc, _, _ = quant.quant_params(context, tid)
        if len(sc) != 1:
            refuse(node, f"{role.replace('_', ' ')} '{context.name(tid)}' has {len(sc)} scales; a hybrid LSTM takes "
                         f"one scale per weight tensor")
        if not role.startswith("cell_to_") and not context.is_constant(tid):
            refuse(node, f"{role.replace('_', ' ')} must be a constant tensor")
        scales[role] = np.float32(sc[0])
    return HybridLstmParameter(asymmetric, scales)


def row_sums(w: dict, hp: HybridLstmParameter) -> dict:
    """TFLite's ``ComputeRowSums``: role -> the SSE row sums of each int8 matrix (peephole weights are
    vectors, not matrices); they only enter the products with asymmetric inputs (empty otherwise)."""
    if not hp.asymmetric_quantize_inputs:
        return {}
    return {role: quant.sse_row_sums(v) for role, v in w.items()
            if role in hp.weight_scales and not role.startswith("cell_to_")}


def gate_offsets(d: Direction, n_batch: int) -> dict:
    """Where each gate's buffer starts in TFLite's one float buffer of n_batch · n_cell per gate (input,
    cell, forget, output; no input gate with CIFG), in floats from its 16-byte aligned start."""
    order = ("cell", "forget", "output") if d.use_cifg else ("input", "cell", "forget", "output")
    return {g: k * d.n_cell * n_batch for k, g in enumerate(order)}


def calculate_lstm_gate_hybrid(g: str, code: int, inputs: dict, cell, w: dict, d: Direction,
                               hp: HybridLstmParameter, sums: dict, n_rows: int, address: int) -> np.ndarray:
    """One gate for n_rows rows.  ``inputs``: "input_to" / "aux_to" / "recurrent_to" -> those rows
    quantized, or None when they are all zero (TFLite skips the product); ``cell`` is None for the cell
    gate (no peephole); ``address``: where the gate's values start in TFLite's buffer (for Eigen)."""
    v = np.zeros((n_rows, d.n_cell), np.float32) if d.use_layer_norm else \
        np.broadcast_to(w[f"{g}_gate_bias"], (n_rows, d.n_cell)).astype(np.float32)
    for prefix in ("input_to", "aux_to", "recurrent_to"):
        role = f"{prefix}_{g}"
        if inputs[prefix] is not None and role in w:
            v = hybrid_matrix_batch_vector_multiply_accumulate(v, inputs[prefix], w[role], hp.weight_scales[role],
                                                               sums.get(role))
    if cell is not None and d.use_peephole:
        recovered = hp.weight_scales[f"cell_to_{g}"] * w[f"cell_to_{g}"].astype(np.float32)
        v = v + recovered * cell
    if d.use_layer_norm:
        v = mean_stddev_normalization(v) * w[f"{g}_layer_norm"] + w[f"{g}_gate_bias"]
    return apply_activation_to_vector(v, code, address)


def update_lstm_cell_float(c, i, f, z, use_cifg: bool, cell_clip: float) -> np.ndarray:
    """TFLite's ``UpdateLstmCellFloat``: c = f·c, then c += z·i (CIFG: i = 1 − f), then CwiseClipping."""
    i = np.float32(1.0) - f if use_cifg else i
    c = f * c + z * i
    return cwise_clipping(c, cell_clip) if cell_clip > 0 else c


def calculate_lstm_output_hybrid(c, o, code: int, w: dict, d: Direction, hp: HybridLstmParameter, sums: dict,
                                 proj_clip: float, address: int) -> np.ndarray:
    """m = o · g(c); with a projection: bias (or 0) + the quantized product P·m (skipped for an all-zero
    m), clipped."""
    m = o * apply_activation_to_vector(c, code, address)
    if not d.use_projection:
        return m
    rows = len(m)
    pb = w.get("projection_bias")
    out = np.zeros((rows, d.n_output), np.float32) if pb is None else \
        np.broadcast_to(pb, (rows, d.n_output)).astype(np.float32)
    if np.any(m):
        out = hybrid_matrix_batch_vector_multiply_accumulate(
            out, quantize_rows(m, hp.asymmetric_quantize_inputs), w["projection_weights"],
            hp.weight_scales["projection_weights"], sums.get("projection_weights"))
    return cwise_clipping(out, proj_clip) if proj_clip > 0 else out


def lstm_step_hybrid(x, aux, h, c, w: dict, d: Direction, hp: HybridLstmParameter, sums: dict, code: int,
                     cell_clip: float, proj_clip: float, offsets: dict, row0: int):
    """One step for the rows x [R, n_input] (R = n_batch time-major, 1 batch-major: row ``row0``);
    returns the new (h, c), float32."""
    asym = hp.asymmetric_quantize_inputs
    inputs = {"input_to": quantize_rows(x, asym) if np.any(x) else None,
              "aux_to": quantize_rows(aux, asym) if aux is not None and d.use_aux and np.any(aux) else None,
              "recurrent_to": quantize_rows(h, asym) if np.any(h) else None}
    n = len(x)

    def gate(g, act, cell):
        return calculate_lstm_gate_hybrid(g, act, inputs, cell, w, d, hp, sums, n, offsets[g] + row0 * d.n_cell)

    i = None if d.use_cifg else gate("input", SIGMOID, c)
    f = gate("forget", SIGMOID, c)
    z = gate("cell", code, None)
    c = update_lstm_cell_float(c, i, f, z, d.use_cifg, cell_clip)
    o = gate("output", SIGMOID, c)
    h = calculate_lstm_output_hybrid(c, o, code, w, d, hp, sums, proj_clip, offsets["cell"] + row0 * d.n_cell)
    return h, c


def eval_hybrid(tensors, d: Direction, x, aux, hp: HybridLstmParameter, code: int, cell_clip: float,
                proj_clip: float, time_major: bool, reverse: bool = False, sums: dict | None = None) -> np.ndarray:
    """Run one direction over x [T, B, n_input] (aux [T, B, n_aux] or None), updating its float state
    tensors; returns the outputs [T, B, n_output].  ``sums``: the row sums if already made."""
    T, B, _ = x.shape
    hs = tensors[d.output_state].reshape(B, d.n_output)
    cs = tensors[d.cell_state].reshape(B, d.n_cell)
    w = weights(tensors, d)
    sums = row_sums(w, hp) if sums is None else sums
    offsets = gate_offsets(d, B)
    out = np.empty((T, B, d.n_output), np.float32)
    order = range(T - 1, -1, -1) if reverse else range(T)
    groups = [slice(0, B)] if time_major else [slice(b, b + 1) for b in range(B)]
    for rows in groups:
        for t in order:
            h, c = lstm_step_hybrid(x[t, rows], None if aux is None else aux[t, rows], hs[rows], cs[rows], w, d,
                                    hp, sums, code, cell_clip, proj_clip, offsets, rows.start)
            hs[rows], cs[rows] = h, c
            out[t, rows] = h
    return out
