"""LOGICAL_NOT (bool)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import BOOL
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.logical_not(x), dtype=x.dtype)


@kernel(BuiltinOperator.LOGICAL_NOT, versions=(1,))
class LogicalNot(MathUnaryKernel):
    name = "logical_not"
    dtypes = (BOOL,)
    fn = staticmethod(reference)
