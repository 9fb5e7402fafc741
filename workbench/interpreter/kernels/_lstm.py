"""What LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM share: the float32 LSTM
below, then the integer ("8x8_16") and the hybrid (dynamic-range) LSTM in their own sections.

One LSTM direction is a set of tensors (TFLite's input slots 1-23 of LSTM; a bidirectional LSTM
has two such sets and auxiliary-input weights):

    input_to_{input,forget,cell,output}_weights      [n_cell, n_input]  (input gate: absent = CIFG)
    recurrent_to_{input,forget,cell,output}_weights  [n_cell, n_output] ([n_cell] when diagonal)
    cell_to_{input,forget,output}_weights            [n_cell]           peephole, optional
    {input,forget,cell,output}_gate_bias             [n_cell]           (input: absent with CIFG)
    projection_weights [n_output, n_cell], projection_bias [n_output]  optional
    output_state [n_batch, n_output], cell_state [n_batch, n_cell]      variable tensors (the state)
    {input,forget,cell,output}_layer_norm_coefficients [n_cell]        optional (24-input form)

One time step (TFLite's LstmStepFloat; σ is the logistic function, g the fused activation, usually
tanh; W·x, R·h are matrix-vector products; ⊙ elementwise):

    i = σ(W_i·x + R_i·h + p_i ⊙ c + b_i)          (CIFG: i = 1 − f)
    f = σ(W_f·x + R_f·h + p_f ⊙ c + b_f)
    z = g(W_c·x + R_c·h + b_c)
    c' = f ⊙ c + i ⊙ z, clipped to ±cell_clip when cell_clip > 0
    o = σ(W_o·x + R_o·h + p_o ⊙ c' + b_o)        (the output gate's peephole sees the NEW cell)
    m = o ⊙ g(c')
    h' = P·m + p_b, clipped to ±proj_clip when proj_clip > 0 (projection); else h' = m

With layer normalisation a gate's pre-activation a (without the bias) becomes
    LN(a) ⊙ coefficients + bias,  LN(a) = (a − mean(a)) / sqrt(var(a) + 1e-8)
(mean and variance over the n_cell values of one batch row).  With diagonal recurrent tensors
(UNIDIRECTIONAL_SEQUENCE_LSTM v4) R·h is R ⊙ h.  The output at step t is h'.

Activation codes: TFLite's float LSTM leaves the buffer untouched for NONE (its
ApplyActivationToVector returns without writing), which makes the result depend on stale memory,
so NONE is refused here; RELU, RELU_N1_TO_1, RELU6, TANH and SIGN_BIT are computed.

The fast path computes the input contributions of all time steps with one matrix product and runs
the recurrence batched; the reference walks time steps and batch rows one at a time with the
formulas above.  Both are float32; TFLite sums in another order (ruy / Eigen), so results agree to
float rounding, not bit for bit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ...errors import ModelError
from ..registry import OpData, opdata
from ._common import F32
from ._elementwise import refuse

I8, I16, I32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)

ROLES = ("input_to_input", "input_to_forget", "input_to_cell", "input_to_output",
         "recurrent_to_input", "recurrent_to_forget", "recurrent_to_cell", "recurrent_to_output",
         "cell_to_input", "cell_to_forget", "cell_to_output",
         "input_gate_bias", "forget_gate_bias", "cell_gate_bias", "output_gate_bias",
         "projection_weights", "projection_bias")
LN_ROLES = ("input_layer_norm", "forget_layer_norm", "cell_layer_norm", "output_layer_norm")
AUX_ROLES = ("aux_to_input", "aux_to_forget", "aux_to_cell", "aux_to_output")
ACTIVATIONS = {1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}


@dataclass(frozen=True)
class Direction:
    """Tensor ids of one LSTM direction (-1 = absent) and what they imply."""

    tensors: dict          # role -> tensor id
    output_state: int
    cell_state: int
    n_cell: int
    n_output: int
    use_cifg: bool
    use_peephole: bool
    use_projection: bool
    use_layer_norm: bool
    diagonal: bool
    use_aux: bool
    kind: str = "float"


def activation_code(name: str) -> int:
    return {v: k for k, v in ACTIVATIONS.items()}[name]


def activation(code: int, x: np.ndarray) -> np.ndarray:
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


def sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)


def check_activation(node, code: int) -> None:
    if code not in ACTIVATIONS:
        refuse(node, f"fused activation {code} ({'NONE' if code == 0 else 'unknown'}): TFLite's float LSTM leaves "
                     f"its buffer unwritten for NONE (the result would be stale memory); supported: "
                     f"{', '.join(ACTIVATIONS.values())}")


def check_clips(node, cell_clip: float, proj_clip: float) -> None:
    if cell_clip < 0 or proj_clip < 0:
        refuse(node, f"cell_clip ({cell_clip}) and proj_clip ({proj_clip}) must not be negative")


def _shape_is(node, context, t, want, what):
    got = tuple(context.shape(t))
    if got != tuple(want):
        refuse(node, f"{what} '{context.name(t)}' has shape {list(got)}; expected {list(want)}")


def role_dtype(kind: str, role: str) -> np.dtype:
    """The dtype a tensor of ``role`` must have in a float, hybrid or integer (8x8_16) LSTM."""
    weight = role.startswith(("input_to_", "recurrent_to_", "aux_to_")) or role == "projection_weights"
    if kind == "float":
        return F32
    if kind == "hybrid":
        return I8 if weight or role.startswith("cell_to_") else F32
    if role.startswith("cell_to_") or role.endswith("layer_norm") or role == "cell_state":
        return I16
    if weight or role == "output_state":
        return I8
    return I32                                   # gate biases, projection bias


def direction(node, context, ids: dict, n_input: int, n_batch: int, *, diagonal=False, n_aux=0,
              prefix="", kind="float") -> Direction:
    """Check one direction's tensors (TFLite's CheckInputTensorDimensions) and size it.

    ``kind``: "float", "hybrid" (int8 weights, float biases and states) or "integer" (the 8x8_16
    integer LSTM: int8 weights and output state, int16 cell state, peephole and layer-norm weights,
    int32 biases)."""
    def t(role):
        return ids.get(role, -1)

    for role, tid in ids.items():
        if tid >= 0 and role not in ("output_state", "cell_state"):
            context.expect_dtype(node, tid, (role_dtype(kind, role),), prefix + role.replace("_", " "))
    for role in ("input_to_forget", "input_to_cell", "input_to_output", "recurrent_to_forget", "recurrent_to_cell",
                 "recurrent_to_output", "forget_gate_bias", "cell_gate_bias", "output_gate_bias"):
        if t(role) < 0:
            refuse(node, f"{prefix}{role.replace('_', ' ')} is absent; it is required")
    w = context.shape(t("input_to_output"))
    if len(w) != 2:
        refuse(node, f"{prefix}input_to_output_weights has shape {list(w)}; expected [n_cell, n_input]")
    n_cell = w[0]
    r = context.shape(t("recurrent_to_output"))
    if diagonal:
        if len(r) != 1:
            refuse(node, f"{prefix}recurrent_to_output_weights has shape {list(r)}; diagonal recurrent tensors "
                         f"are [n_cell]")
        n_output = n_cell
    else:
        if len(r) != 2:
            refuse(node, f"{prefix}recurrent_to_output_weights has shape {list(r)}; expected [n_cell, n_output]")
        n_output = r[1]
    use_cifg = t("input_to_input") < 0
    if (t("recurrent_to_input") < 0) != use_cifg:
        refuse(node, f"{prefix}input_to_input_weights and recurrent_to_input_weights must both be present or both "
                     f"absent (CIFG)")
    if (t("input_gate_bias") < 0) != use_cifg:
        refuse(node, f"{prefix}input_gate_bias must be present exactly when input_to_input_weights is (CIFG has "
                     f"neither)")
    for gate in ("input", "forget", "cell", "output"):
        if gate == "input" and use_cifg:
            continue
        _shape_is(node, context, t(f"input_to_{gate}"), (n_cell, n_input), f"{prefix}input_to_{gate}_weights")
        _shape_is(node, context, t(f"recurrent_to_{gate}"), (n_cell,) if diagonal else (n_cell, n_output),
                  f"{prefix}recurrent_to_{gate}_weights")
        _shape_is(node, context, t(f"{gate}_gate_bias"), (n_cell,), f"{prefix}{gate}_gate_bias")
    peep = [t(f"cell_to_{g}") >= 0 for g in ("forget", "output")]
    use_peephole = all(peep)
    if any(peep) != use_peephole or (t("cell_to_input") >= 0 and (use_cifg or not use_peephole)) or \
            (use_peephole and not use_cifg and t("cell_to_input") < 0):
        refuse(node, f"{prefix}peephole weights (cell_to_input/forget/output) are inconsistent: all or none "
                     f"(cell_to_input absent with CIFG)")
    for g in ("input", "forget", "output"):
        if t(f"cell_to_{g}") >= 0:
            _shape_is(node, context, t(f"cell_to_{g}"), (n_cell,), f"{prefix}cell_to_{g}_weights")
    use_projection = t("projection_weights") >= 0
    if t("projection_bias") >= 0 and not use_projection:
        refuse(node, f"{prefix}projection_bias without projection_weights")
    if use_projection:
        _shape_is(node, context, t("projection_weights"), (n_output, n_cell), f"{prefix}projection_weights")
        if t("projection_bias") >= 0:
            _shape_is(node, context, t("projection_bias"), (n_output,), f"{prefix}projection_bias")
    elif n_output != n_cell:
        refuse(node, f"{prefix}n_output {n_output} differs from n_cell {n_cell} without projection weights")
    if diagonal and use_projection:
        refuse(node, "diagonal recurrent tensors with a projection are not supported")
    use_ln = t("forget_layer_norm") >= 0
    if use_ln:
        if (t("input_layer_norm") < 0) != use_cifg:
            refuse(node, f"{prefix}input_layer_norm_coefficients must be present exactly when not CIFG")
        for g in ("input", "forget", "cell", "output"):
            if g == "input" and use_cifg:
                continue
            if t(f"{g}_layer_norm") < 0:
                refuse(node, f"{prefix}{g}_layer_norm_coefficients is absent while forget's is present")
            _shape_is(node, context, t(f"{g}_layer_norm"), (n_cell,), f"{prefix}{g}_layer_norm_coefficients")
    use_aux = t("aux_to_forget") >= 0
    if use_aux:
        for g in ("input", "forget", "cell", "output"):
            if g == "input" and use_cifg:
                continue
            if t(f"aux_to_{g}") < 0:
                refuse(node, f"{prefix}aux_input_to_{g}_weights is absent while others are present")
            _shape_is(node, context, t(f"aux_to_{g}"), (n_cell, n_aux), f"{prefix}aux_input_to_{g}_weights")
    os_t, cs_t = t("output_state"), t("cell_state")
    for what, st, n in (("output_state", os_t, n_output), ("cell_state", cs_t, n_cell)):
        if st < 0:
            refuse(node, f"{prefix}{what} is absent; it is required (a variable tensor)")
        if not context.tensor_meta(st).is_variable:
            refuse(node, f"{prefix}{what} '{context.name(st)}' is not a variable tensor (is_variable); TFLite "
                         f"keeps the LSTM state in variable tensors")
        context.expect_dtype(node, st, (role_dtype(kind, what),), prefix + what)
        if int(np.prod(context.shape(st))) != n_batch * n:
            raise ModelError(f"{node.op_name} (node {node.index}): {prefix}{what} '{context.name(st)}' has shape "
                             f"{list(context.shape(st))}; it must hold n_batch * {n} = {n_batch * n} values")
    return Direction(dict(ids), os_t, cs_t, n_cell, n_output, use_cifg, use_peephole, use_projection, use_ln,
                     diagonal, use_aux, kind)


# ----------------------------------------------------------------------------------------------
# arithmetic


def _weights(tensors, d: Direction) -> dict:
    return {role: (tensors[tid] if tid >= 0 else None) for role, tid in d.tensors.items()}


def _layer_norm(a: np.ndarray, coef, bias) -> np.ndarray:
    """(a - mean) / sqrt(var + 1e-8) * coef + bias over the last axis, float32."""
    n = np.float32(a.shape[-1])
    mean = (a.sum(axis=-1, dtype=np.float32, keepdims=True) / n).astype(np.float32)
    diff = (a - mean).astype(np.float32)
    var = ((diff * diff).sum(axis=-1, dtype=np.float32, keepdims=True) / n).astype(np.float32)
    inv = (np.float32(1) / np.sqrt(var + np.float32(1e-8))).astype(np.float32)
    return (diff * inv * coef + bias).astype(np.float32)


def run_fast(x: np.ndarray, aux, w: dict, d: Direction, h: np.ndarray, c: np.ndarray, act: int,
             cell_clip: float, proj_clip: float, reverse: bool = False) -> np.ndarray:
    """x [T, B, n_input] (aux [T, B, n_aux] or None), state h [B, n_output], c [B, n_cell] updated in
    place; returns the outputs [T, B, n_output]."""
    T, B, _ = x.shape
    gates = ("forget", "cell", "output") if d.use_cifg else ("input", "forget", "cell", "output")
    W = np.concatenate([w[f"input_to_{g}"] for g in gates], axis=0)
    pre = (x.reshape(T * B, -1) @ W.T).astype(np.float32)
    if d.use_aux and aux is not None:
        Wa = np.concatenate([w[f"aux_to_{g}"] for g in gates], axis=0)
        pre += aux.reshape(T * B, -1) @ Wa.T
    nc = d.n_cell
    pre = pre.reshape(T, B, len(gates), nc)
    bias = np.stack([w[f"{g}_gate_bias"] for g in gates])
    if not d.use_layer_norm:
        pre += bias
    if d.diagonal:
        R = np.stack([w[f"recurrent_to_{g}"] for g in gates])             # [G, n_cell]
    else:
        R = np.concatenate([w[f"recurrent_to_{g}"] for g in gates], axis=0).T   # [n_output, G * n_cell]
    k = {g: j for j, g in enumerate(gates)}
    out = np.empty((T, B, d.n_output), np.float32)
    clip_c, clip_p = np.float32(cell_clip), np.float32(proj_clip)
    for step in range(T):
        tt = T - 1 - step if reverse else step
        if d.diagonal:
            a = pre[tt] + h[:, None, :] * R[None]
        else:
            a = pre[tt] + (h @ R).reshape(B, len(gates), nc)
        a = a.astype(np.float32)

        def finish(g, v):
            if d.use_layer_norm:
                return _layer_norm(v, w[f"{g}_layer_norm"], w[f"{g}_gate_bias"])
            return v

        fa = a[:, k["forget"]]
        if d.use_peephole:
            fa = fa + w["cell_to_forget"] * c
        f = sigmoid(finish("forget", fa))
        if d.use_cifg:
            i = (np.float32(1) - f).astype(np.float32)
        else:
            ia = a[:, k["input"]]
            if d.use_peephole:
                ia = ia + w["cell_to_input"] * c
            i = sigmoid(finish("input", ia))
        z = activation(act, finish("cell", a[:, k["cell"]]))
        c[...] = f * c + i * z
        if cell_clip > 0:
            np.clip(c, -clip_c, clip_c, out=c)
        oa = a[:, k["output"]]
        if d.use_peephole:
            oa = oa + w["cell_to_output"] * c
        o = sigmoid(finish("output", oa))
        m = (o * activation(act, c)).astype(np.float32)
        if d.use_projection:
            hn = m @ w["projection_weights"].T
            if w["projection_bias"] is not None:
                hn = hn + w["projection_bias"]
            if proj_clip > 0:
                hn = np.clip(hn, -clip_p, clip_p)
            h[...] = hn
        else:
            h[...] = m
        out[tt] = h
    return out


def run_reference(x, aux, w, d: Direction, h, c, act, cell_clip, proj_clip, reverse=False) -> np.ndarray:
    """The same, one time step and one batch row at a time, each gate written out."""
    T, B, _ = x.shape
    out = np.empty((T, B, d.n_output), np.float32)
    order = range(T - 1, -1, -1) if reverse else range(T)

    def gate(g, xb, ab, hb, cb, peep):
        v = w[f"input_to_{g}"] @ xb
        if d.use_aux and ab is not None:
            v = v + w[f"aux_to_{g}"] @ ab
        v = v + (w[f"recurrent_to_{g}"] * hb if d.diagonal else w[f"recurrent_to_{g}"] @ hb)
        if peep:
            v = v + w[f"cell_to_{g}"] * cb
        v = v.astype(np.float32)
        if d.use_layer_norm:
            mean = np.float32(v.mean(dtype=np.float32))
            var = np.float32(((v - mean) ** 2).mean(dtype=np.float32))
            return ((v - mean) / np.sqrt(var + np.float32(1e-8)) * w[f"{g}_layer_norm"]
                    + w[f"{g}_gate_bias"]).astype(np.float32)
        return (v + w[f"{g}_gate_bias"]).astype(np.float32)

    for t in order:
        for b in range(B):
            xb, hb, cb = x[t, b], h[b].copy(), c[b].copy()
            ab = aux[t, b] if aux is not None else None
            f = sigmoid(gate("forget", xb, ab, hb, cb, d.use_peephole))
            i = 1 - f if d.use_cifg else sigmoid(gate("input", xb, ab, hb, cb, d.use_peephole))
            z = activation(act, gate("cell", xb, ab, hb, cb, False))
            cn = (f * cb + i * z).astype(np.float32)
            if cell_clip > 0:
                cn = np.clip(cn, -np.float32(cell_clip), np.float32(cell_clip))
            o = sigmoid(gate("output", xb, ab, hb, cn, d.use_peephole))
            m = (o * activation(act, cn)).astype(np.float32)
            if d.use_projection:
                m = w["projection_weights"] @ m
                if w["projection_bias"] is not None:
                    m = m + w["projection_bias"]
                if proj_clip > 0:
                    m = np.clip(m, -np.float32(proj_clip), np.float32(proj_clip))
            h[b], c[b] = m, cn
            out[t, b] = m
    return out


def run(tensors, d: Direction, x, aux, act, cell_clip, proj_clip, reverse, reference) -> np.ndarray:
    """Run one direction on x [T, B, n_input], updating its state tensors; outputs [T, B, n_output]."""
    B = x.shape[1]
    h = tensors[d.output_state].reshape(B, d.n_output)
    c = tensors[d.cell_state].reshape(B, d.n_cell)
    fn = run_reference if reference else run_fast
    return fn(x.astype(np.float32, copy=False), aux, _weights(tensors, d), d, h, c, act, cell_clip, proj_clip, reverse)


# ----------------------------------------------------------------------------------------------
# integer LSTM ("8x8_16": int8 input / output state / weights, int16 cell state)
#
# What the TensorFlow converter emits for a full-integer Keras LSTM.  Every gate is an int16 value in
# Q3.12 (scale 2^-12) -- or, with layer normalisation, in the scale of the operator's intermediate
# tensors 0-3; the cell state is int16 with a power-of-two scale 2^cell_scale; intermediate 4
# ("effective hidden") holds the scale and zero point of o ⊙ tanh(c) before the projection.
#
# prepare (TFLite's PopulateQuantizedLstmParams8x8_16; scales are float32 products):
#   effective_input_to_<g>_scale     = w_scale · input_scale / gate_scale[g]
#   effective_recurrent_to_<g>_scale = w_scale · output_state_scale / gate_scale[g]
#   effective_cell_to_<g>_scale      = 2^cell_scale · w_scale / gate_scale[g]      (peephole)
#   effective_hidden_scale           = 2^-15 / hidden_scale · 2^-15
#   effective_proj_scale             = projection_scale · hidden_scale / output_state_scale
#   each as QuantizeMultiplier → (<name>_a, <name>_b); layer_norm_<g>_scale_a/b from the layer-norm
#   weights' scale; the zero points are folded into int32 biases once:
#   input_to_<g>_effective_bias = bias (none with layer norm) − input_zp · Σ_row w,
#   recurrent_to_<g>_effective_bias = −output_state_zp · Σ_row w,
#   projection_effective_bias = projection_bias + hidden_zp · Σ_row w.
#
# one step, for every gate g (LstmStepInteger8x8_16):
#   g = sat16(MBQM(W·x + bias_x, input scale));  g = sat16(MBQM(R·h + bias_h, recurrent scale) + g)
#   peephole: g = sat16(MBQM(p ⊙ c, cell scale) + g)       -- TFLite walks n_output values per row
#   layer norm (integer, see quant.lstm_layer_norm_int16), then gemmlowp sigmoid (input, forget,
#   output) or tanh (cell gate) on Q3.12 → Q0.15
#   c = sat16(RDBPOT(f · c, 15) + RDBPOT(i · z, 30 + cell_scale))   (CIFG: i = 32767 − f); clip
#   m = tanh(c) (gemmlowp, 15 + cell_scale integer bits) · o, MBQM by the hidden scale, + hidden_zp,
#   int8 -- with a projection: + (−hidden_zp), then the int8 projection (MBQM, + output_state_zp).
# RDBPOT = rounding divide by a power of two (ties away from zero), MBQM = MultiplyByQuantizedMultiplier.


GATES = ("input", "forget", "cell", "output")


def _scale(context, t) -> np.float32:
    from ..quant import tensor_scale_zp
    return np.float32(tensor_scale_zp(context, t)[0])


def _zp(context, t) -> int:
    from ..quant import tensor_scale_zp
    return int(tensor_scale_zp(context, t)[1])


@opdata
class IntegerLstmParameter(OpData):
    """TFLite's ``lstm_eval::IntegerLstmParameter`` (the 8x8_16 fields) plus the real scales."""

    effective_scales: dict              # name -> real (float32) multiplier before QuantizeMultiplier
    multipliers: dict                   # name -> (TFLite's <name>_a, <name>_b)
    effective_biases: dict              # name -> int32 array (input_to_forget_effective_bias, ...)
    quantized_cell_clip: int
    quantized_proj_clip: int
    cell_scale: int
    variance_guards: dict               # gate -> <gate>_variance_guard
    hidden_zp: int
    input_zero_point: int
    output_state_zero_point: int


