"""What LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM share: the tensors of one LSTM
direction, their checks (TFLite's CheckInputTensorDimensions), and which arithmetic kind they ask for.

One direction is a set of tensors (the LSTM's input slots 1-23; a bidirectional LSTM has two such sets
and auxiliary-input weights):

    input_to_{input,forget,cell,output}_weights      [n_cell, n_input]  (input gate: absent = CIFG)
    recurrent_to_{input,forget,cell,output}_weights  [n_cell, n_output] ([n_cell] when diagonal)
    cell_to_{input,forget,output}_weights            [n_cell]           peephole, optional
    {input,forget,cell,output}_gate_bias             [n_cell]           (input: absent with CIFG)
    projection_weights [n_output, n_cell], projection_bias [n_output]  optional
    output_state [n_batch, n_output], cell_state [n_batch, n_cell]      variable tensors (the state)
    {input,forget,cell,output}_layer_norm_coefficients [n_cell]        optional (24-input form)

One time step (σ is the logistic function, g the fused activation, usually tanh; ⊙ elementwise):

    i = σ(W_i·x + R_i·h + p_i ⊙ c + b_i)          (CIFG: i = 1 − f)
    f = σ(W_f·x + R_f·h + p_f ⊙ c + b_f)
    z = g(W_c·x + R_c·h + b_c)
    c' = f ⊙ c + i ⊙ z, clipped to ±cell_clip when cell_clip > 0
    o = σ(W_o·x + R_o·h + p_o ⊙ c' + b_o)        (the output gate's peephole sees the NEW cell)
    h' = o ⊙ g(c'), then P·h' + p_b clipped to ±proj_clip with a projection; the step's output is h'

With layer normalisation a gate's pre-activation a (without the bias) becomes
LN(a) ⊙ coefficients + bias, LN(a) = (a − mean(a)) / sqrt(var(a) + 1e-8) over one batch row's n_cell
values; with diagonal recurrent tensors (UNIDIRECTIONAL_SEQUENCE_LSTM v4) R·h is R ⊙ h.

Three kinds, chosen by the tensor types (as TFLite's Eval does), each in its own module named after
lstm_eval.cc's routines: float (``_lstm_float``: EvalFloat), hybrid -- float input and state, int8
weights (``_lstm_hybrid``: EvalHybrid) -- and integer 8x8_16 -- int8 input, int16 cell state
(``_lstm_integer``: EvalInteger8x8_16).  LiteRT's BUILTIN_REF resolver registers the same LSTM kernels
as BUILTIN, so the two arithmetic variants agree on every LSTM.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ModelError
from ._common import F32, I8, I16, I32
from ._elementwise import refuse

ROLES = ("input_to_input", "input_to_forget", "input_to_cell", "input_to_output",
         "recurrent_to_input", "recurrent_to_forget", "recurrent_to_cell", "recurrent_to_output",
         "cell_to_input", "cell_to_forget", "cell_to_output",
         "input_gate_bias", "forget_gate_bias", "cell_gate_bias", "output_gate_bias",
         "projection_weights", "projection_bias")
LN_ROLES = ("input_layer_norm", "forget_layer_norm", "cell_layer_norm", "output_layer_norm")
AUX_ROLES = ("aux_to_input", "aux_to_forget", "aux_to_cell", "aux_to_output")
GATES = ("input", "forget", "cell", "output")
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


def check_activation(node, code: int, kind: str = "float") -> None:
    if kind == "integer":
        if code != 4:
            refuse(node, f"the integer LSTM always uses tanh; the fused activation is "
                         f"{ACTIVATIONS.get(code, code)} (TFLite ignores it; refused here)")
    elif code not in ACTIVATIONS:
        refuse(node, f"fused activation {code} ({'NONE' if code == 0 else 'unknown'}): TFLite's float LSTM leaves "
                     f"its buffer unwritten for NONE (the result would be stale memory); supported: "
                     f"{', '.join(ACTIVATIONS.values())}")


def check_clips(node, cell_clip: float, proj_clip: float) -> None:
    if cell_clip < 0 or proj_clip < 0:
        refuse(node, f"cell_clip ({cell_clip}) and proj_clip ({proj_clip}) must not be negative")


def roles_of(node, first: int = 1) -> dict:
    """role -> tensor id for the standard 20/24-input slot layout of LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM."""
    ids = {role: node.input(first + k) for k, role in enumerate(ROLES)}
    ids["output_state"] = node.input(18)
    ids["cell_state"] = node.input(19)
    if len(node.inputs) == 24:
        for k, role in enumerate(LN_ROLES):
            ids[role] = node.input(20 + k)
    return ids


def lstm_kind(node, context, x_t: int, w_t: int) -> str:
    """"float", "hybrid" or "integer" from the input's and input_to_output_weights' types."""
    xdt = context.expect_dtype(node, x_t, (F32, I8), "input")
    if xdt == I8:
        return "integer"
    if w_t >= 0 and context.dtype(w_t) in (I8, np.dtype(np.uint8)):
        if context.dtype(w_t) != I8:
            refuse(node, "uint8 weights with a float input: only int8 hybrid weights are supported")
        return "hybrid"
    return "float"


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


def weights(tensors, d: Direction) -> dict:
    """role -> the direction's weight / bias / coefficient array, for the roles present."""
    return {role: tensors[tid] for role, tid in d.tensors.items()
            if tid >= 0 and role not in ("output_state", "cell_state")}


