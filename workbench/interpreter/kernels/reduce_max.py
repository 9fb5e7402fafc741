"""REDUCE_MAX: maximum over the axes; an empty reduction gives the lowest finite value
(TFLite's initial value); axes from input 1, ``keep_dims`` from
ReducerOptions (see _reduce.py).  float32, int32, int64, uint8 → version 1, int8 → 2, int16 → 3; a
quantized input must share the output's scale and zero point (the integers are compared as they
are)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I32, I64
from ._elementwise import reduced_shape
from ._reduce import QUANTIZED, ReduceKernel, float_extreme


def _initial(dt: np.dtype):
    return np.finfo(dt).min if dt.kind == "f" else np.iinfo(dt).min


def reference(x: np.ndarray, axes: tuple, keep: bool) -> np.ndarray:
    if x.size == 0:
        return np.full(reduced_shape(x.shape, axes, keep), _initial(x.dtype), x.dtype)
    if x.dtype.kind == "f":
        return float_extreme(x, axes, keep, largest=True)
    return np.max(x, axis=axes, keepdims=keep)


@kernel(BuiltinOperator.REDUCE_MAX, versions=(1, 2, 3))
class ReduceMax(ReduceKernel):
    name = "reduce_max"
    dtypes = (F32, I32, I64) + QUANTIZED
    same_quantization = True
    reduce = staticmethod(reference)
