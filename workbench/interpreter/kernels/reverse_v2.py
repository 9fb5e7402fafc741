"""REVERSE_V2: reverse the input along the axes in input 1 (a constant).  float32/int32/int64/uint8/
int16 (v1), bool (v2), int8 (v3).  Pure data movement: quantized values are copied as they are."""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, norm_axes


@opdata
class ReverseV2Data(OpData):
    axes: tuple


@kernel(BuiltinOperator.REVERSE_V2, versions=(1, 2, 3))
class ReverseV2(Kernel):
    name = "reverse_v2"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        if context.dtype(x) == np.dtype(object):
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): STRING tensors are not "
                                     f"supported (TFLite's kernel refuses them)")
        axes = norm_axes(node, const_ints(context, node, 1, "the axes"), len(shape))
        axes = tuple(a for a in axes if a < len(shape))      # a scalar has no axes to reverse
        context.set_output(node.outputs[0], shape, context.dtype(x))
        return ReverseV2Data(axes)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = np.flip(context.tensors[node.inputs[0]], d.axes)
