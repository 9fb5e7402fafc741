"""UNIDIRECTIONAL_SEQUENCE_RNN (float32 v1; hybrid v2, v3): the basic RNN cell of ``_rnn.py`` over a sequence.

Inputs as RNN's, with input 0 [max_time, n_batch, n_input] when ``time_major`` else [n_batch, max_time,
n_input]; the output has the same layout with num_units last.  The hidden state (input 4) is a variable
tensor carried across invokes.  Options (SequenceRNNOptions): time_major, fused_activation_function,
asymmetric_quantize_inputs.  Versions 2 and 3: the hybrid kind (int8 weights, see ``_rnn.py``);
batch-major input is stepped one batch row at a time, as TFLite.  Both kinds are bit-exact with LiteRT;
the speed layer (``workbench/interpreter/fast/rnn.py``) runs the float sequence compiled and makes the
hybrid row sums once.
"""

from __future__ import annotations

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from . import _rnn
from ._common import F32
from ._elementwise import refuse


@opdata
class UnidirectionalSequenceRNNData(OpData):
    """The float32 sequence RNN (and what the hybrid kind has too)."""

    time_major: bool
    max_time: int
    n_batch: int
    n_input: int
    num_units: int
    activation: str
    activation_code: int
    kind = "float"


@opdata
class UnidirectionalSequenceRNNHybridData(UnidirectionalSequenceRNNData):
    asymmetric_quantize_inputs: bool
    weight_scales: dict              # "weights" / "recurrent weights" -> float32 scale
    kind = "hybrid"


@kernel(BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_RNN, versions=(1, 2, 3))
class UnidirectionalSequenceRNN(Kernel):
    name = "unidirectional_sequence_rnn"
    foldable = False

    def prepare(self, context, node):
        if len(node.inputs) != 5 or len(node.outputs) != 1:
            refuse(node, f"expects 5 inputs and 1 output; it has {len(node.inputs)} and {len(node.outputs)}")
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32,), "input")
        shape = context.shape(x)
        if len(shape) != 3:
            refuse(node, f"input '{context.name(x)}' has shape {list(shape)}; expected rank 3")
        tm = bool(node.params.get("time_major", False))
        max_time, n_batch = (shape[0], shape[1]) if tm else (shape[1], shape[0])
        code = int(node.params.get("fused_activation_function", 0))
        _rnn.check_activation(node, code)
        hybrid = _rnn.is_hybrid(context, node.inputs[1])
        units = _rnn.check_cell(node, context, *node.inputs[1:5], shape[2], n_batch, hybrid=hybrid)
        context.set_output(node.outputs[0], (shape[0], shape[1], units), F32)
        facts = (tm, max_time, n_batch, shape[2], units, _rnn.ACTIVATIONS[code], code)
        if not hybrid:
            return UnidirectionalSequenceRNNData(*facts)
        scales = _rnn.hybrid_scales(node, context, {"weights": node.inputs[1], "recurrent weights": node.inputs[2]})
        return UnidirectionalSequenceRNNHybridData(*facts, bool(node.params.get("asymmetric_quantize_inputs", False)),
                                                   scales)

    def invoke(self, context, node, d):
        run(context, node, d)


def run(context, node, d, sums=None, eval_float=_rnn.eval_float) -> None:
    """The sequence by kind; ``sums``: the hybrid row sums if the speed layer made them once; ``eval_float``: the
    float sequence (the speed layer passes its compiled one)."""
    t = context.tensors
    x = t[node.inputs[0]]
    if not d.time_major:
        x = x.transpose(1, 0, 2)                                 # steps over the first axis
    W, R, b = (t[node.inputs[k]] for k in (1, 2, 3))
    h = t[node.inputs[4]].reshape(d.n_batch, d.num_units)
    if type(d) is UnidirectionalSequenceRNNHybridData:
        y = _rnn.eval_hybrid(x, None, W, R, b, None, h, d.activation_code, d.weight_scales,
                             d.asymmetric_quantize_inputs, d.time_major, sums=sums)
    else:
        y = eval_float(x, None, W, R, b, None, h, d.activation_code)
    t[node.outputs[0]][...] = y if d.time_major else y.transpose(1, 0, 2)
