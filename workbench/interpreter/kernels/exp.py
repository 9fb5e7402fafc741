"""EXP (float32): e ** x."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.exp(x), dtype=x.dtype)


@kernel(BuiltinOperator.EXP, versions=(1,))
class Exp(MathUnaryKernel):
    name = "exp"
    dtypes = (F32,)
    fn = staticmethod(reference)
