"""ZEROS_LIKE: a tensor of zeros with the input's shape and dtype (float32, int32, int64; v1)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I32, I64
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.full(x.shape, 0, x.dtype)


@kernel(BuiltinOperator.ZEROS_LIKE, versions=(1,))
class ZerosLike(MathUnaryKernel):
    name = "zeros_like"
    dtypes = (F32, I32, I64)
    value_inputs = ()     # only the shape matters: the node is folded at allocation
    fn = staticmethod(reference)

    def invoke(self, context, node, d):
        # only the shape matters: the input's values are not read (when the node is folded in
        # allocate_tensors the input may be a graph input, which has no array yet)
        context.tensors[node.outputs[0]][...] = 0
