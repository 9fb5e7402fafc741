"""LSTM (the "full" kernel): one LSTM step on [n_batch, n_input].

The same 20 or 24 inputs as UNIDIRECTIONAL_SEQUENCE_LSTM (see ``_lstm.py``) with a rank-2 input;
one output [n_batch, n_output].  The state (inputs 18 and 19) is kept in variable tensors and
carried to the next invoke.  Options (LSTMOptions): fused_activation_function, cell_clip,
proj_clip, kernel_type (only FULL: the BASIC kernel is version 2, not implemented),
asymmetric_quantize_inputs.

Kinds (as UNIDIRECTIONAL_SEQUENCE_LSTM): float (v1), integer 8x8_16 (v1 with an int8 input and 5
intermediate tensors; TFLite's LSTM also requires the cell state's scale to be at most 2^-9), hybrid
(v3, v4 with asymmetric_quantize_inputs).  The 12-intermediate "8x8_8" integer kind, which only this
op has in TFLite, is refused at prepare.
"""

from __future__ import annotations

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from . import _lstm
from ._common import F32
from ._elementwise import refuse
from .unidirectional_sequence_lstm import lstm_kind, roles_of


@opdata
class LSTMData(OpData):
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
    direction: object = None
    kind: str = "float"
    integer_lstm_param: object = None
    hybrid: object = None


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
        kind = lstm_kind(node, context, x, node.input(4))
        shape = context.shape(x)
        if len(shape) != 2:
            refuse(node, f"input '{context.name(x)}' has shape {list(shape)}; expected [n_batch, n_input]")
        n_batch, n_input = shape
        act = int(p.get("fused_activation_function", 0))
        if kind == "integer":
            if act != 4:
                refuse(node, f"the integer LSTM always uses tanh; the fused activation is "
                             f"{_lstm.ACTIVATIONS.get(act, act)} (TFLite ignores it; refused here)")
        else:
            _lstm.check_activation(node, act)
        cell_clip, proj_clip = float(p.get("cell_clip", 0.0)), float(p.get("proj_clip", 0.0))
        _lstm.check_clips(node, cell_clip, proj_clip)
        d = _lstm.direction(node, context, roles_of(node), n_input, n_batch, kind=kind)
        context.set_output(node.outputs[0], (n_batch, d.n_output), _lstm.I8 if kind == "integer" else F32)
        integer = hybrid = None
        if kind == "integer":
            integer = _lstm.integer_params(node, context, d, x, node.outputs[0], cell_clip, proj_clip,
                                           check_cell_scale=True)
        elif kind == "hybrid":
            hybrid = _lstm.hybrid_params(node, context, d, bool(p.get("asymmetric_quantize_inputs", False)), True,
                                         n_batch)
        return LSTMData(n_batch, n_input, d.n_cell, d.n_output, _lstm.ACTIVATIONS.get(act, str(act)), cell_clip,
                        proj_clip, d.use_cifg, d.use_peephole, d.use_projection, d.use_layer_norm, d, kind, integer,
                        hybrid)

    def _run(self, context, node, data, reference):
        t = context.tensors
        x = t[node.inputs[0]][None]
        act = _lstm.activation_code(data.activation) if data.kind != "integer" else 4
        if data.kind == "integer":
            y = _lstm.run_integer(t, data.direction, x, data.integer_lstm_param, reference=reference)
        elif data.kind == "hybrid":
            y = _lstm.run_hybrid(t, data.direction, x, None, data.hybrid, act, data.cell_clip, data.proj_clip,
                                 reference=reference)
        else:
            y = _lstm.run(t, data.direction, x, None, act, data.cell_clip, data.proj_clip, False, reference)
        t[node.outputs[0]][...] = y[0]

    def invoke(self, context, node, data):
        self._run(context, node, data, False)

    def invoke_reference(self, context, node, data):
        self._run(context, node, data, True)