def integer_params(node, context, d: Direction, input_t: int, output_t: int, cell_clip: float, proj_clip: float,
                   *, check_cell_scale: bool) -> IntegerLstmParameter:
    """prepare of the 8x8_16 integer LSTM (see the section comment)."""
    from .. import quant

    ids = d.tensors
    if d.diagonal:
        refuse(node, "diagonal recurrent tensors are float only")
    if d.use_peephole and d.n_output != d.n_cell:
        refuse(node, f"peephole weights with a projection (n_output {d.n_output} ≠ n_cell {d.n_cell}): TFLite's "
                     f"integer peephole walks n_output values per row of the cell state (not supported)")
    for role in ids:
        if role.startswith(("input_to_", "recurrent_to_", "projection_w")) and ids[role] >= 0 \
                and not context.is_constant(ids[role]):
            refuse(node, f"{role.replace('_', ' ')} must be a constant tensor")
    inter = tuple(getattr(node.operator, "intermediates", None) or ()) if node.operator is not None else ()
    if len(inter) != 5:
        what = "12 (the 8x8_8 kind, which needs LSTM's own kernel)" if len(inter) == 12 else str(len(inter))
        refuse(node, f"an integer (int8) LSTM needs 5 intermediate tensors (the 8x8_16 kind); it has {what}")
    gate_scales, gate_zps = [], []
    for k in range(4):
        if d.use_layer_norm:
            sc, zps, _ = quant.quant_params(context, inter[k])
            if len(sc) == 0:
                refuse(node, f"intermediate {k} ('{context.name(inter[k])}') has no quantization: a layer-norm "
                             f"integer LSTM takes its gate scales from it")
            gate_scales.append(np.float32(sc[0]))
            gate_zps.append(int(zps[0]))
        else:
            gate_scales.append(np.float32(2.0 ** -12))
            gate_zps.append(0)
    hsc, hzp, _ = quant.quant_params(context, inter[4])
    if len(hsc) == 0:
        refuse(node, f"intermediate 4 ('{context.name(inter[4])}', the effective hidden state) has no quantization")
    hidden_scale, hidden_zp = np.float32(hsc[0]), int(hzp[0])

    def wscale(role):
        return _scale(context, ids[role]) if ids.get(role, -1) >= 0 else np.float32(1.0)

    input_scale, input_zp = _scale(context, input_t), _zp(context, input_t)
    os_scale, os_zp = _scale(context, d.output_state), _zp(context, d.output_state)
    cs_scale = _scale(context, d.cell_state)
    ok, cell_scale = quant.checked_log2(float(cs_scale))
    if not ok:
        refuse(node, f"the int16 cell state's scale {float(cs_scale):.6g} is not a power of two (TFLite requires it)")
    if check_cell_scale and cell_scale > -9:
        refuse(node, f"the cell state's scale 2^{cell_scale} must be at most 2^-9 (TFLite's LSTM checks it)")
    if not 0 <= 15 + cell_scale <= 6 or not 0 <= 30 + cell_scale <= 31:
        refuse(node, f"the cell state's scale 2^{cell_scale} is outside what TFLite's integer tanh handles "
                     f"(2^-15 .. 2^-9)")
    eff = {}
    for k, g in enumerate(GATES):
        if g == "input" and d.use_cifg:
            continue
        eff[f"effective_input_to_{g}_scale"] = np.float32(wscale(f"input_to_{g}") * input_scale / gate_scales[k])
        eff[f"effective_recurrent_to_{g}_scale"] = np.float32(wscale(f"recurrent_to_{g}") * os_scale / gate_scales[k])
        if d.use_peephole and g != "cell":
            eff[f"effective_cell_to_{g}_scale"] = np.float32(
                2.0 ** cell_scale * float(wscale(f"cell_to_{g}")) / float(gate_scales[k]))
    eff["effective_hidden_scale"] = np.float32(2.0 ** -15 / float(hidden_scale) * 2.0 ** -15)
    if d.use_projection:
        eff["effective_proj_scale"] = np.float32(wscale("projection_weights") * hidden_scale / os_scale)
    if d.use_layer_norm:
        for g in GATES:
            if not (g == "input" and d.use_cifg):
                eff[f"layer_norm_{g}_scale"] = wscale(f"{g}_layer_norm")
    mult = {name: quant.quantize_multiplier(float(v)) for name, v in eff.items()}
    guards = {}
    for g in GATES:
        ln = eff.get(f"layer_norm_{g}_scale", np.float32(1.0))
        guards[g] = max(1, int(np.float32(10000) * np.float32(ln)))

    def row_sums(role):
        return context.value(ids[role]).astype(np.int64).sum(axis=1)

    def bias(role):
        return context.value(ids[role]).astype(np.int64)

    biases = {}
    for g in GATES:
        if g == "input" and d.use_cifg:
            continue
        b = np.zeros(d.n_cell, np.int64) if d.use_layer_norm else bias(f"{g}_gate_bias")
        biases[f"input_to_{g}_effective_bias"] = quant.wrap_int32(b + row_sums(f"input_to_{g}") * (-input_zp))
        biases[f"recurrent_to_{g}_effective_bias"] = quant.wrap_int32(row_sums(f"recurrent_to_{g}") * (-os_zp))
    if d.use_projection:
        pb = bias("projection_bias") if ids.get("projection_bias", -1) >= 0 else np.zeros(d.n_output, np.int64)
        biases["projection_effective_bias"] = quant.wrap_int32(pb + row_sums("projection_weights") * hidden_zp)
    qcc = 0
    if cell_clip > 0:
        qcc = int(np.float32(min(max(np.float32(cell_clip) / cs_scale, np.float32(-32768.0)), np.float32(32767.0))))
    qpc = 0
    if proj_clip > 0:
        out_scale = _scale(context, output_t)
        qpc = int(np.float32(min(max(np.float32(proj_clip) / out_scale, np.float32(-128.0)), np.float32(127.0))))
    return IntegerLstmParameter({k: float(v) for k, v in eff.items()}, mult, biases, qcc, qpc, cell_scale, guards,
                                hidden_zp, input_zp, os_zp)


