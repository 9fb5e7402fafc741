"""COS (float32)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.cos(x), dtype=x.dtype)


@kernel(BuiltinOperator.COS, versions=(1,))
class Cos(MathUnaryKernel):
    name = "cos"
    dtypes = (F32,)
    fn = staticmethod(reference)
