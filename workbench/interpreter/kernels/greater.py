"""GREATER: ``a > b`` -> bool, with broadcasting.

Types and versions: float32, float16, int32, int64, int16 (raw values; no version of its own) (v1);
int8 (v2) and uint8 (v1) rescaled.

How each type is compared (the int8/uint8 rescaling, int16) is in ``_compare.py``.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._compare import ORDERED, ComparisonKernel


def reference(a, b):
    return np.asarray(np.greater(a, b), dtype=np.bool_)


@kernel(BuiltinOperator.GREATER, versions=range(1, 3))
class Greater(ComparisonKernel):
    name = "greater"
    dtypes = ORDERED
    int16 = "plain"
    fn = staticmethod(reference)
