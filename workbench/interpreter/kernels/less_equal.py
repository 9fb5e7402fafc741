"""LESS_EQUAL: a <= b -> bool, with broadcasting (float32, int32, int64)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import BOOL, I32, I64, MathBinaryKernel


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.less_equal(a, b), dtype=np.bool_)


@kernel(BuiltinOperator.LESS_EQUAL, versions=(1,))
class LessEqual(MathBinaryKernel):
    name = "less_equal"
    dtypes = (F32, I32, I64)
    out_dtype = BOOL
    fn = staticmethod(reference)
