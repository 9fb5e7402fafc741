"""What COMPLEX_ABS, REAL and IMAG share: one complex tensor in, one real tensor of the same shape out.

TFLite's ``complex_support.cc`` (one kernel file for the three, version 1 only):

* exactly one input and one output; the input is complex64 or complex128 and the output must
  already be declared float32 (for complex64) or float64 (for complex128) — prepare refuses any
  other pairing, it does not convert; the output gets the input's shape;
* REAL and IMAG copy one part of every element (``std::real`` / ``std::imag``): the bits move
  unchanged, so −0.0, infinities and NaN payloads come out as they went in;
* COMPLEX_ABS is ``std::abs`` of ``std::complex<T>``, which in litert's x86 Linux build is the C
  library's ``hypotf`` (complex64) / ``hypot`` (complex128): :func:`hypotf` and :func:`hypot` below
  write glibc 2.36's two out in numpy.

Why not ``np.abs``: measured on ai-edge-litert 2.3.0 (glibc 2.36) over ~40 000 complex64 values
(every pairing of 0, −0, ±1, ±1e30, 1e−30, 3e38, FLT_MAX, subnormals, ±inf, ±NaN, plus random
values with exponents from −40 to 38 and ordinary values in [−2, 2]), glibc's hypotf equals
litert on every element; numpy's float32 complex absolute value is its own float32 computation
and differs by one ulp on about a fifth of them, ordinary ones included (|3 + 2.5j|:
numpy 3.9051247, litert 3.905125), and gives NaNs of another sign.  For complex128, glibc's
``hypot`` equals litert everywhere, ``np.abs`` and Python's ``math.hypot`` (its own algorithm)
do not.

hypot is the careful |z|: no overflow or underflow in the middle (|1e30 + 1e30j| = 1.4142135e30,
|1e−30 + 1e−30j| = 1.4142135e−30, where a float32 re² + im² would give inf or 0), and, as C
requires, an infinite part wins over a quiet NaN part (|inf + NaN·j| = inf); otherwise a NaN part
gives NaN — also beside an infinity when that NaN is a signalling one (glibc, and so litert).
The speed layer (``fast/complex.py``) calls the C library itself, one element at a time.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import Kernel, OpData, opdata
from ._common import F32, F64
from ._elementwise import refuse

C64 = np.dtype(np.complex64)
C128 = np.dtype(np.complex128)
PART_TYPE = {C64: F32, C128: F64}       # what TFLite's Prepare demands of the output


@opdata
class ComplexPartData(OpData):
    """One complex → real element-wise op: shapes, types and what computes each element."""

    shape: tuple
    input_dtype: str
    output_dtype: str
    function: str            # "real part (a copy)", "hypotf(real, imag) of the C library", ...


# ----------------------------------------------------------------------------------------------
# glibc's hypotf / hypot


def _signalling(v: np.ndarray) -> np.ndarray:
    """NaNs whose quiet bit is clear."""
    quiet = (1 << 22) if v.dtype == F32 else (1 << 51)
    bits = v.view(np.uint32 if v.dtype == F32 else np.uint64)
    return np.isnan(v) & ((bits & bits.dtype.type(quiet)) == 0)


def _non_finite(x, y, r):
    """C's rule: an infinite part gives +inf, also beside a quiet NaN (not beside a signalling one);
    otherwise a NaN part gives x + y."""
    inf = (np.isinf(x) | np.isinf(y)) & ~_signalling(x) & ~_signalling(y)
    r = np.where(np.isfinite(x) & np.isfinite(y), r, x + y)
    return np.where(inf, r.dtype.type(np.inf), r)


@np.errstate(all="ignore")
def hypotf(x, y) -> np.ndarray:
    """glibc's hypotf: sqrt(x² + y²) in double, rounded to float32."""
    x, y = np.asarray(x, F32), np.asarray(y, F32)
    xd, yd = x.astype(F64), y.astype(F64)
    return _non_finite(x, y, np.sqrt(xd * xd + yd * yd).astype(F32)).astype(F32)


def _hypot_kernel(ax, ay):
    """sqrt(ax² + ay²) corrected by Borges' formula (ax >= ay)."""
    h = np.sqrt(ax * ax + ay * ay)
    d1, d2 = h - ay, h - ax
    near = h <= 2.0 * ay
    t1 = np.where(near, ax * (2.0 * d1 - ax), 2.0 * d2 * (ax - 2.0 * ay))
    t2 = np.where(near, (d1 - 2.0 * (ax - ay)) * d1, (4.0 * d2 - ay) * ay + d2 * d2)
    return h - (t1 + t2) / (2.0 * h)


@np.errstate(all="ignore")
def hypot(x, y) -> np.ndarray:
    """glibc's hypot: the corrected square root, the parts scaled by 2^∓600 when huge or tiny."""
    x, y = np.asarray(x, F64), np.asarray(y, F64)
    ax = np.maximum(np.abs(x), np.abs(y))
    ay = np.minimum(np.abs(x), np.abs(y))
    s, eps = 2.0 ** -600, 2.0 ** -54
    r = np.where(ay <= ax * eps, ax + ay, _hypot_kernel(ax, ay))
    r = np.where(ay < 2.0 ** -459, np.where(ax >= ay / eps, ax + ay, _hypot_kernel(ax / s, ay / s) * s), r)
    r = np.where(ax > 2.0 ** 511, np.where(ay <= ax * eps, ax + ay, _hypot_kernel(ax * s, ay * s) / s), r)
    return _non_finite(x, y, r)


def complex_abs(z: np.ndarray) -> np.ndarray:
    """|z| for every element of a complex64 / complex128 array: hypotf / hypot of its two parts."""
    z = np.asarray(z)
    return (hypotf if z.dtype == C64 else hypot)(z.real, z.imag)


# ----------------------------------------------------------------------------------------------
# the kernel base class


class ComplexPartKernel(Kernel):
    """complex64 → float32, complex128 → float64, element by element (TFLite's ``complex::Prepare``).

    Subclasses set ``name``, ``function`` (what OpData shows, or override :meth:`describe`) and
    ``compute`` (complex array → real array)."""

    dtypes = (C64, C128)
    function = ""

    @staticmethod
    def compute(z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = self.compute(context.tensors[node.inputs[0]])

    def describe(self, out_dtype: np.dtype) -> str:
        return self.function

    def prepare(self, context, node):
        if len(node.inputs) != 1 or len(node.outputs) != 1:
            refuse(node, f"needs 1 input and 1 output; it has {len(node.inputs)} and {len(node.outputs)}")
        x, y = node.inputs[0], node.outputs[0]
        dt = context.expect_dtype(node, x, self.dtypes)
        want = PART_TYPE[dt]
        got = context.dtype(y)
        if got != want:
            raise UnsupportedOpError(f"{node.op_name} v{node.version} (node {node.index}): input '{context.name(x)}' "
                                     f"is {dt}, so output '{context.name(y)}' must be {want}; it is "
                                     f"{context.type_name(y) if got is None else got} (TFLite does not convert)")
        context.set_output(y, context.shape(x), want)
        return ComplexPartData(context.shape(x), str(dt), str(want), self.describe(want))
