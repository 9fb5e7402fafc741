"""RSQRT (float32): 1 / sqrt(x)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.float32(1) / np.sqrt(x), dtype=x.dtype)


@kernel(BuiltinOperator.RSQRT, versions=(1,))
class Rsqrt(MathUnaryKernel):
    name = "rsqrt"
    dtypes = (F32,)
    fn = staticmethod(reference)
