"""The float32 LSTM (TFLite's lstm_eval ``EvalFloat`` / ``LstmStepFloat``) of LSTM,
UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM; the step's formulas are in ``_lstm``.

Each step runs TFLite's three routines: ``CalculateLstmGateFloat`` per gate (bias + W·x (+ W_aux·aux)
+ R·h (+ p ⊙ c), layer norm, activation), ``UpdateLstmCellFloat`` (c = f ⊙ c + i ⊙ z, CIFG i = 1 − f,
clip) and ``CalculateLstmOutputFloat`` (h = o ⊙ g(c), projection, clip).  Two numpy shortcuts: the
input's products do not depend on the state, so those of every time step are one matrix product made
before the recurrence, and the four gates' recurrent products are one product per step.

TFLite multiplies with its float FullyConnected (Eigen's GEMM on x86), which adds in another order than
numpy's BLAS: the outputs agree with LiteRT to float rounding (about 1e-6 relative), not bit for bit.
Activation codes: TFLite leaves its buffer unwritten for NONE (stale memory), so NONE is refused; RELU,
RELU_N1_TO_1, RELU6, TANH and SIGN_BIT are computed.
"""

from __future__ import annotations

import numpy as np

from ._lstm import GATES, Direction

# Every array here is float32 (the checked tensors, their products and sums), so is every result.


def sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)


def activation(code: int, x: np.ndarray) -> np.ndarray:
    """The fused activation g (TFLite's ApplyActivationToVector)."""
    if code == 4:
        return np.tanh(x)
    if code == 1:
        return np.maximum(x, np.float32(0))
    if code == 2:
        return np.clip(x, np.float32(-1), np.float32(1))
    if code == 3:
        return np.clip(x, np.float32(0), np.float32(6))
    if code == 5:
        return np.signbit(x).astype(np.float32)
    raise ValueError(f"activation {code}")


def layer_norm(a: np.ndarray, coefficients, bias) -> np.ndarray:
    """(a − mean) / sqrt(var + 1e-8) · coefficients + bias over the last axis (MeanStddevNormalization,
    VectorBatchVectorCwiseProduct, VectorBatchVectorAdd), float32."""
    n = np.float32(a.shape[-1])
    mean = (a.sum(axis=-1, dtype=np.float32, keepdims=True) / n).astype(np.float32)
    diff = (a - mean).astype(np.float32)
    var = ((diff * diff).sum(axis=-1, dtype=np.float32, keepdims=True) / n).astype(np.float32)
    inv = (np.float32(1) / np.sqrt(var + np.float32(1e-8))).astype(np.float32)
    return (diff * inv * coefficients + bias).astype(np.float32)


def input_products(x, aux, w: dict, d: Direction, gates) -> np.ndarray:
    """W·x (+ W_aux·aux) of every step and gate, plus the gate biases (added after layer norm instead
    when there is one): x [T, B, n_input] → [T, B, len(gates), n_cell]."""
    T, B, _ = x.shape
    W = np.concatenate([w[f"input_to_{g}"] for g in gates], axis=0)
    pre = (x.reshape(T * B, -1) @ W.T).astype(np.float32)
    if d.use_aux and aux is not None:
        pre += aux.reshape(T * B, -1) @ np.concatenate([w[f"aux_to_{g}"] for g in gates], axis=0).T
    pre = pre.reshape(T, B, len(gates), d.n_cell)
    if not d.use_layer_norm:
        pre += np.stack([w[f"{g}_gate_bias"] for g in gates])
    return pre


def calculate_lstm_gate_float(g: str, a: np.ndarray, cell, w: dict, d: Direction, act) -> np.ndarray:
    """One gate from its products a [B, n_cell]: + p ⊙ c (peephole; ``cell`` None for the cell gate),
    layer norm, activation ``act``."""
    if cell is not None and d.use_peephole:
        a = a + w[f"cell_to_{g}"] * cell
    if d.use_layer_norm:
        a = layer_norm(a, w[f"{g}_layer_norm"], w[f"{g}_gate_bias"])
    return act(a)


def update_lstm_cell_float(c, i, f, z, cell_clip: float) -> np.ndarray:
    """c = f ⊙ c + i ⊙ z, clipped to ±cell_clip (i is 1 − f with CIFG)."""
    c = f * c + i * z
    return np.clip(c, -np.float32(cell_clip), np.float32(cell_clip)) if cell_clip > 0 else c


def calculate_lstm_output_float(c, o, code: int, w: dict, d: Direction, proj_clip: float) -> np.ndarray:
    """h = o ⊙ g(c); with a projection h = P·h + p_b, clipped to ±proj_clip."""
    m = o * activation(code, c)
    if not d.use_projection:
        return m
    h = m @ w["projection_weights"].T
    if "projection_bias" in w:
        h = h + w["projection_bias"]
    return np.clip(h, -np.float32(proj_clip), np.float32(proj_clip)) if proj_clip > 0 else h


def eval_float(x, aux, w: dict, d: Direction, h, c, code: int, cell_clip: float, proj_clip: float,
               reverse: bool = False) -> np.ndarray:
    """x [T, B, n_input] (aux [T, B, n_aux] or None); the state h [B, n_output], c [B, n_cell] is updated
    in place; returns the outputs [T, B, n_output] (the backward LSTM walks the steps from last to first)."""
    T, B, _ = x.shape
    gates = GATES[1:] if d.use_cifg else GATES
    k = {g: j for j, g in enumerate(gates)}
    pre = input_products(x.astype(np.float32, copy=False), aux, w, d, gates)
    if d.diagonal:
        R = np.stack([w[f"recurrent_to_{g}"] for g in gates])                   # [G, n_cell]
    else:
        R = np.concatenate([w[f"recurrent_to_{g}"] for g in gates], axis=0).T    # [n_output, G·n_cell]
    out = np.empty((T, B, d.n_output), np.float32)

    def act(v):
        return activation(code, v)

    for step in range(T):
        t = T - 1 - step if reverse else step
        recurrent = h[:, None, :] * R[None] if d.diagonal else (h @ R).reshape(B, len(gates), d.n_cell)
        a = pre[t] + recurrent
        f = calculate_lstm_gate_float("forget", a[:, k["forget"]], c, w, d, sigmoid)
        i = np.float32(1) - f if d.use_cifg else \
            calculate_lstm_gate_float("input", a[:, k["input"]], c, w, d, sigmoid)
        z = calculate_lstm_gate_float("cell", a[:, k["cell"]], None, w, d, act)
        c[...] = update_lstm_cell_float(c, i, f, z, cell_clip)
        o = calculate_lstm_gate_float("output", a[:, k["output"]], c, w, d, sigmoid)
        h[...] = calculate_lstm_output_float(c, o, code, w, d, proj_clip)
        out[t] = h
    return out
