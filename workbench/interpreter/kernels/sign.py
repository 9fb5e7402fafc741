"""SIGN: -1, 0 or +1 elementwise (float32 v1, int32 v2).  As TFLite computes it,
(0 < x) - (x < 0): a NaN gives 0, not NaN."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32
from ._elementwise import I32, MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)).astype(x.dtype)


@kernel(BuiltinOperator.SIGN, versions=(1, 2))
class Sign(MathUnaryKernel):
    name = "sign"
    dtypes = (F32, I32)
    fn = staticmethod(reference)
