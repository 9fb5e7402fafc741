"""SQUARED_DIFFERENCE: (a - b)^2 with broadcasting (float32, int32)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import I32, MathBinaryKernel


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.square(a - b), dtype=a.dtype)


@kernel(BuiltinOperator.SQUARED_DIFFERENCE, versions=(1,))
class SquaredDifference(MathBinaryKernel):
    name = "squared_difference"
    dtypes = (F32, I32)
    fn = staticmethod(reference)
