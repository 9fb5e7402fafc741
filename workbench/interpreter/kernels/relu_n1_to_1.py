"""RELU_N1_TO_1 (float32): clamp to [-1, 1]."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.clip(x, np.float32(-1), np.float32(1)), dtype=x.dtype)


@kernel(BuiltinOperator.RELU_N1_TO_1, versions=(1,))
class ReluN1To1(MathUnaryKernel):
    name = "relu_n1_to_1"
    dtypes = (F32,)
    fn = staticmethod(reference)
