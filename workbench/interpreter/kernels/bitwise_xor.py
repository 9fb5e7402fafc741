"""BITWISE_XOR: a ^ b elementwise with broadcasting, for int8/16/32 and uint8/16/32."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._elementwise import MathBinaryKernel

INTS = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32))


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.bitwise_xor(a, b)


@kernel(BuiltinOperator.BITWISE_XOR, versions=(1,))
class BitwiseXor(MathBinaryKernel):
    name = "bitwise_xor"
    dtypes = INTS
    fn = staticmethod(reference)
