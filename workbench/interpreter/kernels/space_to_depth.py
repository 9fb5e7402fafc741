"""SPACE_TO_DEPTH (NHWC): out[n, y, x, (by * b + bx) * C + c] = in[n, y * b + by, x * b + bx, c];
block size from SpaceToDepthOptions; H and W must divide by it.  float32/int32/int64/uint8 (v1), int8
(v2) — TFLite's kernel has no int16 or bool.  Pure data movement."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import check_rank
from ._elementwise import fail

TYPES = tuple(np.dtype(t) for t in (np.float32, np.uint8, np.int8, np.int32, np.int64))


@opdata
class SpaceToDepthData(OpData):
    block_size: int
    output_shape: tuple


def reference(x, b):
    n, h, w, c = x.shape
    return x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // b, w // b, b * b * c)


@kernel(BuiltinOperator.SPACE_TO_DEPTH, versions=(1, 2))
class SpaceToDepth(Kernel):
    name = "space_to_depth"

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, TYPES)
        n, h, w, c = check_rank(node, context, x, 4)
        b = int(node.params.get("block_size", 0))
        if b <= 0 or h % b or w % b:
            fail(node, f"block size {b} must be positive and divide H={h} and W={w}")
        out = (n, h // b, w // b, c * b * b)
        context.set_output(node.outputs[0], out, context.dtype(x))
        return SpaceToDepthData(b, out)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.block_size)
