"""ATAN2 (float32): atan2(y, x) elementwise, the angle of the point (x, y) in (-pi, pi].

TFLite requires both inputs to have the same shape (no broadcasting)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32
from ._elementwise import MathBinaryKernel, refuse


def reference(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.arctan2(y, x).astype(y.dtype)


@kernel(BuiltinOperator.ATAN2, versions=(1,))
class Atan2(MathBinaryKernel):
    name = "atan2"
    dtypes = (F32,)
    fn = staticmethod(reference)

    def prepare(self, context, node):
        if context.shape(node.inputs[0]) != context.shape(node.inputs[1]):
            refuse(node, f"y {list(context.shape(node.inputs[0]))} and x {list(context.shape(node.inputs[1]))} "
                         f"must have the same shape")
        return super().prepare(context, node)
