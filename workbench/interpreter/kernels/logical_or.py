"""LOGICAL_OR (bool), with broadcasting."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import BOOL
from ._elementwise import MathBinaryKernel


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.logical_or(a, b), dtype=a.dtype)


@kernel(BuiltinOperator.LOGICAL_OR, versions=(1,))
class LogicalOr(MathBinaryKernel):
    name = "logical_or"
    dtypes = (BOOL,)
    fn = staticmethod(reference)
