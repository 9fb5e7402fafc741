"""COS: float32 (v1) and float16 (v2).  float16 is computed in float32 and rounded to half, NaNs as
litert writes them (see ``sin.py``); every one of the 65536 half values checked against litert."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel
from .sin import F16, half_result


def reference(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        y = np.cos(x.astype(np.float32))
    return half_result(x, y) if x.dtype == F16 else np.asarray(y, dtype=x.dtype)


@kernel(BuiltinOperator.COS, versions=(1, 2))
class Cos(MathUnaryKernel):
    name = "cos"
    dtypes = (F32, F16)
    fn = staticmethod(reference)
