"""EQUAL: a == b -> bool, with broadcasting (float32, int32, int64, bool)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import BOOL, I32, I64, MathBinaryKernel


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.equal(a, b), dtype=np.bool_)


@kernel(BuiltinOperator.EQUAL, versions=(1,))
class Equal(MathBinaryKernel):
    name = "equal"
    dtypes = (F32, I32, I64, BOOL)
    out_dtype = BOOL
    fn = staticmethod(reference)
