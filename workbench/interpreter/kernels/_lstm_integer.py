"""The integer ("8x8_16") LSTM: int8 input, output state and weights, int16 cell state -- what the
TensorFlow converter emits for a full-integer Keras LSTM; TFLite's lstm_eval ``EvalInteger8x8_16`` /
``LstmStepInteger8x8_16`` (LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM; the bidirectional LSTM has no integer
kernel).  The 12-intermediate "8x8_8" kind, which only LSTM has in TFLite, is refused at prepare.

Every gate is int16 in Q3.12 (scale 2^-12) -- or, with layer normalisation, in the scale of the
operator's intermediate tensors 0-3; the cell state is int16 with a power-of-two scale 2^cell_scale;
intermediate 4 ("effective hidden") holds the scale and zero point of o ⊙ tanh(c) before the projection.

prepare (``PopulateQuantizedLstmParams8x8_16``; scales are float32 products):
  effective_input_to_<g>_scale     = w_scale · input_scale / gate_scale[g]
  effective_recurrent_to_<g>_scale = w_scale · output_state_scale / gate_scale[g]
  effective_cell_to_<g>_scale      = 2^cell_scale · w_scale / gate_scale[g]      (peephole)
  effective_hidden_scale           = 2^-15 / hidden_scale · 2^-15
  effective_proj_scale             = projection_scale · hidden_scale / output_state_scale
  each as QuantizeMultiplier → (<name>_a, <name>_b); layer_norm_<g>_scale_a/b from the layer-norm
  weights' scale; the zero points are folded into int32 biases once:
  input_to_<g>_effective_bias = bias (none with layer norm) − input_zp · Σ_row w,
  recurrent_to_<g>_effective_bias = −output_state_zp · Σ_row w,
  projection_effective_bias = projection_bias + hidden_zp · Σ_row w.

one step, for every gate g (``CalculateLstmGateInteger8x8_16``):
  g = sat16(MBQM(W·x + bias_x, input scale));  g = sat16(MBQM(R·h + bias_h, recurrent scale) + g)
  peephole: g = sat16(MBQM(p ⊙ c, cell scale) + g)
  layer norm (integer, quant.lstm_layer_norm_int16), then gemmlowp's sigmoid (input, forget, output)
  or tanh (cell gate) on Q3.12 → Q0.15;
``UpdateLstmCellInteger``: c = sat16(RDBPOT(f · c, 15) + RDBPOT(i · z, 30 + cell_scale)) (CIFG:
  i = 32767 − f), clipped;
``CalculateLstmOutputInteger8x8_16``: m = tanh(c) (gemmlowp, 15 + cell_scale integer bits) · o, MBQM by
  the hidden scale, + hidden_zp, int8 -- with a projection: − hidden_zp, then the int8 projection
  (MBQM, + output_state_zp), clipped.
RDBPOT = rounding divide by a power of two (ties away from zero), MBQM = MultiplyByQuantizedMultiplier.
Both of LiteRT's op resolvers run this kernel (bit-exact with LiteRT).
"""

from __future__ import annotations

import numpy as np

from .. import quant
from ..registry import OpData, opdata
from ._elementwise import refuse
from ._lstm import GATES, Direction, weights


def _scale(context, t) -> np.float32:
    return np.float32(quant.tensor_scale_zp(context, t)[0])


def _zp(context, t) -> int:
    return int(quant.tensor_scale_zp(context, t)[1])


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
    """prepare of the 8x8_16 integer LSTM (``PopulateQuantizedLstmParams8x8_16``, see the docstring)."""
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



def gemmlowp_sigmoid(v) -> np.ndarray:
    """gemmlowp's logistic on int16 gates in Q3.12 → Q0.15."""
    return quant.fp_logistic(v, 3, 16).astype(np.int64)


def gemmlowp_tanh(v, integer_bits: int = 3) -> np.ndarray:
    """gemmlowp's tanh on int16 values with ``integer_bits`` integer bits → Q0.15."""
    return quant.fp_tanh(v, integer_bits, 16).astype(np.int64)


def calculate_lstm_gate_integer_8x8_16(g: str, x, h, c, w: dict, d: Direction, p: IntegerLstmParameter,
                                       act) -> np.ndarray:
    """One gate on int64 arrays x [B, n_input], h [B, n_output], c [B, n_cell] (see the module docstring)."""
    m, bias = p.multipliers, p.effective_biases

    def mbqm(v, name):
        return quant.multiply_by_quantized_multiplier_array(quant.wrap_int32(v), *m[name])

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
    return act(v)


def lstm_step_integer_8x8_16(x, h, c, w: dict, d: Direction, p: IntegerLstmParameter,
                             sigmoid=gemmlowp_sigmoid, tanh=gemmlowp_tanh):
    """One time step on int64 arrays; returns the new (h, c).  ``sigmoid`` / ``tanh``: gemmlowp's
    fixed-point functions (the speed layer passes lookup tables of the same values)."""
    def gate(g, act):
        return calculate_lstm_gate_integer_8x8_16(g, x, h, c_gate, w, d, p, act)

    c_gate = c
    i = None if d.use_cifg else gate("input", sigmoid)
    f = gate("forget", sigmoid)
    z = gate("cell", tanh)
    # UpdateLstmCellInteger
    c = quant.wrap_bits(quant.rounding_divide_by_pot_array(f * c, 15), 16)
    first = (32767 - f) if d.use_cifg else i
    c = quant.saturate_int16(c + quant.wrap_bits(quant.rounding_divide_by_pot_array(first * z, 30 + p.cell_scale), 16))
    if p.quantized_cell_clip > 0:
        c = np.clip(c, -p.quantized_cell_clip, p.quantized_cell_clip)
    c_gate = c                                         # the output gate's peephole sees the new cell state
    o = gate("output", sigmoid)
    # CalculateLstmOutputInteger8x8_16
    hidden = quant.multiply_by_quantized_multiplier_array(o * tanh(c, 15 + p.cell_scale),
                                                          *p.multipliers["effective_hidden_scale"])
    if not d.use_projection:
        return np.clip(hidden + p.hidden_zp, -128, 127), c
    hidden = np.clip(hidden - p.hidden_zp, -128, 127)
    acc = hidden @ w["projection_weights"].T + p.effective_biases["projection_effective_bias"]
    h = quant.multiply_by_quantized_multiplier_array(quant.wrap_int32(acc), *p.multipliers["effective_proj_scale"])
    h = np.clip(h + p.output_state_zero_point, -128, 127)
    if p.quantized_proj_clip > 0:
        h = np.clip(h, -p.quantized_proj_clip, p.quantized_proj_clip)
    return h, c


def eval_integer_8x8_16(tensors, d: Direction, x, p: IntegerLstmParameter, reverse: bool = False,
                        sigmoid=gemmlowp_sigmoid, tanh=gemmlowp_tanh) -> np.ndarray:
    """Run over x [T, B, n_input] (int8), updating the state tensors; returns the int8 outputs
    [T, B, n_output]."""
    T, B, _ = x.shape
    hs = tensors[d.output_state].reshape(B, d.n_output)
    cs = tensors[d.cell_state].reshape(B, d.n_cell)
    h, c = hs.astype(np.int64), cs.astype(np.int64)
    w = {role: v.astype(np.int64) for role, v in weights(tensors, d).items()}
    out = np.empty((T, B, d.n_output), np.int8)
    for k in range(T):
        t = T - 1 - k if reverse else k
        h, c = lstm_step_integer_8x8_16(x[t].astype(np.int64), h, c, w, d, p, sigmoid, tanh)
        out[t] = h
    hs[...] = h
    cs[...] = c
    return out