@functools.lru_cache(maxsize=None)
def int16_activation_table(name: str, integer_bits: int) -> np.ndarray:
    """gemmlowp's ``name`` ("logistic" or "tanh") on every int16 input with ``integer_bits`` integer bits,
    as an int64 table indexed by value + 32768.  Made once from quant.fp_logistic / quant.fp_tanh
    themselves, so a lookup is bit for bit the function; the fast integer step looks values up instead
    of running the fixed-point polynomial on each gate (the reference step still runs it)."""
    from .. import quant
    fn = quant.fp_tanh if name == "tanh" else quant.fp_logistic
    table = fn(np.arange(-32768, 32768, dtype=np.int64), integer_bits, 16).astype(np.int64)
    table.flags.writeable = False
    return table


def _int_weights(tensors, d: Direction) -> dict:
    return {role: (tensors[tid].astype(np.int64) if tid >= 0 else None) for role, tid in d.tensors.items()
            if role not in ("output_state", "cell_state")}


def _integer_step(x, h, c, w, d: Direction, p: IntegerLstmParameter):
    """One time step on int64 arrays x [B, n_input], h [B, n_output], c [B, n_cell]; returns (h, c)."""
    from .. import quant
    m, bias = p.multipliers, p.effective_biases

    def mbqm(v, name):
        return quant.multiply_by_quantized_multiplier_array(quant.wrap_int32(v), *m[name])

    def gate(g):
        v = quant.saturate_int16(mbqm(x @ w[f"input_to_{g}"].T + bias[f"input_to_{g}_effective_bias"],
                                      f"effective_input_to_{g}_scale"))
        v = quant.saturate_int16(mbqm(h @ w[f"recurrent_to_{g}"].T + bias[f"recurrent_to_{g}_effective_bias"],
                                      f"effective_recurrent_to_{g}_scale") + v)
        if d.use_peephole and g != "cell":
            v = quant.saturate_int16(quant.multiply_by_quantized_multiplier_array(
                w[f"cell_to_{g}"] * c, *m[f"effective_cell_to_{g}_scale"]) + v)
        if d.use_layer_norm:
            a, b = m[f"layer_norm_{g}_scale"]
            v = quant.lstm_layer_norm_int16(v, w[f"{g}_layer_norm"], w[f"{g}_gate_bias"], a, b, p.variance_guards[g])
        return int16_activation_table("tanh" if g == "cell" else "logistic", 3)[v + 32768]

    i = None if d.use_cifg else gate("input")
    f = gate("forget")
    z = gate("cell")
    c = quant.wrap_bits(quant.rounding_divide_by_pot_array(f * c, 15), 16)
    first = (32767 - f) if d.use_cifg else i
    s = quant.wrap_bits(quant.rounding_divide_by_pot_array(first * z, 30 + p.cell_scale), 16)
    c = quant.saturate_int16(c + s)
    if p.quantized_cell_clip > 0:
        c = np.clip(c, -p.quantized_cell_clip, p.quantized_cell_clip)
    o = gate("output")
    t = int16_activation_table("tanh", 15 + p.cell_scale)[c + 32768]
    hs_a, hs_b = m["effective_hidden_scale"]
    if d.use_projection:
        hid = np.clip(quant.multiply_by_quantized_multiplier_array(o * t, hs_a, hs_b) - p.hidden_zp, -128, 127)
        acc = hid @ w["projection_weights"].T + bias["projection_effective_bias"]
        h = np.clip(mbqm(acc, "effective_proj_scale") + p.output_state_zero_point, -128, 127)
        if p.quantized_proj_clip > 0:
            h = np.clip(h, -p.quantized_proj_clip, p.quantized_proj_clip)
    else:
        h = np.clip(quant.multiply_by_quantized_multiplier_array(o * t, hs_a, hs_b) + p.hidden_zp, -128, 127)
    return h, c


