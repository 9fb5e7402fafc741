"""RNN (float32 v1; hybrid v2, v3): one basic RNN step, h' = g(b + W·x + R·h) (see ``_rnn.py``).

Inputs: 0 input [n_batch, n_input], 1 weights [num_units, n_input], 2 recurrent weights [num_units,
num_units], 3 bias [num_units], 4 hidden state [n_batch, num_units] (a variable tensor, carried to the
next invoke).  Output [n_batch, num_units] = the new hidden state.  Options (RNNOptions):
fused_activation_function, asymmetric_quantize_inputs.  Versions 2 and 3 are the hybrid kind (int8
weights and recurrent weights with one scale each, float everything else; v3 quantizes the rows
asymmetrically).  Both kinds are bit-exact with LiteRT (``_rnn.py``); the speed layer
(``workbench/interpreter/fast/rnn.py``) runs the float sequence compiled and makes the
hybrid row sums once.
"""

from __future__ import annotations

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from . import _rnn
from ._common import F32
from ._elementwise import refuse


@opdata
class RNNData(OpData):
    """The float32 RNN step (and what the hybrid kind has too)."""

    n_batch: int
    n_input: int
    num_units: int
    activation: str
    activation_code: int
    kind = "float"


@opdata
class RNNHybridData(RNNData):
    asymmetric_quantize_inputs: bool
    weight_scales: dict              # "weights" / "recurrent weights" -> float32 scale
    kind = "hybrid"


@kernel(BuiltinOperator.RNN, versions=(1, 2, 3))
class RNN(Kernel):
    name = "rnn"
    foldable = False

    def prepare(self, context, node):
        if len(node.inputs) != 5 or len(node.outputs) != 1:
            refuse(node, f"expects 5 inputs and 1 output; it has {len(node.inputs)} and {len(node.outputs)}")
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32,), "input")
        shape = context.shape(x)
        if len(shape) != 2:
            refuse(node, f"input '{context.name(x)}' has shape {list(shape)}; expected [n_batch, n_input]")
        code = int(node.params.get("fused_activation_function", 0))
        _rnn.check_activation(node, code)
        hybrid = _rnn.is_hybrid(context, node.inputs[1])
        units = _rnn.check_cell(node, context, *node.inputs[1:5], shape[1], shape[0], hybrid=hybrid)
        context.set_output(node.outputs[0], (shape[0], units), F32)
        facts = (shape[0], shape[1], units, _rnn.ACTIVATIONS[code], code)
        if not hybrid:
            return RNNData(*facts)
        scales = _rnn.hybrid_scales(node, context, {"weights": node.inputs[1], "recurrent weights": node.inputs[2]})
        return RNNHybridData(*facts, bool(node.params.get("asymmetric_quantize_inputs", False)), scales)

    def invoke(self, context, node, d):
        run(context, node, d)


def run(context, node, d, sums=None, eval_float=_rnn.eval_float) -> None:
    """One step by kind; ``sums``: the hybrid row sums if the speed layer made them once; ``eval_float``: the
    float sequence (the speed layer passes its compiled one)."""
    t = context.tensors
    x, W, R, b = (t[node.inputs[k]] for k in range(4))
    h = t[node.inputs[4]].reshape(d.n_batch, d.num_units)
    if type(d) is RNNHybridData:
        y = _rnn.eval_hybrid(x[None], None, W, R, b, None, h, d.activation_code, d.weight_scales,
                             d.asymmetric_quantize_inputs, sums=sums)
    else:
        y = eval_float(x[None], None, W, R, b, None, h, d.activation_code)
    t[node.outputs[0]][...] = y[0]
