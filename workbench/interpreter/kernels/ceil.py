"""CEIL (float32): round toward +inf."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.ceil(x), dtype=x.dtype)


@kernel(BuiltinOperator.CEIL, versions=(1,))
class Ceil(MathUnaryKernel):
    name = "ceil"
    dtypes = (F32,)
    fn = staticmethod(reference)