def _integer_step_reference(x, h, c, w, d: Direction, p: IntegerLstmParameter):
    """The same step on Python ints, one batch row and one cell at a time."""
    from .. import quant
    m, bias = p.multipliers, p.effective_biases
    mbqm = quant.multiply_by_quantized_multiplier
    B, n_in = x.shape

    def sat(v, lo=-32768, hi=32767):
        return max(lo, min(hi, v))

    def dot(matrix, vector, r, b0):
        return int(quant.wrap_int32(int(b0) + sum(int(matrix[r, k]) * int(vector[k]) for k in range(len(vector)))))

    def gate(g, b, cell):
        v = np.empty(d.n_cell, np.int64)
        for r in range(d.n_cell):
            a = sat(mbqm(dot(w[f"input_to_{g}"], x[b], r, bias[f"input_to_{g}_effective_bias"][r]),
                         *m[f"effective_input_to_{g}_scale"]))
            a = sat(mbqm(dot(w[f"recurrent_to_{g}"], h[b], r, bias[f"recurrent_to_{g}_effective_bias"][r]),
                         *m[f"effective_recurrent_to_{g}_scale"]) + a)
            if d.use_peephole and g != "cell":
                a = sat(mbqm(int(w[f"cell_to_{g}"][r]) * int(cell[r]), *m[f"effective_cell_to_{g}_scale"]) + a)
            v[r] = a
        if d.use_layer_norm:
            v = quant.lstm_layer_norm_int16(v[None], w[f"{g}_layer_norm"], w[f"{g}_gate_bias"],
                                            *m[f"layer_norm_{g}_scale"], p.variance_guards[g])[0]
        return quant.fp_tanh(v, 3, 16) if g == "cell" else quant.fp_logistic(v, 3, 16)

    h_new, c_new = np.empty_like(h), np.empty_like(c)
    for b in range(B):
        f, z = gate("forget", b, c[b]), gate("cell", b, c[b])
        i = 32767 - f if d.use_cifg else gate("input", b, c[b])
        for r in range(d.n_cell):
            kept = int(quant.wrap_bits(quant.rounding_divide_by_pot(int(f[r]) * int(c[b, r]), 15), 16))
            new = int(quant.wrap_bits(quant.rounding_divide_by_pot(int(i[r]) * int(z[r]), 30 + p.cell_scale), 16))
            v = sat(kept + new)
            if p.quantized_cell_clip > 0:
                v = sat(v, -p.quantized_cell_clip, p.quantized_cell_clip)
            c_new[b, r] = v
        o = gate("output", b, c_new[b])             # the output gate's peephole sees the new cell state
        t = quant.fp_tanh(c_new[b], 15 + p.cell_scale, 16)
        hidden = [mbqm(int(o[r]) * int(t[r]), *m["effective_hidden_scale"]) for r in range(d.n_cell)]
        if not d.use_projection:
            h_new[b] = [sat(v + p.hidden_zp, -128, 127) for v in hidden]
            continue
        hid = [sat(v - p.hidden_zp, -128, 127) for v in hidden]
        for u in range(d.n_output):
            v = sat(mbqm(dot(w["projection_weights"], hid, u, bias["projection_effective_bias"][u]),
                         *m["effective_proj_scale"]) + p.output_state_zero_point, -128, 127)
            if p.quantized_proj_clip > 0:
                v = sat(v, -p.quantized_proj_clip, p.quantized_proj_clip)
            h_new[b, u] = v
    return h_new, c_new


