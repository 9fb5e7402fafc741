"""IMAG: the imaginary part of every element, complex64 → float32 and complex128 → float64 (v1).

A copy of bits (TFLite's ``std::imag``): −0.0, infinities and NaN payloads pass unchanged, so the
copy is its own reference."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._complex import ComplexPartKernel


@kernel(BuiltinOperator.IMAG, versions=(1,))
class Imag(ComplexPartKernel):
    name = "imag"
    part = "imag"
    function = "imaginary part (a copy)"
