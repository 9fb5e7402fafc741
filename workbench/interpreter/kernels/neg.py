"""NEG: -x for float32, int32 and int64 (integers wrap like C)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import I32, I64, MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.negative(x), dtype=x.dtype)


@kernel(BuiltinOperator.NEG, versions=(1,))
class Neg(MathUnaryKernel):
    name = "neg"
    dtypes = (F32, I32, I64)
    fn = staticmethod(reference)
