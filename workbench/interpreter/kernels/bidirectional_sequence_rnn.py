"""BIDIRECTIONAL_SEQUENCE_RNN (float32 v1; hybrid v2, v3): forward and backward basic RNN cells (``_rnn.py``).

Inputs: 0 input; 1-3 forward weights, recurrent weights, bias; 4 forward hidden state; 5-7 the
backward ones; 8 backward hidden state (states are variable tensors); 9 aux_input, 10 forward and
11 backward aux weights (optional).  Outputs: fw_output and bw_output, or one output holding both
(forward first) when ``merge_outputs``.  The backward cell walks the time steps from last to
first.  Aux input as in BIDIRECTIONAL_SEQUENCE_LSTM: with aux weights both cells add
W_aux·aux_input; without them the backward cell reads aux_input instead of the input -- but only
when time_major: TFLite's batch-major loop reads ``input`` for the backward cell whatever the mode,
and this kernel does the same (so there aux_input without aux weights is ignored).  TFLite's
time-major loop steps through aux_input with the *input's* row length, so time-major aux weights
are refused unless aux_input has as many features as the input.
Options (BidirectionalSequenceRNNOptions): time_major, fused_activation_function, merge_outputs,
asymmetric_quantize_inputs.

Hybrid (dynamic range; v2, v3 with asymmetric_quantize_inputs): int8 weights, recurrent weights and
aux weights (one scale each), float32 everything else; each step is TFLite's quantized RnnBatchStep
(``_rnn.rnn_batch_step_hybrid``), bitwise equal to litert -- including what litert's hybrid loops do
differently from the float ones:
  * time-major: TFLite's hybrid kernel wraps the forward and backward sweeps in one more loop over
    the time steps, so one invoke runs the whole sequence max_time times through both cells (the
    states carry from sweep to sweep) and the outputs are those of the last sweep;
  * batch-major: as the float kernel, the backward cell reads ``input`` (aux_input without aux
    weights is ignored);
  * aux_input is stepped through with the input's row length in both layouts, so aux weights are
    refused unless aux_input has as many features as the input.
The float kind is bit-exact with LiteRT too (``_rnn.rnn_batch_step_float``); the speed layer
(``workbench/interpreter/fast/rnn.py``) runs the float sequence compiled and makes the
hybrid row sums once.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from . import _rnn
from ._common import F32
from ._elementwise import refuse


@opdata
class BidirectionalSequenceRNNData(OpData):
    """The float32 bidirectional RNN (and what the hybrid kind has too)."""

    time_major: bool
    merge_outputs: bool
    max_time: int
    n_batch: int
    fw_num_units: int
    bw_num_units: int
    activation: str
    activation_code: int
    aux_mode: str
    kind = "float"


@opdata
class BidirectionalSequenceRNNHybridData(BidirectionalSequenceRNNData):
    asymmetric_quantize_inputs: bool
    fw_weight_scales: dict           # "weights" / "recurrent weights" / "aux weights" -> float32 scale
    bw_weight_scales: dict
    kind = "hybrid"


@kernel(BuiltinOperator.BIDIRECTIONAL_SEQUENCE_RNN, versions=(1, 2, 3))
class BidirectionalSequenceRNN(Kernel):
    name = "bidirectional_sequence_rnn"
    foldable = False

    def prepare(self, context, node):
        p = node.params
        merge = bool(p.get("merge_outputs", False))
        if len(node.inputs) != 12 or len(node.outputs) != (1 if merge else 2):
            refuse(node, f"expects 12 inputs and {1 if merge else 2} outputs; it has {len(node.inputs)} and "
                         f"{len(node.outputs)}")
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32,), "input")
        shape = context.shape(x)
        if len(shape) != 3:
            refuse(node, f"input '{context.name(x)}' has shape {list(shape)}; expected rank 3")
        tm = bool(p.get("time_major", False))
        max_time, n_batch = (shape[0], shape[1]) if tm else (shape[1], shape[0])
        code = int(p.get("fused_activation_function", 0))
        _rnn.check_activation(node, code)
        aux, fw_aux, bw_aux = node.input(9), node.input(10), node.input(11)
        n_aux = 0
        if aux >= 0:
            context.expect_dtype(node, aux, (F32,), "aux_input")
            a = context.shape(aux)
            if len(a) != 3 or tuple(a[:2]) != tuple(shape[:2]):
                refuse(node, f"aux_input has shape {list(a)}; expected rank 3 with the input's first two dimensions")
            n_aux = a[2]
        if (fw_aux >= 0) != (bw_aux >= 0) or (fw_aux >= 0 and aux < 0):
            refuse(node, "aux weights need aux_input, and forward and backward aux weights go together")
        mode = "none" if aux < 0 else ("aux weights" if fw_aux >= 0 else "backward reads aux_input")
        if mode == "backward reads aux_input" and not tm:
            mode = "ignored (batch-major: the backward cell reads the input)"
        if mode == "aux weights" and tm and n_aux != shape[2]:
            refuse(node, f"time-major aux_input with {n_aux} features but input with {shape[2]}: TFLite steps "
                         f"through aux_input with the input's row length (not supported)")
        hybrid = _rnn.is_hybrid(context, node.inputs[1])
        if mode == "aux weights" and hybrid and n_aux != shape[2]:
            refuse(node, f"hybrid aux_input with {n_aux} features but input with {shape[2]}: TFLite steps through "
                         f"aux_input with the input's row length (not supported)")
        fw_units = _rnn.check_cell(node, context, *node.inputs[1:5], shape[2], n_batch, "forward ", fw_aux, n_aux,
                                   hybrid=hybrid)
        if mode == "backward reads aux_input" and n_aux != shape[2]:
            refuse(node, f"the backward cell reads aux_input, which has {n_aux} features; TFLite checks its weights "
                         f"against the input's {shape[2]}, so they must be equal")
        bw_in = shape[2]
        bw_units = _rnn.check_cell(node, context, *node.inputs[5:9], bw_in, n_batch, "backward ", bw_aux, n_aux,
                                   hybrid=hybrid)
        lead = (shape[0], shape[1])
        if merge:
            context.set_output(node.outputs[0], lead + (fw_units + bw_units,), F32)
        else:
            context.set_output(node.outputs[0], lead + (fw_units,), F32)
            context.set_output(node.outputs[1], lead + (bw_units,), F32)
        facts = (tm, merge, max_time, n_batch, fw_units, bw_units, _rnn.ACTIVATIONS[code], code, mode)
        if not hybrid:
            return BidirectionalSequenceRNNData(*facts)
        fw_s = _rnn.hybrid_scales(node, context, {"weights": node.inputs[1], "recurrent weights": node.inputs[2],
                                                  "aux weights": fw_aux})
        bw_s = _rnn.hybrid_scales(node, context, {"weights": node.inputs[5], "recurrent weights": node.inputs[6],
                                                  "aux weights": bw_aux})
        return BidirectionalSequenceRNNHybridData(*facts, bool(p.get("asymmetric_quantize_inputs", False)), fw_s, bw_s)

    def invoke(self, context, node, d):
        run(context, node, d)


def run(context, node, d, fw_sums=None, bw_sums=None, eval_float=_rnn.eval_float) -> None:
    """Both cells by kind; ``fw_sums`` / ``bw_sums``: the hybrid row sums if the speed layer made them once;
    ``eval_float``: the float sequence (the speed layer passes its compiled one)."""
    t = context.tensors

    def tm(a):
        return a if d.time_major else a.transpose(1, 0, 2)

    x = tm(t[node.inputs[0]])
    aux = tm(t[node.input(9)]) if d.aux_mode in ("aux weights", "backward reads aux_input") else None
    with_w = d.aux_mode == "aux weights"
    cell_aux = aux if with_w else None
    fw = [t[node.inputs[k]] for k in (1, 2, 3)] + [t[node.input(10)] if with_w else None]
    bw = [t[node.inputs[k]] for k in (5, 6, 7)] + [t[node.input(11)] if with_w else None]
    fw_h = t[node.inputs[4]].reshape(d.n_batch, d.fw_num_units)
    bw_h = t[node.inputs[8]].reshape(d.n_batch, d.bw_num_units)
    bw_x = aux if d.aux_mode == "backward reads aux_input" else x
    if type(d) is BidirectionalSequenceRNNHybridData:
        asym = d.asymmetric_quantize_inputs
        for _ in range(d.max_time if d.time_major else 1):      # litert's hybrid time-major loop (see above)
            yf = _rnn.eval_hybrid(x, cell_aux, *fw, fw_h, d.activation_code, d.fw_weight_scales, asym, d.time_major,
                                  False, fw_sums)
            yb = _rnn.eval_hybrid(bw_x, cell_aux, *bw, bw_h, d.activation_code, d.bw_weight_scales, asym,
                                  d.time_major, True, bw_sums)
    else:
        yf = eval_float(x, cell_aux, *fw, fw_h, d.activation_code, False)
        yb = eval_float(bw_x, cell_aux, *bw, bw_h, d.activation_code, True)
    if d.merge_outputs:
        t[node.outputs[0]][...] = tm(np.concatenate([yf, yb], axis=2))
    else:
        t[node.outputs[0]][...] = tm(yf)
        t[node.outputs[1]][...] = tm(yb)
