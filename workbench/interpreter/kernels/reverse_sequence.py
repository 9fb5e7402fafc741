"""REVERSE_SEQUENCE: for every batch row b (along ``batch_dim``), reverse the first seq_lengths[b]
elements along ``seq_dim`` and keep the rest (ReverseSequenceOptions; float32, int16, int32, int64,
uint8 ...).  A length below 0 or past the dimension is a run-time error, as in TFLite."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import I32, I64
from ._elementwise import fail, refuse


@opdata
class ReverseSequenceData(OpData):
    seq_dim: int
    batch_dim: int


@kernel(BuiltinOperator.REVERSE_SEQUENCE, versions=(1,))
class ReverseSequence(Kernel):
    name = "reverse_sequence"

    def prepare(self, context, node):
        x, lens = node.inputs[0], node.inputs[1]
        shape = context.shape(x)
        context.expect_dtype(node, lens, (I32, I64), "seq_lengths")
        sd, bd = int(node.params.get("seq_dim", 0)), int(node.params.get("batch_dim", 0))
        r = len(shape)
        if not (0 <= sd < r and 0 <= bd < r) or sd == bd:
            refuse(node, f"seq_dim {sd} and batch_dim {bd} must be different axes of the rank-{r} input")
        if tuple(context.shape(lens)) != (shape[bd],):
            refuse(node, f"seq_lengths has shape {list(context.shape(lens))}; expected [{shape[bd]}]")
        context.set_output(node.outputs[0], shape, context.dtype(x))
        return ReverseSequenceData(sd, bd)

    def invoke(self, context, node, d):
        t = context.tensors
        x, lens = t[node.inputs[0]], t[node.inputs[1]]
        n = x.shape[d.seq_dim]
        if lens.size and (int(lens.min()) < 0 or int(lens.max()) > n):
            fail(node, f"seq_lengths must be in [0, {n}]; got {lens.tolist()}")
        y = np.array(x)
        xm = np.moveaxis(x, (d.batch_dim, d.seq_dim), (0, 1))
        ym = np.moveaxis(y, (d.batch_dim, d.seq_dim), (0, 1))      # a view: writes land in y
        for b, length in enumerate(lens.tolist()):
            ym[b, :length] = xm[b, :length][::-1]
        t[node.outputs[0]][...] = y
