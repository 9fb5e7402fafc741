"""IMAG: the imaginary part of every element, complex64 → float32 and complex128 → float64 (v1).

A copy of bits (TFLite's ``std::imag``): −0.0, infinities and NaN payloads pass unchanged."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._complex import ComplexPartKernel


def reference(z: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(z.imag)


@kernel(BuiltinOperator.IMAG, versions=(1,))
class Imag(ComplexPartKernel):
    name = "imag"
    function = "imaginary part (a copy)"
    compute = staticmethod(reference)