def run_integer(tensors, d: Direction, x, p: IntegerLstmParameter, reverse=False, reference=False) -> np.ndarray:
    """Run the 8x8_16 integer LSTM over x [T, B, n_input] (int8), updating the state tensors in place;
    returns the int8 outputs [T, B, n_output]."""
    T, B, _ = x.shape
    hs = tensors[d.output_state].reshape(B, d.n_output)
    cs = tensors[d.cell_state].reshape(B, d.n_cell)
    h, c = hs.astype(np.int64), cs.astype(np.int64)
    w = _int_weights(tensors, d)
    step = _integer_step_reference if reference else _integer_step
    out = np.empty((T, B, d.n_output), np.int8)
    for k in range(T):
        t = T - 1 - k if reverse else k
        h, c = step(x[t].astype(np.int64), h, c, w, d, p)
        out[t] = h
    hs[...] = h
    cs[...] = c
    return out


# ----------------------------------------------------------------------------------------------
# hybrid LSTM (float32 input, states, biases and output; int8 weights with one scale each)
#
# TFLite's LstmStepHybrid, every float operation in float32 and in its order (litert x86):
#   * the input, the output state (and aux input) are quantized row by row each step (symmetric, or
#     asymmetric with asymmetric_quantize_inputs: quant.symmetric_quantize_rows / asymmetric_...);
#     a block that is entirely zero is not quantized and its product is skipped;
#   * gate = bias (0 with layer norm); gate += float(Σ q·w − zp·row_sum) · (row_scale · w_scale) for
#     the input, aux input and recurrent products in that order; peephole: gate += (p_scale·p) ⊙ c;
#     layer norm: (gate − mean)·(1/sqrt(var + 1e-8)) with sums taken in order, ·coefficients, +bias;
#   * sigmoid / tanh are Eigen's (quant.eigen_apply_f32); a gate buffer's position in TFLite's scratch
#     buffer decides which values take Eigen's one-value path (see quant's "recurrent" section);
#   * c = f·c; c += z·(1 − f) (CIFG) or z·i; clip; m = o · act(c); projection: bias + the same
#     quantized product (skipped when m is all zero), clip.


