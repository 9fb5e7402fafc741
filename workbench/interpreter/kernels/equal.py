"""EQUAL: ``a == b`` -> bool, with broadcasting.

Types and versions: float32, float16, int32, int64, bool (v1); int8 (v2) and uint8 (v1) rescaled;
string (v3); int16 (v4 in older converters, v5 today), rescaled when quantized, raw when not.

How each type is compared (the int8/uint8 rescaling, int16) is in ``_compare.py``.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._compare import EQUALITY, ComparisonKernel


def reference(a, b):
    return np.asarray(np.equal(a, b), dtype=np.bool_)


@kernel(BuiltinOperator.EQUAL, versions=range(1, 6))
class Equal(ComparisonKernel):
    name = "equal"
    dtypes = EQUALITY
    int16 = "rescale if quantized"
    fn = staticmethod(reference)
