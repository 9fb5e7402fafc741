"""RIGHT_SHIFT: a >> b elementwise with broadcasting, for int8/16/32 and uint8/16/32 (arithmetic
shift for signed types: the sign bit is copied in).

A shift count below 0 or at least the type's bit width is undefined behaviour in TFLite's C++ and
is refused here (a named run-time error)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._elementwise import MathBinaryKernel, fail
from .bitwise_xor import INTS


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.right_shift(a, b).astype(a.dtype)


@kernel(BuiltinOperator.RIGHT_SHIFT, versions=(1,))
class RightShift(MathBinaryKernel):
    name = "right_shift"
    dtypes = INTS
    fn = staticmethod(reference)

    def check(self, context, node, a, b):
        bits = a.dtype.itemsize * 8
        if b.size and (int(b.min()) < 0 or int(b.max()) >= bits):
            fail(node, f"shift counts must be in [0, {bits}) for {a.dtype}; got {int(b.min())}..{int(b.max())}")
