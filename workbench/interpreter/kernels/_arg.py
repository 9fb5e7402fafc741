"""What ARG_MAX and ARG_MIN share: inputs (input, axis), output type from the options (runtime
TfLiteType 2 = int32, 4 = int64; anything else -- e.g. an absent options table, which leaves 0 --
is refused, as TFLite does: "Unknown index output data type").

Inputs: float32, int32, uint8, bool (v3), int8 (v2) — TFLite has no int16 or int64 input.  A
quantized input is compared as raw integers: the scale is positive, so the order of the integers is
the order of the real values."""

import numpy as np

from ..registry import Kernel, OpData, opdata
from ._common import BOOL, F32, I32, I64
from ._elementwise import const_ints, fail, refuse

OUT_TYPES = {2: I32, 4: I64}


@opdata
class ArgData(OpData):
    axis: int
    output_type: str
    output_shape: tuple


class ArgKernel(Kernel):
    func = None   # np.argmax / np.argmin (both return the FIRST index of ties, as TFLite)
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32, I32, np.dtype(np.uint8), np.dtype(np.int8), BOOL))
        shape = context.shape(x)
        axes = const_ints(context, node, 1, "the axis")
        if len(axes) != 1:
            fail(node, f"the axis must hold one value, got {axes}")
        a = axes[0]
        if not -len(shape) <= a < len(shape):
            fail(node, f"axis {a} is out of range for an input of rank {len(shape)}")
        a = a + len(shape) if a < 0 else a
        code = int(node.params.get("output_type", 0))
        if code not in OUT_TYPES:
            refuse(node, f"output_type is {code} (runtime TfLiteType); TFLite only accepts int32 (2) or int64 (4) "
                         f"-- an absent options table leaves 0")
        out = shape[:a] + shape[a + 1:]
        context.set_output(node.outputs[0], out, OUT_TYPES[code])
        return ArgData(a, str(OUT_TYPES[code]), out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        context.tensors[node.outputs[0]][...] = type(self).func(x, axis=d.axis)
