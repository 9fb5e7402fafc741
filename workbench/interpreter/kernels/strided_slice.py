"""STRIDED_SLICE: x[begin:end:stride] per axis, with TensorFlow's five bit masks.

begin/end/strides (inputs 1-3) must be constants.  Bit i of
  ``begin_mask`` / ``end_mask``  ignore begin[i] / end[i] (take the whole extent);
  ``shrink_axis_mask``           take the single element begin[i] and drop the axis;
  ``ellipsis_mask``              spec i stands for as many full axes as needed (version 6);
  ``new_axis_mask``              spec i inserts an axis of size 1 (version 6);
and ``offset`` (version 8) makes end relative to begin.  TensorFlow designed these to be Python
slicing, so the prepared OpData holds an ordinary Python index tuple.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata


@opdata
class StridedSliceData(OpData):
    index: tuple          # what x[index] means: slices, ints (shrink), None (new axis), Ellipsis
    output_shape: tuple


def build_index(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask,
                offset=False) -> tuple:
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        b, e, s = int(b), int(e), int(s)
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif new_axis_mask & bit:
            index.append(None)
        elif shrink_mask & bit:
            index.append(b)
        else:
            if s == 0:
                raise ValueError("strided slice stride must not be 0")
            if offset:
                e = b + e
            index.append(slice(None if begin_mask & bit else b, None if end_mask & bit else e, s))
    return tuple(index)


@kernel(BuiltinOperator.STRIDED_SLICE, versions=(1, 2, 3, 4, 6))
class StridedSlice(Kernel):
    name = "strided_slice"
    value_inputs = (0, 1, 2, 3)

    def prepare(self, context, node):
        p = node.params
        x_t = node.inputs[0]
        begin = context.require_value(node, 1, "begin").reshape(-1)
        end = context.require_value(node, 2, "end").reshape(-1)
        strides = context.require_value(node, 3, "strides").reshape(-1)
        if not len(begin) == len(end) == len(strides):
            raise UnsupportedOpError(f"STRIDED_SLICE (node {node.index}): begin/end/strides differ in length")
        if any(int(s) == 0 for s in strides):
            raise UnsupportedOpError(f"STRIDED_SLICE (node {node.index}): strides {strides.tolist()} contain a 0")
        index = build_index(begin, end, strides, p["begin_mask"], p["end_mask"], p["ellipsis_mask"],
                            p["new_axis_mask"], p["shrink_axis_mask"], p.get("offset", False))
        probe = np.broadcast_to(np.empty((), np.uint8), context.shape(x_t))   # no memory, any size
        try:
            out_shape = probe[index].shape
        except IndexError as exc:
            raise UnsupportedOpError(f"STRIDED_SLICE (node {node.index}): {exc}") from None
        context.set_output(node.outputs[0], out_shape, context.dtype(x_t))
        return StridedSliceData(index, tuple(out_shape))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = context.tensors[node.inputs[0]][d.index]
