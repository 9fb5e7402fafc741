"""STRIDED_SLICE: x[begin:end:stride] per axis, with TensorFlow's five bit masks.

begin/end/strides (inputs 1-3) must be constants.  Bit i of
  ``begin_mask`` / ``end_mask``  ignore begin[i] / end[i] (take the whole extent);
  ``shrink_axis_mask``           take the single element begin[i] and drop the axis;
  ``ellipsis_mask``              spec i stands for as many full axes as needed (version 6);
  ``new_axis_mask``              spec i inserts an axis of size 1 (version 6);
and ``offset`` (version 8) makes end relative to begin.  TensorFlow designed these to be Python
slicing, so the prepared OpData holds an ordinary Python index tuple.

``offset`` as litert runs it: the start is resolved first (begin_mask, a negative begin counted from
the end, clamped into the axis), then ``stop = start + end[i]``, and end_mask is ignored.  litert
does not clamp that stop: past the axis it reads outside the tensor (garbage or a crash), and a
negative stop is mishandled too, so those are refused here, as are offset with end_mask, ellipsis or
new axes (litert crashes or is untested there).  Within 0 <= stop <= size (stride > 0) or
0 <= stop < size (stride < 0) it is exactly ``x[start:stop:stride]``.

Pure data movement (quantized values copied as stored).  Types: float32, float16, float64, int32,
int64, int16, uint8, uint16, complex64 (v1), int8 (v2), bool (v3), string (v5), uint32 (v7); rank
above 4 is v4.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..context import STRING_DTYPE
from ..registry import Kernel, OpData, kernel, opdata

TYPES = tuple(np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int32, np.int64, np.int16, np.uint8,
                                    np.uint16, np.complex64, np.int8, np.bool_, np.uint32)) + (STRING_DTYPE,)


@opdata
class StridedSliceData(OpData):
    index: tuple          # what x[index] means: slices, ints (shrink), None (new axis), Ellipsis
    output_shape: tuple


def build_index(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask) -> tuple:
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
            index.append(slice(None if begin_mask & bit else b, None if end_mask & bit else e, s))
    return tuple(index)


def build_offset_index(node, shape, begin, end, strides, begin_mask, end_mask, shrink_mask) -> tuple:
    """The index for ``offset=True`` (end relative to the resolved start); see the module docstring."""
    def refuse(why):
        raise UnsupportedOpError(f"STRIDED_SLICE v{node.version} (node {node.index}) with offset: {why}")

    if len(begin) > len(shape):
        refuse(f"{len(begin)} slice specs for an input of rank {len(shape)}")
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        b, e, s = int(b), int(e), int(s)
        bit = 1 << i
        size = shape[i]
        if shrink_mask & bit:
            index.append(b)
            continue
        if end_mask & bit:
            refuse(f"end_mask bit {i} is set; litert ignores it with offset and can crash")
        if size == 0:
            refuse(f"axis {i} is empty")
        start = (-(2 ** 31) if s > 0 else 2 ** 31 - 1) if begin_mask & bit else b
        if start < 0:
            start += size
        start = min(max(start, 0), size - 1)
        stop = start + e
        if not (0 <= stop <= size if s > 0 else 0 <= stop <= size - 1):
            refuse(f"axis {i}: start {start} + end {e} = {stop} lies outside the axis of size {size} (litert reads "
                   f"outside the tensor there)")
        index.append(slice(start, stop, s))
    return tuple(index)


@kernel(BuiltinOperator.STRIDED_SLICE, versions=range(1, 9))
class StridedSlice(Kernel):
    name = "strided_slice"
    value_inputs = (0, 1, 2, 3)

    def prepare(self, context, node):
        p = node.params
        x_t = node.inputs[0]
        context.expect_dtype(node, x_t, TYPES)
        begin = context.require_value(node, 1, "begin").reshape(-1)
        end = context.require_value(node, 2, "end").reshape(-1)
        strides = context.require_value(node, 3, "strides").reshape(-1)
        if not len(begin) == len(end) == len(strides):
            raise UnsupportedOpError(f"STRIDED_SLICE (node {node.index}): begin/end/strides differ in length")
        if any(int(s) == 0 for s in strides):
            raise UnsupportedOpError(f"STRIDED_SLICE (node {node.index}): strides {strides.tolist()} contain a 0")
        if p.get("offset", False):
            if p["ellipsis_mask"] or p["new_axis_mask"]:
                raise UnsupportedOpError(f"STRIDED_SLICE v{node.version} (node {node.index}): offset together with "
                                         f"ellipsis_mask or new_axis_mask is not supported")
            index = build_offset_index(node, context.shape(x_t), begin, end, strides, p["begin_mask"],
                                       p["end_mask"], p["shrink_axis_mask"])
        else:
            index = build_index(begin, end, strides, p["begin_mask"], p["end_mask"], p["ellipsis_mask"],
                                p["new_axis_mask"], p["shrink_axis_mask"])
        probe = np.broadcast_to(np.empty((), np.uint8), context.shape(x_t))   # no memory, any size
        try:
            out_shape = probe[index].shape
        except IndexError as exc:
            raise UnsupportedOpError(f"STRIDED_SLICE (node {node.index}): begin/end/strides of {len(begin)} "
                                     f"entries do not fit input tensor {x_t} of shape {list(context.shape(x_t))} "
                                     f"({exc})") from None
        context.set_output(node.outputs[0], out_shape, context.dtype(x_t))
        return StridedSliceData(index, tuple(out_shape))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = context.tensors[node.inputs[0]][d.index]
