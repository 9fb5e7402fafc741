"""FLOOR_DIV: floor(a / b) with broadcasting.  int32 (v1) divides in double then floors, as TFLite,
and refuses a zero divisor at run time; float32 (v2) is floor(a / b) computed in float32 (numpy's
own ``floor_divide`` uses fmod and can differ by one ulp-step; TFLite does floor(a / b))."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32
from ._elementwise import I32, MathBinaryKernel, fail


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.int32:
        return np.floor(a.astype(np.float64) / b.astype(np.float64)).astype(np.int32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor(np.divide(a, b, dtype=np.float32))


@kernel(BuiltinOperator.FLOOR_DIV, versions=(1, 2))
class FloorDiv(MathBinaryKernel):
    name = "floor_div"
    dtypes = (F32, I32)
    fn = staticmethod(reference)

    def check(self, context, node, a, b):
        if b.dtype.kind == "i" and (b == 0).any():
            fail(node, "integer division by zero (TFLite: 'Division by 0')")
