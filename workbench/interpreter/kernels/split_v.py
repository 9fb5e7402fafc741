"""SPLIT_V: inputs (value, size_splits, axis); pieces of the given sizes (one may be -1: the rest).
float32/int32/int64/uint8/int16 (v1), int8 (v2): pure data movement, quantized values are copied as
they are."""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, kernel
from ._elementwise import const_ints, fail, norm_axes
from .split import SplitData, split_outputs


@kernel(BuiltinOperator.SPLIT_V, versions=(1, 2))
class SplitV(Kernel):
    name = "split_v"
    value_inputs = (0, 1, 2)

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        if context.dtype(x) == np.dtype(object):
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): STRING tensors are not "
                                     f"supported (TFLite's kernel refuses them)")
        sizes = const_ints(context, node, 1, "size_splits")
        axes = const_ints(context, node, 2, "the axis")
        if len(axes) != 1:
            fail(node, f"the axis must be a single value, got {axes}")
        if not shape:
            fail(node, "the input is a scalar; there is no axis to split")
        axis, = norm_axes(node, axes, len(shape))
        if len(sizes) != len(node.outputs):
            fail(node, f"{len(sizes)} size_splits for {len(node.outputs)} outputs")
        unknown = [i for i, s in enumerate(sizes) if s == -1]
        if len(unknown) > 1 or any(s < -1 for s in sizes):
            fail(node, f"size_splits {sizes}: at most one -1 and no other negative size")
        known = sum(s for s in sizes if s != -1)
        if unknown:
            sizes[unknown[0]] = shape[axis] - known
        if sum(sizes) != shape[axis] or min(sizes, default=0) < 0:
            fail(node, f"size_splits {sizes} do not add up to dimension {shape[axis]} of axis {axis}")
        for t, s in zip(node.outputs, sizes):
            out = list(shape)
            out[axis] = s
            context.set_output(t, out, context.dtype(x))
        return SplitData(axis, tuple(sizes))

    def invoke(self, context, node, d):
        split_outputs(context, node, d, context.tensors[node.inputs[0]])
