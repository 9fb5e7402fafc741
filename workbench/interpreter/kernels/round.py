"""ROUND (float32): to nearest, ties to EVEN (TFLite's RoundToNearest: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2),
unlike C's std::round, which rounds ties away from zero."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel


def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.rint(x), dtype=x.dtype)


@kernel(BuiltinOperator.ROUND, versions=(1,))
class Round(MathUnaryKernel):
    name = "round"
    dtypes = (F32,)
    fn = staticmethod(reference)
