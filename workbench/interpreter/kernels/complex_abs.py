"""COMPLEX_ABS: |z| element-wise, complex64 → float32 and complex128 → float64 (v1).

TFLite runs ``std::abs(std::complex<T>)``, i.e. the C library's hypotf / hypot: no overflow or
underflow in the middle, an infinite part gives +inf even beside a NaN.  numpy's ``np.abs`` on
complex64 is one ulp off for many ordinary values, so both paths call hypotf / hypot (see
:mod:`._complex`: numba's ``math.hypot`` in the fast path, ctypes in the reference)."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._complex import F32, ComplexPartKernel, hypot_reference, run_hypot


def reference(z):
    """hypotf / hypot of (real, imaginary) for every element, through ctypes."""
    return hypot_reference(z)


@kernel(BuiltinOperator.COMPLEX_ABS, versions=(1,))
class ComplexAbs(ComplexPartKernel):
    name = "complex_abs"

    def describe(self, out_dtype):
        return f"{'hypotf' if out_dtype == F32 else 'hypot'}(real, imag) of the C library"

    def invoke(self, context, node, d):
        run_hypot(context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
