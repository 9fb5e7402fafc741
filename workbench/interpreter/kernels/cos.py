"""COS: float32 (v1) and float16 (v2).

float32 (``reference_ops::Cos``, the builtin's too): ``std::cos`` on float, glibc's cosf —
:func:`._libm.cosf`, its arithmetic in numpy.  float16 is computed in float32 and rounded to half,
NaNs as litert writes them (see ``sin.py``); every one of the 65536 half values checked against
litert.  The speed layer: ``fast/unary.py``."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F16, F32
from ._elementwise import MathUnaryKernel
from ._libm import cosf
from .sin import half_result


def cos_float(x: np.ndarray) -> np.ndarray:
    """``reference_ops::Cos``: cosf on every element; half inputs through float32."""
    y = cosf(x.astype(np.float32))
    return half_result(x, y) if x.dtype == F16 else y



@kernel(BuiltinOperator.COS, versions=(1, 2))
class Cos(MathUnaryKernel):
    name = "cos"
    dtypes = (F32, F16)
    fn = staticmethod(cos_float)