@opdata
class HybridLstmParameter(OpData):
    """What prepare computes for a hybrid LSTM direction."""

    asymmetric_quantize_inputs: bool
    weight_scales: dict              # role -> float32 scale of the int8 weights
    row_sums: dict                   # role -> int32 row sums (SSE-style), used with asymmetric inputs
    time_major: bool                 # batch-major inputs are stepped one batch row at a time
    gate_offsets: dict               # gate -> start of its buffer in TFLite's scratch (floats), for Eigen
    n_batch: int


def hybrid_params(node, context, d: Direction, asymmetric: bool, time_major: bool, n_batch: int = None
                  ) -> HybridLstmParameter:
    from .. import quant
    ids = d.tensors
    scales, sums = {}, {}
    for role, tid in ids.items():
        if tid < 0 or role_dtype("hybrid", role) != I8:
            continue
        sc, zps, _ = quant.quant_params(context, tid)
        if len(sc) != 1:
            refuse(node, f"{role.replace('_', ' ')} '{context.name(tid)}' has {len(sc)} scales; a hybrid LSTM takes "
                         f"one scale per weight tensor")
        scales[role] = np.float32(sc[0])
        if not role.startswith("cell_to_"):
            if not context.is_constant(tid):
                refuse(node, f"{role.replace('_', ' ')} must be a constant tensor")
            sums[role] = quant.sse_row_sums(context.value(tid))
    if n_batch is None:
        shape = context.shape(node.inputs[0])
        n_batch = shape[1] if time_major else shape[0]
    order = ("cell", "forget", "output") if d.use_cifg else ("input", "cell", "forget", "output")
    offsets = {g: k * d.n_cell * n_batch for k, g in enumerate(order)}
    return HybridLstmParameter(asymmetric, scales, sums, time_major, offsets, n_batch)


