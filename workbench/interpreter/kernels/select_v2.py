"""SELECT_V2: ``condition ? x : y`` with numpy broadcasting of all three (TFLite allows an output of
rank 8 at most).  A conditional bit copy like SELECT (no rescaling of quantized values); the same
types: bool, float16, float32, float64, int8, uint8, int16, uint16, int32, uint32, int64, complex64
(v1; uint32 is v2).  When condition, x, y and the declared output each hold one element the output
keeps its declared shape, as in SELECT."""

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, kernel
from ._elementwise import broadcast_shape, fail
from .select import SelectData, check_types, reference, single_element_shape

MAX_RANK = 8


@kernel(BuiltinOperator.SELECT_V2, versions=(1, 2))
class SelectV2(Kernel):
    name = "select_v2"

    def prepare(self, context, node):
        check_types(context, node)
        keep = single_element_shape(context, node)
        if keep is not None:
            out, mode = keep, "one element"
        else:
            out, mode = broadcast_shape(node, context, *node.inputs[:3]), "broadcast"
            if len(out) > MAX_RANK:
                fail(node, f"the broadcast output {list(out)} has rank {len(out)}; TFLite allows {MAX_RANK} at most")
        context.set_output(node.outputs[0], out, context.dtype(node.inputs[1]))
        return SelectData(mode, tuple(out))

    def invoke(self, context, node, d):
        t = context.tensors
        c, x, y = (t[i] for i in node.inputs[:3])
        if d.mode == "one element":
            c, x, y = c.reshape(()), x.reshape(()), y.reshape(())
        t[node.outputs[0]][...] = reference(c, x, y).reshape(d.output_shape)