def _shape_is(node, context, t, want, what):
    got = tuple(context.shape(t))
    if got != tuple(want):
        refuse(node, f"{what} '{context.name(t)}' has shape {list(got)}; expected {list(want)}")


def direction(node, context, ids: dict, n_input: int, n_batch: int, *, diagonal=False, n_aux=0,
              prefix="", kind="float") -> Direction:
    """Check one direction's tensors (TFLite's CheckInputTensorDimensions) and size it."""
    def t(role):
        return ids.get(role, -1)

    def named(role):
        return prefix + role.replace("_", " ")

    for role, tid in ids.items():
        if tid >= 0 and role not in ("output_state", "cell_state"):
            context.expect_dtype(node, tid, (role_dtype(kind, role),), named(role))
    for role in ("input_to_forget", "input_to_cell", "input_to_output", "recurrent_to_forget", "recurrent_to_cell",
                 "recurrent_to_output", "forget_gate_bias", "cell_gate_bias", "output_gate_bias"):
        if t(role) < 0:
            refuse(node, f"{named(role)} is absent; it is required")
    w = context.shape(t("input_to_output"))
    if len(w) != 2:
        refuse(node, f"{prefix}input_to_output_weights has shape {list(w)}; expected [n_cell, n_input]")
    n_cell = w[0]
    r = context.shape(t("recurrent_to_output"))
    if len(r) != (1 if diagonal else 2):
        refuse(node, f"{prefix}recurrent_to_output_weights has shape {list(r)}; expected "
                     f"{'[n_cell] (diagonal recurrent tensors)' if diagonal else '[n_cell, n_output]'}")
    n_output = n_cell if diagonal else r[1]
    use_cifg = t("input_to_input") < 0
    if (t("recurrent_to_input") < 0) != use_cifg:
        refuse(node, f"{prefix}input_to_input_weights and recurrent_to_input_weights must both be present or both "
                     f"absent (CIFG)")
    if (t("input_gate_bias") < 0) != use_cifg:
        refuse(node, f"{prefix}input_gate_bias must be present exactly when input_to_input_weights is (CIFG has "
                     f"neither)")
    gates = GATES[1:] if use_cifg else GATES
    for gate in gates:
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
        for g in gates:
            if t(f"{g}_layer_norm") < 0:
                refuse(node, f"{prefix}{g}_layer_norm_coefficients is absent while forget's is present")
            _shape_is(node, context, t(f"{g}_layer_norm"), (n_cell,), f"{prefix}{g}_layer_norm_coefficients")
    use_aux = t("aux_to_forget") >= 0
    if use_aux:
        for g in gates:
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
