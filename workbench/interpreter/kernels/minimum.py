"""MINIMUM: a < b ? a : b with broadcasting — float32, int32, int64 and uint8 (v1), int8 (v2),
broadcasting beyond rank 4 (v3), int16 (v4).

TFLite compares the stored integers of quantized tensors and ignores their quantization
parameters (``maximum_minimum.cc``; the converter gives inputs and output the same ones)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I8, I16, I32, I64, U8
from ._elementwise import MathBinaryKernel


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.where(a < b, a, b), dtype=a.dtype)


@kernel(BuiltinOperator.MINIMUM, versions=(1, 2, 3, 4))
class Minimum(MathBinaryKernel):
    name = "minimum"
    dtypes = (F32, I32, I64, U8, I8, I16)
    fn = staticmethod(reference)

