"""FLOOR (float32): round toward -inf."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.floor(x), dtype=x.dtype)


@kernel(BuiltinOperator.FLOOR, versions=(1,))
class Floor(MathUnaryKernel):
    name = "floor"
    dtypes = (F32,)
    fn = staticmethod(reference)
