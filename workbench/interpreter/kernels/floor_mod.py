"""FLOOR_MOD: the remainder with the sign of the DIVISOR (Python's %, not C's fmod), broadcasting.

TFLite computes the truncated remainder r (``%`` for ints, ``std::fmod`` for floats) and adds the
divisor when r != 0 and r, b have different signs.  int32/int64 refuse a zero divisor at run
time; float32 gives NaN for it.  int8 / int16 (v2) compute on the stored integers the same way
(quantization parameters, if any, are ignored, as litert does) and refuse a zero divisor too."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I32, I64
from ._elementwise import MathBinaryKernel, fail


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.fmod(a, b)
        fix = (r != 0) & ((b < 0) != (r < 0))
        return np.where(fix, r + b, r).astype(a.dtype)


@kernel(BuiltinOperator.FLOOR_MOD, versions=(1, 2))
class FloorMod(MathBinaryKernel):
    name = "floor_mod"
    dtypes = (F32, I32, I64, np.dtype(np.int8), np.dtype(np.int16))
    fn = staticmethod(reference)

    def check(self, context, node, a, b):
        if b.dtype.kind == "i" and (b == 0).any():
            fail(node, "integer division by zero (TFLite: 'Division by 0')")
