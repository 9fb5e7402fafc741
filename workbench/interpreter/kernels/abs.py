"""ABS: |x| for float32 (v1) and int32 (v5; INT32_MIN stays INT32_MIN, as in C)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import I32, MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.abs(x), dtype=x.dtype)


@kernel(BuiltinOperator.ABS, versions=(1, 5))
class Abs(MathUnaryKernel):
    name = "abs"
    dtypes = (F32, I32)
    fn = staticmethod(reference)
