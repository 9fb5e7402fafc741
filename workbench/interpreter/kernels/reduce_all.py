"""REDUCE_ALL: logical AND over the axes; axes from input 1, ``keep_dims`` from
ReducerOptions (see _reduce.py)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import BOOL
from ._reduce import ReduceKernel


def reference(x: np.ndarray, axes: tuple, keep: bool) -> np.ndarray:
    return np.all(x, axis=axes, keepdims=keep)


@kernel(BuiltinOperator.REDUCE_ALL, versions=(1,))
class ReduceAll(ReduceKernel):
    name = "reduce_all"
    dtypes = (BOOL,)
    reduce = staticmethod(reference)
