"""REDUCE_MIN: minimum over the axes; an empty reduction gives the highest finite value
(TFLite's initial value); axes from input 1, ``keep_dims`` from
ReducerOptions (see _reduce.py)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32
from ._elementwise import I32, I64, reduced_shape
from ._reduce import ReduceKernel


def _initial(dt: np.dtype):
    return np.finfo(dt).max if dt.kind == "f" else np.iinfo(dt).max


def reference(x: np.ndarray, axes: tuple, keep: bool) -> np.ndarray:
    if x.size == 0:
        return np.full(reduced_shape(x.shape, axes, keep), _initial(x.dtype), x.dtype)
    return np.min(x, axis=axes, keepdims=keep)


@kernel(BuiltinOperator.REDUCE_MIN, versions=(1,))
class ReduceMin(ReduceKernel):
    name = "reduce_min"
    dtypes = (F32, I32, I64)
    reduce = staticmethod(reference)
