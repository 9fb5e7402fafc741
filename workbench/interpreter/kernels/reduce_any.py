"""REDUCE_ANY: logical OR over the axes; axes from input 1, ``keep_dims`` from
ReducerOptions (see _reduce.py)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import BOOL
from ._reduce import ReduceKernel


def reference(x: np.ndarray, axes: tuple, keep: bool) -> np.ndarray:
    return np.any(x, axis=axes, keepdims=keep)


@kernel(BuiltinOperator.REDUCE_ANY, versions=(1,))
class ReduceAny(ReduceKernel):
    name = "reduce_any"
    dtypes = (BOOL,)
    reduce = staticmethod(reference)
