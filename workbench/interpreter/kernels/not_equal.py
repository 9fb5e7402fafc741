"""NOT_EQUAL: ``a != b`` -> bool, with broadcasting.

Types and versions: float32, float16, int32, int64, bool (v1); int8 (v2) and uint8 (v1) rescaled;
string (v3); quantized int16 (v4), rescaled.

How each type is compared (the int8/uint8 rescaling, int16) is in ``_compare.py``.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._compare import EQUALITY, ComparisonKernel


def reference(a, b):
    return np.asarray(np.not_equal(a, b), dtype=np.bool_)


@kernel(BuiltinOperator.NOT_EQUAL, versions=range(1, 5))
class NotEqual(ComparisonKernel):
    name = "not_equal"
    dtypes = EQUALITY
    int16 = "rescale, quantized only"
    fn = staticmethod(reference)
