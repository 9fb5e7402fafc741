"""FLOOR_DIV: floor(a / b) with broadcasting.  int32 (v1) divides in double then floors, as TFLite,
and refuses a zero divisor at run time; float32 (v2) refuses a zero divisor too (±0.0, measured in
litert: "Division by 0", FLOOR_MOD gives NaN instead) and is floor(a / b) computed in float32 (numpy's
own ``floor_divide`` uses fmod and can differ by one ulp-step; TFLite does floor(a / b)).

int8 and int16 (v3) divide like int32 — in double, floored — on the stored integers: quantization
parameters, if any, are ignored, as litert does.  The one quotient that does not fit, MIN / −1
(= MAX + 1), is converted from double to the small type, which C leaves undefined; litert's x86
build does two things, reproduced here: inputs of equal shapes run a loop vectorised 8 values at
a time whose packing instructions SATURATE (MAX), and the last n mod 8 values, like every value
of a broadcast (TFLite's slow broadcast loop), go through a 32-bit conversion whose low bits are
kept, so they WRAP to MIN (measured for n = 1..65, int8 and int16)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I8, I16, I32
from ._elementwise import MathBinaryKernel, fail


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.int32:
        return np.floor(a.astype(np.float64) / b.astype(np.float64)).astype(np.int32)
    if a.dtype in (I8, I16):
        info = np.iinfo(a.dtype)
        q = np.floor(a.astype(np.float64) / b.astype(np.float64)).astype(np.int64)
        wrapped = q.astype(a.dtype)                               # the low bits of the int32 conversion
        if a.shape != b.shape:
            return wrapped
        vector = np.arange(q.size).reshape(q.shape) < q.size // 8 * 8
        return np.where(vector, np.clip(q, info.min, info.max), wrapped).astype(a.dtype)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.floor(np.divide(a, b, dtype=np.float32))


@kernel(BuiltinOperator.FLOOR_DIV, versions=(1, 2, 3))
class FloorDiv(MathBinaryKernel):
    name = "floor_div"
    dtypes = (F32, I32, I8, I16)
    fn = staticmethod(reference)

    def check(self, context, node, a, b):
        if (b == 0).any():          # float too (also -0.0): litert fails the invoke, it does not give inf
            fail(node, "division by zero (TFLite: 'Division by 0')")
