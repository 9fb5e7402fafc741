"""SUM: sum over the axes (integers wrap like C); axes from input 1, ``keep_dims`` from
ReducerOptions (see _reduce.py)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32
from ._elementwise import I32, I64
from ._reduce import ReduceKernel


def reference(x: np.ndarray, axes: tuple, keep: bool) -> np.ndarray:
    return np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype)


@kernel(BuiltinOperator.SUM, versions=(1,))
class Sum(ReduceKernel):
    name = "sum"
    dtypes = (F32, I32, I64)
    reduce = staticmethod(reference)
