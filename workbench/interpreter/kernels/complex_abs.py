"""COMPLEX_ABS: |z| element-wise, complex64 → float32 and complex128 → float64 (v1).

TFLite (``complex_support.cc``, the same in its reference and optimized builds) runs
``std::abs(std::complex<T>)``, i.e. the C library's hypotf / hypot: no overflow or underflow in
the middle, an infinite part gives +inf even beside a NaN.  numpy's ``np.abs`` on complex64 is one
ulp off for many ordinary values; :func:`reference` is glibc's arithmetic written out in numpy
(:mod:`._complex`).  The speed layer: ``fast/complex.py``."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._complex import F32, ComplexPartKernel, complex_abs


def reference(z):
    """hypotf / hypot of (real, imaginary) for every element."""
    return complex_abs(z)


@kernel(BuiltinOperator.COMPLEX_ABS, versions=(1,))
class ComplexAbs(ComplexPartKernel):
    name = "complex_abs"
    compute = staticmethod(reference)

    def describe(self, out_dtype):
        return f"{'hypotf' if out_dtype == F32 else 'hypot'}(real, imag) of the C library"
