"""SQUARE (float32): x * x."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):        # inf past 1.8e19, silently as TFLite
        return np.asarray(np.square(x), dtype=x.dtype)


@kernel(BuiltinOperator.SQUARE, versions=(1,))
class Square(MathUnaryKernel):
    name = "square"
    dtypes = (F32,)
    fn = staticmethod(reference)
