"""UNIDIRECTIONAL_SEQUENCE_LSTM: an LSTM layer run over a whole sequence, as the TensorFlow converter
fuses Keras ``LSTM`` layers.

Inputs 0-19 (optionally 20-23: layer-norm coefficients), see ``_lstm.py`` for every slot and the
step formulas.  Input 0 is [max_time, n_batch, n_input] when ``time_major`` else
[n_batch, max_time, n_input]; the output has the same layout with n_output last.  The state
(inputs 18 output_state and 19 cell_state) lives in variable tensors: it is NOT reset between
invokes (a streaming model continues where the last invoke stopped) until
``reset_all_variables()``.

Options (UnidirectionalSequenceLSTMOptions): fused_activation_function (the cell and hidden
activation, usually TANH), cell_clip, proj_clip (0 = none), time_major,
asymmetric_quantize_inputs (hybrid) and diagonal_recurrent_tensors (v4).

Three arithmetic kinds, chosen by the tensor types (as TFLite's Eval does):

* float (v1, v4 = diagonal recurrent tensors): float32 everything (``_lstm.run``);
* hybrid / dynamic range (v2, v3 with asymmetric_quantize_inputs): float32 input, states, biases
  and output, int8 weights with one scale each: every step quantizes the input and the output
  state row by row and multiplies in integers (``_lstm.run_hybrid``); bitwise equal to litert;
* integer (v1 with an int8 input): the "8x8_16" full-integer LSTM with 5 intermediate tensors
  (``_lstm.run_integer``); the 12-intermediate "8x8_8" kind only exists in LSTM's kernel.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from . import _lstm
from ._common import F32
from ._elementwise import refuse


@opdata
class UnidirectionalSequenceLSTMData(OpData):
    time_major: bool
    max_time: int
    n_batch: int
    n_input: int
    n_cell: int
    n_output: int
    activation: str
    cell_clip: float
    proj_clip: float
    use_cifg: bool
    use_peephole: bool
    use_projection: bool
    use_layer_norm: bool
    diagonal_recurrent: bool
    direction: object = None
    kind: str = "float"                  # "float", "hybrid" or "integer"
    integer_lstm_param: object = None    # _lstm.IntegerLstmParameter (integer)
    hybrid: object = None                # _lstm.HybridLstmParameter (hybrid)


def roles_of(node, first: int = 1) -> dict:
    """role -> tensor id for the standard 20/24-input slot layout."""
    ids = {role: node.input(first + k) for k, role in enumerate(_lstm.ROLES)}
    ids["output_state"] = node.input(18)
    ids["cell_state"] = node.input(19)
    if len(node.inputs) == 24:
        for k, role in enumerate(_lstm.LN_ROLES):
            ids[role] = node.input(20 + k)
    return ids


def lstm_kind(node, context, x_t: int, w_t: int) -> str:
    """float / hybrid / integer from the input's and input_to_output_weights' types."""
    xdt = context.expect_dtype(node, x_t, (F32, _lstm.I8), "input")
    if xdt == _lstm.I8:
        return "integer"
    if w_t >= 0 and context.dtype(w_t) in (_lstm.I8, np.dtype(np.uint8)):
        if context.dtype(w_t) != _lstm.I8:
            refuse(node, "uint8 weights with a float input: only int8 hybrid weights are supported")
        return "hybrid"
    return "float"


@kernel(BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM, versions=(1, 2, 3, 4))
class UnidirectionalSequenceLSTM(Kernel):
    name = "unidirectional_sequence_lstm"
    foldable = False          # it updates its state tensors

    def prepare(self, context, node):
        if len(node.inputs) not in (20, 24) or len(node.outputs) != 1:
            refuse(node, f"expects 20 or 24 inputs and 1 output; it has {len(node.inputs)} and {len(node.outputs)}")
        p = node.params
        diagonal = bool(p.get("diagonal_recurrent_tensors", False))
        if diagonal and node.version < 4:
            refuse(node, "diagonal_recurrent_tensors needs version 4")
        x = node.inputs[0]
        kind = lstm_kind(node, context, x, node.input(4))
        shape = context.shape(x)
        if len(shape) != 3:
            refuse(node, f"input '{context.name(x)}' has shape {list(shape)}; expected rank 3")
        time_major = bool(p.get("time_major", False))
        max_time, n_batch = (shape[0], shape[1]) if time_major else (shape[1], shape[0])
        n_input = shape[2]
        act = int(p.get("fused_activation_function", 0))
        if kind == "integer":
            if act != 4:
                refuse(node, f"the integer LSTM always uses tanh; the fused activation is "
                             f"{_lstm.ACTIVATIONS.get(act, act)} (TFLite ignores it; refused here)")
        else:
            _lstm.check_activation(node, act)
        cell_clip, proj_clip = float(p.get("cell_clip", 0.0)), float(p.get("proj_clip", 0.0))
        _lstm.check_clips(node, cell_clip, proj_clip)
        if kind != "float" and diagonal:
            refuse(node, "diagonal recurrent tensors (v4) are float only")
        d = _lstm.direction(node, context, roles_of(node), n_input, n_batch, diagonal=diagonal, kind=kind)
        out = (shape[0], shape[1], d.n_output)
        context.set_output(node.outputs[0], out, _lstm.I8 if kind == "integer" else F32)
        integer = hybrid = None
        if kind == "integer":
            integer = _lstm.integer_params(node, context, d, x, node.outputs[0], cell_clip, proj_clip,
                                           check_cell_scale=False)
        elif kind == "hybrid":
            hybrid = _lstm.hybrid_params(node, context, d, bool(p.get("asymmetric_quantize_inputs", False)),
                                         time_major)
        return UnidirectionalSequenceLSTMData(
            time_major, max_time, n_batch, n_input, d.n_cell, d.n_output, _lstm.ACTIVATIONS.get(act, str(act)),
            cell_clip, proj_clip, d.use_cifg, d.use_peephole, d.use_projection, d.use_layer_norm, diagonal, d, kind,
            integer, hybrid)

    def _run(self, context, node, data, reference):
        t = context.tensors
        x = t[node.inputs[0]]
        if not data.time_major:
            x = x.transpose(1, 0, 2)
        if data.kind == "integer":
            y = _lstm.run_integer(t, data.direction, x, data.integer_lstm_param, reference=reference)
        elif data.kind == "hybrid":
            y = _lstm.run_hybrid(t, data.direction, x, None, data.hybrid, _lstm.activation_code(data.activation),
                                 data.cell_clip, data.proj_clip, reference=reference)
        else:
            act = _lstm.activation_code(data.activation)
            y = _lstm.run(t, data.direction, x, None, act, data.cell_clip, data.proj_clip, False, reference)
        t[node.outputs[0]][...] = y if data.time_major else y.transpose(1, 0, 2)

    def invoke(self, context, node, data):
        self._run(context, node, data, False)

    def invoke_reference(self, context, node, data):
        self._run(context, node, data, True)
