"""DEPTH_TO_SPACE (NHWC): each pixel's C = b*b*C' channels become a b x b block of C' channels.

Input channel (i*b + j)*C' + c goes to output pixel (y*b + i, x*b + j), channel c.
float32/int32/int64/uint8 (v1), int8 (v2) — TFLite's kernel has no int16 or bool.  Pure data movement.
"""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import check_rank

TYPES = tuple(np.dtype(t) for t in (np.float32, np.uint8, np.int8, np.int32, np.int64))


@opdata
class DepthToSpaceData(OpData):
    block_size: int
    output_shape: tuple


def depth_to_space(x: np.ndarray, b: int, out: np.ndarray) -> None:
    """``reference_ops::DepthToSpace``: the channels split as [b, b, C'], the first b going next to H
    and the second next to W (out viewed as [N, H, b, W, b, C'])."""
    n, h, w, c = x.shape
    co = c // (b * b)
    out.reshape(n, h, b, w, b, co)[...] = x.reshape(n, h, w, b, b, co).transpose(0, 1, 3, 2, 4, 5)


@kernel(BuiltinOperator.DEPTH_TO_SPACE, versions=(1, 2))
class DepthToSpace(Kernel):
    name = "depth_to_space"

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, TYPES)
        n, h, w, c = check_rank(node, context, x, 4)
        b = int(node.params["block_size"])
        if b < 1 or c % (b * b):
            raise UnsupportedOpError(f"DEPTH_TO_SPACE (node {node.index}): block size {b} does not divide {c} channels")
        out = (n, h * b, w * b, c // (b * b))
        context.set_output(node.outputs[0], out, context.dtype(x))
        return DepthToSpaceData(b, out)

    def invoke(self, context, node, d):
        depth_to_space(context.tensors[node.inputs[0]], d.block_size, context.tensors[node.outputs[0]])
