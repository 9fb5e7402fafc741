"""SQRT (float32): element-wise square root (NaN for negative inputs, as std::sqrt)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.sqrt(x), dtype=x.dtype)


@kernel(BuiltinOperator.SQRT, versions=(1,))
class Sqrt(MathUnaryKernel):
    name = "sqrt"
    dtypes = (F32,)
    fn = staticmethod(reference)
