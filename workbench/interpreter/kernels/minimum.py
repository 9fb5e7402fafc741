"""MINIMUM: a < b ? a : b with broadcasting (float32, int32, int64; v3 = broadcast rank > 4)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import I32, I64, MathBinaryKernel


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.where(a < b, a, b), dtype=a.dtype)


@kernel(BuiltinOperator.MINIMUM, versions=(1, 3))
class Minimum(MathBinaryKernel):
    name = "minimum"
    dtypes = (F32, I32, I64)
    fn = staticmethod(reference)
