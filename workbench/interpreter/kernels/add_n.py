"""ADD_N: the elementwise sum of N inputs of one shape and type (float32, int32), added in input
order (TFLite: no broadcasting)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, FLOAT_MAX, I32
from ._elementwise import refuse


@opdata
class AddNData(OpData):
    n: int
    shape: tuple
    dtype: str


@kernel(BuiltinOperator.ADD_N, versions=(1,))
class AddN(Kernel):
    name = "add_n"

    def prepare(self, context, node):
        if len(node.inputs) < 2 or len(node.outputs) != 1:
            refuse(node, f"needs at least 2 inputs and 1 output; it has {len(node.inputs)} and {len(node.outputs)}")
        first = node.inputs[0]
        dt = context.expect_dtype(node, first, (F32, I32), "input 0")
        shape = context.shape(first)
        for k, t in enumerate(node.inputs[1:], 1):
            if context.dtype(t) != dt or context.shape(t) != shape:
                refuse(node, f"input {k} is {context.dtype(t)} {list(context.shape(t))}; every input must be {dt} "
                             f"{list(shape)}")
        context.set_output(node.outputs[0], shape, dt)
        return AddNData(len(node.inputs), shape, str(dt))

    def invoke(self, context, node, d):
        t = context.tensors
        acc = t[node.inputs[0]].copy()
        with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
            for i in node.inputs[1:]:
                acc += t[i]
                if acc.dtype == F32:        # litert adds pairwise through ADD's kernel: ±inf → ±FLT_MAX
                    np.clip(acc, -FLOAT_MAX, FLOAT_MAX, out=acc)
        t[node.outputs[0]][...] = acc
