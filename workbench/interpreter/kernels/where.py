"""WHERE (one input): the coordinates of the true (non-zero) elements, as an int64 [count, rank]
tensor in row-major order.  The output size depends on the values: a constant condition is
evaluated at allocation; a run-time one makes the output dynamic (sized while invoking).  Condition bool
(v1) or float32/int32/int64/uint32/uint8/int8 compared with 0 (v2); TFLite refuses float16, float64,
int16, uint16, complex64 and string conditions."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import BOOL, F32, I32, I64
from ._elementwise import refuse


@opdata
class WhereData(OpData):
    output_shape: tuple


@kernel(BuiltinOperator.WHERE, versions=(1, 2))
class Where(Kernel):
    name = "where"

    def prepare(self, context, node):
        c = node.inputs[0]
        if len(node.inputs) > 1 and any(t >= 0 for t in node.inputs[1:]):
            refuse(node, "the three-input form (x, y) is SELECT_V2's job; TFLite's WHERE takes one input")
        context.expect_dtype(node, c, (BOOL, F32, I32, I64, np.dtype(np.uint32), np.dtype(np.uint8), np.dtype(np.int8)),
                             "condition")
        v = context.value(c)
        if v is None:
            # the output size depends on values computed at run time: a dynamic output, sized in
            # invoke (TFLite's SetTensorToDynamic / ResizeTensor)
            context.set_output_dynamic(node.outputs[0], I64)
            return WhereData(None)
        out = (int(np.count_nonzero(v)), len(context.shape(c)))
        context.set_output(node.outputs[0], out, I64)
        return WhereData(out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        res = np.argwhere(x).astype(np.int64).reshape(-1, x.ndim)
        if d.output_shape is None:
            context.resize_output(node.outputs[0], res.shape)[...] = res
        else:
            context.tensors[node.outputs[0]][...] = res.reshape(d.output_shape)
