"""SPLIT: inputs (axis, value); ``num_splits`` equal pieces along the axis (SplitOptions).  The
axis is a constant scalar; the dimension must divide evenly.  Versions: float32/uint8 (v1), int8
(v2), int32 (v3), int16 (v4).  Pure data movement: quantized values are copied as they are (TFLite
does not compare the input's and outputs' quantization)."""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, fail, norm_axes


@opdata
class SplitData(OpData):
    axis: int
    sizes: tuple

def split_outputs(context, node, d, x):
    start = 0
    for t, s in zip(node.outputs, d.sizes):
        idx = [slice(None)] * x.ndim
        idx[d.axis] = slice(start, start + s)
        context.tensors[t][...] = x[tuple(idx)]
        start += s

@kernel(BuiltinOperator.SPLIT, versions=(1, 2, 3, 4))
class Split(Kernel):
    name = "split"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[1]
        shape = context.shape(x)
        if context.dtype(x) == np.dtype(object):
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): STRING tensors are not "
                                     f"supported (TFLite's kernel refuses them)")
        if not shape:
            fail(node, "the input is a scalar; there is no axis to split")
        axes = const_ints(context, node, 0, "the axis")
        if len(axes) != 1:
            fail(node, f"the axis must be a single value, got {axes}")
        axis, = norm_axes(node, axes, len(shape))
        n = int(node.params.get("num_splits", 0))
        if n <= 0 or len(node.outputs) != n:
            fail(node, f"num_splits is {n} but the node has {len(node.outputs)} outputs")
        if shape[axis] % n:
            fail(node, f"dimension {shape[axis]} of axis {axis} does not split into {n} equal parts")
        sizes = (shape[axis] // n,) * n
        for t in node.outputs:
            out = list(shape)
            out[axis] = sizes[0]
            context.set_output(t, out, context.dtype(x))
        return SplitData(axis, sizes)

    def invoke(self, context, node, d):
        split_outputs(context, node, d, context.tensors[node.inputs[1]])
