"""MIRROR_PAD: pad by mirroring (MirrorPadOptions.mode: 0 REFLECT excludes the edge, 1 SYMMETRIC
repeats it).  Paddings: constant int32/int64 [rank, 2]; REFLECT allows at most dim - 1 per side,
SYMMETRIC at most dim, as TFLite.  float32/int32/int64/uint8 (v1), int8 (v2), int16 (v3): pure data
movement, quantized values are copied as they are (TFLite does not compare the quantizations)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import const_ints, fail

MODES = {0: "reflect", 1: "symmetric"}
TYPES = tuple(np.dtype(t) for t in (np.float32, np.float16, np.uint8, np.int8, np.int16, np.int32, np.int64))


@opdata
class MirrorPadData(OpData):
    mode: str
    paddings: tuple
    output_shape: tuple


@kernel(BuiltinOperator.MIRROR_PAD, versions=(1, 2, 3))
class MirrorPad(Kernel):
    name = "mirror_pad"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, TYPES)
        shape = context.shape(x)
        flat = const_ints(context, node, 1, "the paddings")
        if len(flat) != 2 * len(shape):
            fail(node, f"paddings have {len(flat)} values; input rank {len(shape)} needs [{len(shape)}, 2]")
        pads = tuple((flat[2 * i], flat[2 * i + 1]) for i in range(len(shape)))
        mode = int(node.params.get("mode", 0))
        if mode not in MODES:
            fail(node, f"unknown mode {mode}")
        for axis, ((a, b), dim) in enumerate(zip(pads, shape)):
            limit = dim - 1 if mode == 0 else dim
            if min(a, b) < 0 or max(a, b) > limit:
                fail(node, f"axis {axis}: paddings ({a}, {b}) exceed {limit} for {MODES[mode].upper()} of size {dim}")
        out = tuple(d + a + b for d, (a, b) in zip(shape, pads))
        context.set_output(node.outputs[0], out, context.dtype(x))
        return MirrorPadData(MODES[mode].upper(), pads, out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        context.tensors[node.outputs[0]][...] = np.pad(x, d.paddings, mode=d.mode.lower())
