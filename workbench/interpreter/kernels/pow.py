"""POW: a ** b with broadcasting, float32 (std::pow) or int32 (repeated squaring, wrapping like C).

TFLite refuses a negative integer exponent at run time ("Integer to negative integer power"); so
does this kernel."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I32
from ._elementwise import MathBinaryKernel, fail


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.int32:
        with np.errstate(over="ignore"):
            return np.power(a.astype(np.int64), b.astype(np.int64)).astype(np.int32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return np.power(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)


@kernel(BuiltinOperator.POW, versions=(1,))
class Pow(MathBinaryKernel):
    name = "pow"
    dtypes = (F32, I32)
    fn = staticmethod(reference)

    def check(self, context, node, a, b):
        if b.dtype == np.int32 and (b < 0).any():
            fail(node, "an integer raised to a negative integer power (TFLite refuses it too)")
