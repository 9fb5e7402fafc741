"""BIDIRECTIONAL_SEQUENCE_LSTM (float32 v1; hybrid v2, v3): a forward and a backward LSTM over one sequence.

48 inputs: 0 input; 1-17 the forward direction's weights and biases and 18-34 the backward
direction's, each in the order of LSTM's slots 1-17 (see ``_lstm.py``); 35/36 forward output /
cell state, 37/38 backward output / cell state (variable tensors); 39 aux_input (optional);
40-43 forward and 44-47 backward aux_input_to_{input,forget,cell,output} weights (optional).
Outputs: fw_output and bw_output, or only fw_output holding both ([..., n_fw_output +
n_bw_output], forward first) when ``merge_outputs``.

The backward LSTM walks the time steps from last to first and writes each step's output at that
step's position.  Auxiliary input (TFLite's three stacking modes): no aux_input: both directions
read ``input``; aux_input and aux weights: both read ``input`` and add the aux weights' product
with aux_input; aux_input without aux weights: the backward direction reads ``aux_input`` instead
of ``input``.  Options (BidirectionalSequenceLSTMOptions): fused_activation_function, cell_clip,
proj_clip, merge_outputs, time_major (a missing options table means time_major false, as TFLite
zero-fills its params).

Where TFLite goes wrong (litert 2.3): with ``merge_outputs`` and batch-major input its loop finds
batch row b's output state at b * (n_fw_output + n_bw_output) instead of b * n_output, so for
n_batch > 1 it reads and writes past the state tensor and its results change from invoke to invoke;
this kernel computes the LSTM as specified (rows independent).  Batch-major input with aux weights
is read by TFLite with the input's row length, so it is refused unless aux_input has as many
features as the input.

Float (v1): each direction is ``_lstm_float.eval_float``.  Hybrid (dynamic range; v2, v3 with
asymmetric_quantize_inputs): int8 weights (one scale each) with float32 input, biases, states and
outputs; each direction is TFLite's hybrid LSTM (``_lstm_hybrid.eval_hybrid``, with each direction's own
gate buffers for Eigen), bitwise equal to litert.  The hybrid
kernel steps through aux_input with the input's row length in both layouts, so aux weights are
refused there unless aux_input has as many features as the input.  (TFLite gives a CIFG model
version 1 whatever its weights, as its rule looks at input 1; this kernel runs a hybrid model at
any of its versions.)  Speed layer: ``workbench/interpreter/fast/lstm.py`` (hybrid row sums made once).
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from . import _lstm
from ._common import F32
from ._elementwise import refuse
from ._lstm_float import eval_float
from ._lstm_hybrid import HybridLstmParameter, eval_hybrid, hybrid_params


@opdata
class BidirectionalSequenceLSTMData(OpData):
    """The float32 bidirectional LSTM (and what the hybrid kind has too)."""

    time_major: bool
    merge_outputs: bool
    max_time: int
    n_batch: int
    n_input: int
    fw_n_cell: int
    fw_n_output: int
    bw_n_cell: int
    bw_n_output: int
    activation: str
    cell_clip: float
    proj_clip: float
    aux_mode: str        # "none", "aux weights", "backward reads aux_input"
    fw: _lstm.Direction
    bw: _lstm.Direction
    kind = "float"


@opdata
class BidirectionalSequenceLSTMHybridData(BidirectionalSequenceLSTMData):
    fw_hybrid: HybridLstmParameter       # each direction's hybrid facts
    bw_hybrid: HybridLstmParameter
    kind = "hybrid"


def _roles(node, first: int, states: tuple, aux_first: int) -> dict:
    ids = {role: node.input(first + k) for k, role in enumerate(_lstm.ROLES)}
    ids["output_state"], ids["cell_state"] = node.input(states[0]), node.input(states[1])
    for k, role in enumerate(_lstm.AUX_ROLES):
        ids[role] = node.input(aux_first + k)
    return ids


@kernel(BuiltinOperator.BIDIRECTIONAL_SEQUENCE_LSTM, versions=(1, 2, 3))
class BidirectionalSequenceLSTM(Kernel):
    name = "bidirectional_sequence_lstm"
    foldable = False

    def prepare(self, context, node):
        p = node.params
        merge = bool(p.get("merge_outputs", False))
        if len(node.inputs) != 48 or len(node.outputs) != (1 if merge else 2):
            refuse(node, f"expects 48 inputs and {1 if merge else 2} outputs (merge_outputs {merge}); it has "
                         f"{len(node.inputs)} and {len(node.outputs)}")
        x = node.inputs[0]
        kind = _lstm.lstm_kind(node, context, x, node.input(4))
        if kind == "integer":
            refuse(node, "an int8 input: TFLite's bidirectional LSTM has no integer kernel (float or hybrid only)")
        shape = context.shape(x)
        if len(shape) != 3:
            refuse(node, f"input '{context.name(x)}' has shape {list(shape)}; expected rank 3")
        time_major = bool(p.get("time_major", False))
        max_time, n_batch = (shape[0], shape[1]) if time_major else (shape[1], shape[0])
        act = int(p.get("fused_activation_function", 0))
        _lstm.check_activation(node, act)
        cell_clip, proj_clip = float(p.get("cell_clip", 0.0)), float(p.get("proj_clip", 0.0))
        _lstm.check_clips(node, cell_clip, proj_clip)
        aux = node.input(39)
        fw_ids, bw_ids = _roles(node, 1, (35, 36), 40), _roles(node, 18, (37, 38), 44)
        has_aux_weights = fw_ids["aux_to_forget"] >= 0
        n_aux = 0
        if aux >= 0:
            context.expect_dtype(node, aux, (F32,), "aux_input")
            a_shape = context.shape(aux)
            if len(a_shape) != 3 or tuple(a_shape[:2]) != tuple(shape[:2]):
                refuse(node, f"aux_input has shape {list(a_shape)}; it must be rank 3 with the input's first two "
                             f"dimensions {list(shape[:2])}")
            n_aux = a_shape[2]
        elif has_aux_weights or bw_ids["aux_to_forget"] >= 0:
            refuse(node, "aux input weights are present without aux_input")
        if aux >= 0 and has_aux_weights != (bw_ids["aux_to_forget"] >= 0):
            refuse(node, "forward and backward aux input weights must both be present or both absent")
        mode = "none" if aux < 0 else ("aux weights" if has_aux_weights else "backward reads aux_input")
        if mode == "aux weights" and (not time_major or kind == "hybrid") and n_aux != shape[2]:
            refuse(node, f"{'hybrid' if kind == 'hybrid' else 'batch-major'} aux_input with {n_aux} features but "
                         f"input with {shape[2]}: TFLite steps through aux_input with the input's row length "
                         f"(not supported)")
        if mode == "backward reads aux_input" and n_aux != shape[2]:
            refuse(node, f"the backward LSTM reads aux_input, which has {n_aux} features; TFLite checks its weights "
                         f"against the input's {shape[2]}, so they must be equal")
        bw_n_input = shape[2]
        fw = _lstm.direction(node, context, fw_ids, shape[2], n_batch, n_aux=n_aux, prefix="forward ", kind=kind)
        bw = _lstm.direction(node, context, bw_ids, bw_n_input, n_batch, n_aux=n_aux, prefix="backward ", kind=kind)
        if bw.n_cell != fw.n_cell:
            refuse(node, f"the backward LSTM has {bw.n_cell} cells and the forward one {fw.n_cell}; TFLite checks "
                         f"both directions' weights against the forward n_cell")
        lead = (shape[0], shape[1])
        if merge:
            context.set_output(node.outputs[0], lead + (fw.n_output + bw.n_output,), F32)
        else:
            context.set_output(node.outputs[0], lead + (fw.n_output,), F32)
            context.set_output(node.outputs[1], lead + (bw.n_output,), F32)
        facts = (time_major, merge, max_time, n_batch, shape[2], fw.n_cell, fw.n_output, bw.n_cell, bw.n_output,
                 _lstm.ACTIVATIONS[act], cell_clip, proj_clip, mode, fw, bw)
        if kind == "hybrid":
            asym = bool(p.get("asymmetric_quantize_inputs", False))
            return BidirectionalSequenceLSTMHybridData(*facts, hybrid_params(node, context, fw, asym),
                                                       hybrid_params(node, context, bw, asym))
        return BidirectionalSequenceLSTMData(*facts)

    def invoke(self, context, node, data):
        run(context, node, data)


def run(context, node, data, fw_sums=None, bw_sums=None) -> None:
    """Both directions by kind; ``fw_sums`` / ``bw_sums``: the hybrid row sums if the speed layer made
    them once (the teaching layer passes nothing)."""
    t = context.tensors

    def tm(a):
        return a if data.time_major else a.transpose(1, 0, 2)

    x = tm(t[node.inputs[0]])
    aux = tm(t[node.input(39)]) if data.aux_mode != "none" else None
    code = _lstm.activation_code(data.activation)
    fw_aux = aux if data.aux_mode == "aux weights" else None
    bw_x = aux if data.aux_mode == "backward reads aux_input" else x
    if type(data) is BidirectionalSequenceLSTMHybridData:
        yf = eval_hybrid(t, data.fw, x, fw_aux, data.fw_hybrid, code, data.cell_clip, data.proj_clip,
                         data.time_major, False, fw_sums)
        yb = eval_hybrid(t, data.bw, bw_x, fw_aux, data.bw_hybrid, code, data.cell_clip, data.proj_clip,
                         data.time_major, True, bw_sums)
    else:
        B = data.n_batch
        ys = []
        for d, xs, reverse in ((data.fw, x, False), (data.bw, bw_x, True)):
            h, c = t[d.output_state].reshape(B, d.n_output), t[d.cell_state].reshape(B, d.n_cell)
            ys.append(eval_float(xs, fw_aux, _lstm.weights(t, d), d, h, c, code, data.cell_clip, data.proj_clip,
                                 reverse))
        yf, yb = ys
    if data.merge_outputs:
        t[node.outputs[0]][...] = tm(np.concatenate([yf, yb], axis=2))
    else:
        t[node.outputs[0]][...] = tm(yf)
        t[node.outputs[1]][...] = tm(yb)
