"""UNIDIRECTIONAL_SEQUENCE_LSTM: an LSTM layer run over a whole sequence, as the TensorFlow converter
fuses Keras ``LSTM`` layers.

Inputs 0-19 (optionally 20-23: layer-norm coefficients), see ``_lstm.py`` for every slot and the step
formulas.  Input 0 is [max_time, n_batch, n_input] when ``time_major`` else [n_batch, max_time,
n_input]; the output has the same layout with n_output last.  The state (inputs 18 output_state and 19
cell_state) lives in variable tensors: it is NOT reset between invokes (a streaming model continues
where the last invoke stopped) until ``reset_all_variables()``.

Options (UnidirectionalSequenceLSTMOptions): fused_activation_function (the cell and hidden activation,
usually TANH), cell_clip, proj_clip (0 = none), time_major, asymmetric_quantize_inputs (hybrid) and
diagonal_recurrent_tensors (v4).

Three arithmetic kinds, chosen by the tensor types (as TFLite's Eval does), one OpData class each:
float (v1, v4 = diagonal recurrent tensors; ``_lstm_float.eval_float``), hybrid / dynamic range (v2,
v3 with asymmetric_quantize_inputs; ``_lstm_hybrid.eval_hybrid``) and integer, the "8x8_16" kind with
an int8 input and 5 intermediate tensors (v1; ``_lstm_integer.eval_integer_8x8_16``).
The speed layer (``workbench/interpreter/fast/lstm.py``) keeps the hybrid row sums and the integer
activations' lookup tables from prepare on.
"""

from __future__ import annotations

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from . import _lstm
from ._common import F32
from ._elementwise import refuse
from ._lstm_float import eval_float
from ._lstm_hybrid import HybridLstmParameter, eval_hybrid, hybrid_params
from ._lstm_integer import IntegerLstmParameter, eval_integer_8x8_16, integer_params


@opdata
class UnidirectionalSequenceLSTMData(OpData):
    """The float32 LSTM (and what every kind has)."""

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
    direction: _lstm.Direction
    kind = "float"


@opdata
class UnidirectionalSequenceLSTMHybridData(UnidirectionalSequenceLSTMData):
    hybrid: HybridLstmParameter
    kind = "hybrid"


@opdata
class UnidirectionalSequenceLSTMIntegerData(UnidirectionalSequenceLSTMData):
    integer_lstm_param: IntegerLstmParameter
    kind = "integer"


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
        kind = _lstm.lstm_kind(node, context, x, node.input(4))
        shape = context.shape(x)
        if len(shape) != 3:
            refuse(node, f"input '{context.name(x)}' has shape {list(shape)}; expected rank 3")
        time_major = bool(p.get("time_major", False))
        max_time, n_batch = (shape[0], shape[1]) if time_major else (shape[1], shape[0])
        act = int(p.get("fused_activation_function", 0))
        _lstm.check_activation(node, act, kind)
        cell_clip, proj_clip = float(p.get("cell_clip", 0.0)), float(p.get("proj_clip", 0.0))
        _lstm.check_clips(node, cell_clip, proj_clip)
        if kind != "float" and diagonal:
            refuse(node, "diagonal recurrent tensors (v4) are float only")
        d = _lstm.direction(node, context, _lstm.roles_of(node), shape[2], n_batch, diagonal=diagonal, kind=kind)
        context.set_output(node.outputs[0], (shape[0], shape[1], d.n_output), _lstm.I8 if kind == "integer" else F32)
        facts = (time_major, max_time, n_batch, shape[2], d.n_cell, d.n_output, _lstm.ACTIVATIONS.get(act, str(act)),
                 cell_clip, proj_clip, d.use_cifg, d.use_peephole, d.use_projection, d.use_layer_norm, diagonal, d)
        if kind == "integer":
            return UnidirectionalSequenceLSTMIntegerData(*facts, integer_params(
                node, context, d, x, node.outputs[0], cell_clip, proj_clip, check_cell_scale=False))
        if kind == "hybrid":
            return UnidirectionalSequenceLSTMHybridData(*facts, hybrid_params(
                node, context, d, bool(p.get("asymmetric_quantize_inputs", False))))
        return UnidirectionalSequenceLSTMData(*facts)

    def invoke(self, context, node, data):
        run(context, node, data)


def run(context, node, data, **prepared) -> None:
    """The op on the node's tensors, by kind.  ``prepared``: what the speed layer made once (row sums,
    lookup tables), handed to the kind's eval; the teaching layer passes nothing."""
    t = context.tensors
    x = t[node.inputs[0]]
    if not data.time_major:
        x = x.transpose(1, 0, 2)                                 # steps over the first axis
    d = data.direction
    if type(data) is UnidirectionalSequenceLSTMIntegerData:
        y = eval_integer_8x8_16(t, d, x, data.integer_lstm_param, **prepared)
    elif type(data) is UnidirectionalSequenceLSTMHybridData:
        y = eval_hybrid(t, d, x, None, data.hybrid, _lstm.activation_code(data.activation), data.cell_clip,
                        data.proj_clip, data.time_major, **prepared)
    else:
        h, c = t[d.output_state].reshape(data.n_batch, d.n_output), t[d.cell_state].reshape(data.n_batch, d.n_cell)
        y = eval_float(x, None, _lstm.weights(t, d), d, h, c, _lstm.activation_code(data.activation),
                       data.cell_clip, data.proj_clip)
    t[node.outputs[0]][...] = y if data.time_major else y.transpose(1, 0, 2)
