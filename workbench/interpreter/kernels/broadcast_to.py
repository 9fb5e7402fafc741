"""BROADCAST_TO: numpy broadcasting of the input to the constant shape in input 1 (int32/int64).
The first version of this op is 2 (``op_version.cc``): float32/int32/int64/bool/uint8; int8 and int16
are version 3.  Pure data movement: quantized values are copied as they are."""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, fail


@opdata
class BroadcastToData(OpData):
    output_shape: tuple


@kernel(BuiltinOperator.BROADCAST_TO, versions=(2, 3))
class BroadcastTo(Kernel):
    name = "broadcast_to"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        if context.dtype(x) == np.dtype(object):
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): STRING tensors are not "
                                     f"supported (TFLite's kernel refuses them)")
        target = tuple(const_ints(context, node, 1, "the shape"))
        if len(target) < len(shape) or any(s not in (1, t) for s, t in zip(shape[::-1], target[::-1])):
            fail(node, f"cannot broadcast shape {list(shape)} to {list(target)}")
        if len(target) > 8:
            fail(node, f"output rank {len(target)} is above TFLite's limit of 8")
        context.set_output(node.outputs[0], target, context.dtype(x))
        return BroadcastToData(target)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = np.broadcast_to(context.tensors[node.inputs[0]], d.output_shape)
