"""LOG (float32): natural logarithm (NaN below 0, -inf at 0)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.log(x), dtype=x.dtype)


@kernel(BuiltinOperator.LOG, versions=(1,))
class Log(MathUnaryKernel):
    name = "log"
    dtypes = (F32,)
    fn = staticmethod(reference)
