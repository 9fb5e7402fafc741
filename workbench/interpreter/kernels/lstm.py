"""LSTM (the "full" kernel): one LSTM step on [n_batch, n_input].

The same 20 or 24 inputs as UNIDIRECTIONAL_SEQUENCE_LSTM (see ``_lstm.py``) with a rank-2 input; one
output [n_batch, n_output].  The state (inputs 18 and 19) is kept in variable tensors and carried to the
next invoke.  Options (LSTMOptions): fused_activation_function, cell_clip, proj_clip, kernel_type (only
FULL: the BASIC kernel is version 2, not implemented), asymmetric_quantize_inputs.

Kinds (as UNIDIRECTIONAL_SEQUENCE_LSTM, one OpData class each): float (v1; ``_lstm_float``), integer
8x8_16 (v1 with an int8 input and 5 intermediate tensors; TFLite's LSTM also requires the cell state's
scale to be at most 2^-9; ``_lstm_integer``), hybrid (v3, v4 with asymmetric_quantize_inputs;
``_lstm_hybrid``).  The 12-intermediate "8x8_8" integer kind, which only this op has in TFLite, is
refused at prepare.  Speed layer: ``workbench/interpreter/fast/lstm.py``.
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
class LSTMData(OpData):
    """The float32 LSTM step (and what every kind has)."""

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
    direction: _lstm.Direction
    kind = "float"


@opdata
class LSTMHybridData(LSTMData):
    hybrid: HybridLstmParameter
    kind = "hybrid"


@opdata
class LSTMIntegerData(LSTMData):
    integer_lstm_param: IntegerLstmParameter
    kind = "integer"


@kernel(BuiltinOperator.LSTM, versions=(1, 3, 4))
class LSTM(Kernel):
    name = "lstm"
    foldable = False

    def prepare(self, context, node):
        p = node.params
        if int(p.get("kernel_type", 0)) != 0:
            refuse(node, "kernel_type BASIC is not implemented (only the FULL kernel)")
        if len(node.inputs) not in (20, 24) or len(node.outputs) != 1:
            refuse(node, f"the full LSTM kernel expects 20 or 24 inputs and 1 output; it has {len(node.inputs)} "
                         f"and {len(node.outputs)}")
        x = node.inputs[0]
        kind = _lstm.lstm_kind(node, context, x, node.input(4))
        shape = context.shape(x)
        if len(shape) != 2:
            refuse(node, f"input '{context.name(x)}' has shape {list(shape)}; expected [n_batch, n_input]")
        n_batch, n_input = shape
        act = int(p.get("fused_activation_function", 0))
        _lstm.check_activation(node, act, kind)
        cell_clip, proj_clip = float(p.get("cell_clip", 0.0)), float(p.get("proj_clip", 0.0))
        _lstm.check_clips(node, cell_clip, proj_clip)
        d = _lstm.direction(node, context, _lstm.roles_of(node), n_input, n_batch, kind=kind)
        context.set_output(node.outputs[0], (n_batch, d.n_output), _lstm.I8 if kind == "integer" else F32)
        facts = (n_batch, n_input, d.n_cell, d.n_output, _lstm.ACTIVATIONS.get(act, str(act)), cell_clip, proj_clip,
                 d.use_cifg, d.use_peephole, d.use_projection, d.use_layer_norm, d)
        if kind == "integer":
            return LSTMIntegerData(*facts, integer_params(node, context, d, x, node.outputs[0], cell_clip, proj_clip,
                                                          check_cell_scale=True))
        if kind == "hybrid":
            return LSTMHybridData(*facts, hybrid_params(node, context, d,
                                                        bool(p.get("asymmetric_quantize_inputs", False))))
        return LSTMData(*facts)

    def invoke(self, context, node, data):
        run(context, node, data)


def run(context, node, data, **prepared) -> None:
    """One step of the op's kind (a sequence of length 1).  ``prepared``: what the speed layer made once,
    handed to the kind's eval; the teaching layer passes nothing."""
    t = context.tensors
    x = t[node.inputs[0]][None]
    d = data.direction
    if type(data) is LSTMIntegerData:
        y = eval_integer_8x8_16(t, d, x, data.integer_lstm_param, **prepared)
    elif type(data) is LSTMHybridData:
        y = eval_hybrid(t, d, x, None, data.hybrid, _lstm.activation_code(data.activation), data.cell_clip,
                        data.proj_clip, True, **prepared)
    else:
        h, c = t[d.output_state].reshape(data.n_batch, d.n_output), t[d.cell_state].reshape(data.n_batch, d.n_cell)
        y = eval_float(x, None, _lstm.weights(t, d), d, h, c, _lstm.activation_code(data.activation),
                       data.cell_clip, data.proj_clip)
    t[node.outputs[0]][...] = y[0]