def _quantize_rows(v, asymmetric):
    from .. import quant
    if asymmetric:
        return quant.asymmetric_quantize_rows(v)
    q, sf = quant.symmetric_quantize_rows(v)
    return q, sf, np.zeros(len(sf), np.int32)


def _hybrid_product(gate, quantized, w, role, hp: HybridLstmParameter):
    """gate += float(q·wᵀ − zp·row_sums) · float32(row scale · weight scale), per row."""
    from .. import quant
    q, sf, zp = quantized
    acc = q.astype(np.int64) @ w.astype(np.int64).T
    if hp.asymmetric_quantize_inputs:
        acc = quant.wrap_int32(acc - zp.astype(np.int64)[:, None] * hp.row_sums[role][None, :])
    scale = (sf * hp.weight_scales[role]).astype(np.float32)
    return (gate + (acc.astype(np.float32) * scale[:, None]).astype(np.float32)).astype(np.float32)


def mean_stddev_normalization(v: np.ndarray) -> np.ndarray:
    """TFLite's MeanStddevNormalization on float32 rows: sums taken left to right in float32."""
    n = np.float32(v.shape[-1])
    total = np.cumsum(v, axis=-1, dtype=np.float32)[..., -1:]
    mean = (total / n).astype(np.float32)
    diff = (v - mean).astype(np.float32)
    sq = np.cumsum((diff * diff).astype(np.float32), axis=-1, dtype=np.float32)[..., -1:]
    variance = (sq / n).astype(np.float32)
    inv = (np.float32(1.0) / np.sqrt((variance + np.float32(1e-8)).astype(np.float32))).astype(np.float32)
    return (diff * inv).astype(np.float32)


def _float_activation(code: int, v: np.ndarray, address: int) -> np.ndarray:
    from .. import quant
    if code == 4:
        return quant.eigen_apply_f32("tanh", v).reshape(v.shape)
    if code == 6:
        return quant.eigen_apply_f32("logistic", v, address).reshape(v.shape)
    if code == 5:
        return np.signbit(v).astype(np.float32)
    return quant.apply_float_activation(v, code)


def _hybrid_step(x, aux, h, c, w, d: Direction, hp: HybridLstmParameter, act: int, cell_clip, proj_clip, row0):
    """One step for the rows x [R, n_input] (R = n_batch time-major, 1 batch-major); h, c float32."""
    asym = hp.asymmetric_quantize_inputs
    qx = None if not np.any(x) else _quantize_rows(x, asym)
    qa = None if aux is None or not np.any(aux) else _quantize_rows(aux, asym)
    qh = None if not np.any(h) else _quantize_rows(h, asym)
    R = x.shape[0]

    def gate(g, code, cell):
        v = np.zeros((R, d.n_cell), np.float32) if d.use_layer_norm else \
            np.broadcast_to(w[f"{g}_gate_bias"], (R, d.n_cell)).astype(np.float32)
        if qx is not None:
            v = _hybrid_product(v, qx, w[f"input_to_{g}"], f"input_to_{g}", hp)
        if qa is not None and d.use_aux:
            v = _hybrid_product(v, qa, w[f"aux_to_{g}"], f"aux_to_{g}", hp)
        if qh is not None:
            v = _hybrid_product(v, qh, w[f"recurrent_to_{g}"], f"recurrent_to_{g}", hp)
        if cell is not None and d.use_peephole:
            recovered = (hp.weight_scales[f"cell_to_{g}"] * w[f"cell_to_{g}"].astype(np.float32)).astype(np.float32)
            v = (v + (recovered * cell).astype(np.float32)).astype(np.float32)
        if d.use_layer_norm:
            v = (mean_stddev_normalization(v) * w[f"{g}_layer_norm"]).astype(np.float32)
            v = (v + w[f"{g}_gate_bias"]).astype(np.float32)
        return _float_activation(code, v, hp.gate_offsets[g] + row0 * d.n_cell)

    i = None if d.use_cifg else gate("input", 6, c)
    f = gate("forget", 6, c)
    z = gate("cell", act, None)
    c = (f * c).astype(np.float32)
    i = (np.float32(1.0) - f).astype(np.float32) if d.use_cifg else i
    c = (c + (z * i).astype(np.float32)).astype(np.float32)
    if cell_clip > 0:
        c = clip_float(c, cell_clip)
    o = gate("output", 6, c)
    m = (o * _float_activation(act, c, hp.gate_offsets["cell"] + row0 * d.n_cell)).astype(np.float32)
    if not d.use_projection:
        return m, c
    pb = w.get("projection_bias")
    out = np.zeros((R, d.n_output), np.float32) if pb is None else \
        np.broadcast_to(pb, (R, d.n_output)).astype(np.float32)
    if np.any(m):
        out = _hybrid_product(out, _quantize_rows(m, asym), w["projection_weights"], "projection_weights", hp)
    if proj_clip > 0:
        out = clip_float(out, proj_clip)
    return out, c


def clip_float(v, limit):
    """TFLite's CwiseClipping: std::max(std::min(limit, v), -limit) in float32."""
    lim = np.float32(limit)
    m = np.where(v < lim, v, lim)
    return np.where(m < -lim, -lim, m).astype(np.float32)


