"""ELU (float32): x for x >= 0, exp(x) - 1 below (expm1, as TFLite's optimized kernel)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.where(x < 0, np.expm1(np.minimum(x, 0)), x), dtype=x.dtype)


@kernel(BuiltinOperator.ELU, versions=(1,))
class Elu(MathUnaryKernel):
    name = "elu"
    dtypes = (F32,)
    fn = staticmethod(reference)
