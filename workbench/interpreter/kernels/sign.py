"""SIGN: -1, 0 or +1 elementwise (float32 v1, int32 v2): (0 < x) - (x < 0), except that a NaN
stays NaN (measured in litert, whose float kernel passes NaN through)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I32
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    s = ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)).astype(x.dtype)
    return np.where(np.isnan(x), x, s) if x.dtype.kind == "f" else s


@kernel(BuiltinOperator.SIGN, versions=(1, 2))
class Sign(MathUnaryKernel):
    name = "sign"
    dtypes = (F32, I32)
    fn = staticmethod(reference)
