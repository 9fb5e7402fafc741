"""UNIQUE: a 1-D input -> its distinct values in order of first appearance (output 0, whose length is
only known while invoking: a dynamic tensor) and, for every input element, the position of its
value in output 0 (output 1, int32 or int64 per UniqueOptions.idx_out_type).  Types: float32, int8,
int16, int32, int64, uint8."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I32, I64
from ._elementwise import refuse

TYPES = (F32, np.dtype(np.int8), np.dtype(np.int16), I32, I64, np.dtype(np.uint8))


@opdata
class UniqueData(OpData):
    n: int
    index_type: str


@kernel(BuiltinOperator.UNIQUE, versions=(1,))
class Unique(Kernel):
    name = "unique"
    foldable = False       # output 0 is sized in invoke

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, TYPES, "input")
        shape = context.shape(x)
        if len(shape) != 1:
            refuse(node, f"input has shape {list(shape)}; UNIQUE takes a 1-D tensor")
        code = int(node.params.get("idx_out_type", 2))
        # runtime TfLiteType codes: 2 = int32, 4 = int64 (a missing options table gives 0: int32)
        idt = I64 if code == 4 else I32
        context.set_output_dynamic(node.outputs[0], dt)
        context.set_output(node.outputs[1], shape, idt)
        return UniqueData(shape[0], str(idt))

    def invoke(self, context, node, d):
        t = context.tensors
        x = t[node.inputs[0]]
        first = {}
        idx = np.empty(len(x), np.int64)
        for i, v in enumerate(x.tolist()):
            idx[i] = first.setdefault(v, len(first))
        values = np.array(list(first), x.dtype)
        context.resize_output(node.outputs[0], values.shape)[...] = values
        t[node.outputs[1]][...] = idx