def _eigen_value(code: int, value, index: int, n: int, address: int):
    """One value of an Eigen activation applied to a vector of n floats at ``address``: sigmoid takes
    the one-value path outside the aligned packets of 4."""
    from .. import quant
    v = np.float32([value])
    if code != 6:
        return _float_activation(code, v, 0)[0]
    head = min((-address) % 4, n)
    packet = head <= index < head + ((n - head) // 4) * 4
    return (quant.eigen_logistic_packet_f32 if packet else quant.eigen_logistic_scalar_f32)(v)[0]


def _hybrid_step_reference(x, aux, h, c, w, d: Direction, hp: HybridLstmParameter, act, cell_clip, proj_clip, row0):
    """The hybrid step written out value by value (float32 scalars, the same operation order)."""
    f32 = np.float32
    R = x.shape[0]
    asym = hp.asymmetric_quantize_inputs
    qx = None if not np.any(x) else _quantize_rows(x, asym)
    qa = None if aux is None or not np.any(aux) else _quantize_rows(aux, asym)
    qh = None if not np.any(h) else _quantize_rows(h, asym)

    def product(quantized, role, r, j):
        q, sf, zp = quantized
        acc = int(np.dot(q[r].astype(np.int64), w[role][j].astype(np.int64)))
        if asym:
            acc = int(np.int64(acc - int(zp[r]) * int(hp.row_sums[role][j])).astype(np.int32))
        return f32(f32(acc) * f32(sf[r] * hp.weight_scales[role]))

    def gate(g, code, cell):
        out = np.empty((R, d.n_cell), np.float32)
        for r in range(R):
            v = np.empty(d.n_cell, np.float32)
            for j in range(d.n_cell):
                a = f32(0.0) if d.use_layer_norm else f32(w[f"{g}_gate_bias"][j])
                if qx is not None:
                    a = f32(a + product(qx, f"input_to_{g}", r, j))
                if qa is not None and d.use_aux:
                    a = f32(a + product(qa, f"aux_to_{g}", r, j))
                if qh is not None:
                    a = f32(a + product(qh, f"recurrent_to_{g}", r, j))
                if cell is not None and d.use_peephole:
                    p = f32(hp.weight_scales[f"cell_to_{g}"] * f32(w[f"cell_to_{g}"][j]))
                    a = f32(a + f32(p * cell[r, j]))
                v[j] = a
            if d.use_layer_norm:
                total = f32(0.0)
                for j in range(d.n_cell):
                    total = f32(total + v[j])
                mean = f32(total / f32(d.n_cell))
                sq = f32(0.0)
                for j in range(d.n_cell):
                    diff = f32(v[j] - mean)
                    sq = f32(sq + f32(diff * diff))
                inv = f32(f32(1.0) / np.sqrt(f32(f32(sq / f32(d.n_cell)) + f32(1e-8))))
                for j in range(d.n_cell):
                    v[j] = f32(f32(f32(f32(v[j] - mean) * inv) * w[f"{g}_layer_norm"][j]) + w[f"{g}_gate_bias"][j])
            out[r] = v
        flat = out.reshape(-1)
        address = hp.gate_offsets[g] + row0 * d.n_cell
        return np.array([_eigen_value(code, flat[k], k, flat.size, address) for k in range(flat.size)],
                        np.float32).reshape(out.shape)

    i = None if d.use_cifg else gate("input", 6, c)
    f = gate("forget", 6, c)
    z = gate("cell", act, None)
    c_new = np.empty_like(c)
    for r in range(R):
        for j in range(d.n_cell):
            gi = f32(f32(1.0) - f[r, j]) if d.use_cifg else i[r, j]
            v = f32(f32(f[r, j] * c[r, j]) + f32(z[r, j] * gi))
            c_new[r, j] = clip_float(v, cell_clip) if cell_clip > 0 else v
    o = gate("output", 6, c_new)
    flat_c = c_new.reshape(-1)
    address = hp.gate_offsets["cell"] + row0 * d.n_cell
    m = np.array([f32(o.reshape(-1)[k] * _eigen_value(act, flat_c[k], k, flat_c.size, address))
                  for k in range(flat_c.size)], np.float32).reshape(c.shape)
    if not d.use_projection:
        return m, c_new
    out = np.empty((R, d.n_output), np.float32)
    qm = _quantize_rows(m, asym) if np.any(m) else None
    for r in range(R):
        for u in range(d.n_output):
            a = f32(w["projection_bias"][u]) if "projection_bias" in w else f32(0.0)
            if qm is not None:
                a = f32(a + product(qm, "projection_weights", r, u))
            out[r, u] = clip_float(a, proj_clip) if proj_clip > 0 else a
    return out, c_new


def run_hybrid(tensors, d: Direction, x, aux, hp: HybridLstmParameter, act: int, cell_clip: float, proj_clip: float,
               reverse: bool = False, reference: bool = False) -> np.ndarray:
    """Run a hybrid LSTM direction over x [T, B, n_input] (aux [T, B, n_aux] or None), updating the
    float state tensors; returns the outputs [T, B, n_output].  Time-major input steps all rows
    together, batch-major input one row at a time (as TFLite; it matters for Eigen's one-value
    path and for the all-zero shortcuts).  ``reference`` always goes row by row and value by value
    through the same float32 formulas."""
    T, B, _ = x.shape
    hs = tensors[d.output_state].reshape(B, d.n_output)
    cs = tensors[d.cell_state].reshape(B, d.n_cell)
    w = {role: (tensors[tid] if tid >= 0 else None) for role, tid in d.tensors.items()
         if role not in ("output_state", "cell_state")}
    w = {k: v for k, v in w.items() if v is not None}
    out = np.empty((T, B, d.n_output), np.float32)
    order = range(T - 1, -1, -1) if reverse else range(T)
    step = _hybrid_step_reference if reference else _hybrid_step
    if hp.time_major:
        for t in order:
            h, c = step(x[t], None if aux is None else aux[t], hs.copy(), cs.copy(), w, d, hp, act, cell_clip,
                        proj_clip, 0)
            hs[...], cs[...] = h, c
            out[t] = h
    else:
        for b in range(B):
            for t in order:
                h, c = step(x[t, b:b + 1], None if aux is None else aux[t, b:b + 1], hs[b:b + 1].copy(),
                            cs[b:b + 1].copy(), w, d, hp, act, cell_clip, proj_clip, b)
                hs[b], cs[b] = h[0], c[0]
                out[t, b] = h[0]
    return out
