"""LOGICAL_AND (bool), with broadcasting."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import BOOL
from ._elementwise import MathBinaryKernel


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(np.logical_and(a, b), dtype=a.dtype)


@kernel(BuiltinOperator.LOGICAL_AND, versions=(1,))
class LogicalAnd(MathBinaryKernel):
    name = "logical_and"
    dtypes = (BOOL,)
    fn = staticmethod(reference)
