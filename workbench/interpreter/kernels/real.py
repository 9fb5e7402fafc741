"""REAL: the real part of every element, complex64 → float32 and complex128 → float64 (v1).

A copy of bits (TFLite's ``std::real``): −0.0, infinities and NaN payloads pass unchanged."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._complex import ComplexPartKernel


def reference(z: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(z.real)


@kernel(BuiltinOperator.REAL, versions=(1,))
class Real(ComplexPartKernel):
    name = "real"
    function = "real part (a copy)"
    compute = staticmethod(reference)
