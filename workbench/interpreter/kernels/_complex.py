"""What COMPLEX_ABS, REAL and IMAG share: one complex tensor in, one real tensor of the same shape out.

TFLite's ``complex_support.cc`` (one kernel file for the three, version 1 only):

* exactly one input and one output; the input is complex64 or complex128 and the output must
  already be declared float32 (for complex64) or float64 (for complex128) — prepare refuses any
  other pairing, it does not convert; the output gets the input's shape;
* REAL and IMAG copy one part of every element (``std::real`` / ``std::imag``): the bits move
  unchanged, so −0.0, infinities and NaN payloads come out as they went in;
* COMPLEX_ABS is ``std::abs`` of ``std::complex<T>``, which in litert's x86 Linux build is the C
  library's ``hypotf`` (complex64) / ``hypot`` (complex128).

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

Fast path: a numba loop on ``math.hypot``, which numba turns into a call of the C library's
hypotf / hypot.  Reference: the C library's function through ctypes, one call per element, the
arguments handed over as raw bits (:func:`call_bits`).  With ``WORKBENCH_JIT=0`` the loop runs
as Python and :func:`hypot1` calls the C library through ctypes, so every path computes the same.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import Kernel, OpData, opdata
from ...perf.jit import native, njit
from ..quant.prepare import libm
from ._elementwise import refuse

C64 = np.dtype(np.complex64)
C128 = np.dtype(np.complex128)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
PART_TYPE = {C64: F32, C128: F64}       # what TFLite's Prepare demands of the output


@opdata
class ComplexPartData(OpData):
    """One complex → real element-wise op: shapes, types and what computes each element."""

    shape: tuple
    input_dtype: str
    output_dtype: str
    function: str            # "real part (a copy)", "hypotf(real, imag) of the C library", ...


# ----------------------------------------------------------------------------------------------
# the C library's hypotf / hypot


_HYPOT = {}


def libm_hypot(dtype):
    """The C library's ``hypotf`` (float32) or ``hypot`` (float64) as a ctypes function, or None
    when no C math library can be loaded.  (A function object of our own, ``lib[name]``: the one
    ``getattr`` caches is shared, and other modules set one-argument signatures on theirs.)"""
    dtype = np.dtype(dtype)
    if dtype not in _HYPOT:
        lib = libm()
        try:
            fn = lib["hypotf" if dtype == F32 else "hypot"] if lib is not None else None
        except AttributeError:
            fn = None
        if fn is not None:
            c = ctypes.c_float if dtype == F32 else ctypes.c_double
            fn.restype = c
            fn.argtypes = [c, c]
        _HYPOT[dtype] = fn
    return _HYPOT[dtype]


def call_bits(fn, a, b):
    """``fn(a, b)`` for two numpy float32 (float64) scalars, handed over bit for bit.  (Through a
    Python float a signalling NaN would arrive quieted, and glibc's hypot treats the two
    differently: hypot(inf, signalling NaN) is NaN, hypot(inf, quiet NaN) is inf.)"""
    c = ctypes.c_float if a.dtype == F32 else ctypes.c_double
    return fn(c.from_buffer_copy(a.tobytes()), c.from_buffer_copy(b.tobytes()))


@np.errstate(all="ignore")
def hypot_reference(z: np.ndarray) -> np.ndarray:
    """|z| for every element of a complex64 / complex128 array: the C library's hypotf / hypot
    called once per element (ctypes), the result in float32 / float64.  Without a loadable C
    library numpy's ``np.hypot`` on the parts (which calls the same functions where it can)."""
    z = np.asarray(z)
    dt = PART_TYPE[z.dtype]
    fn = libm_hypot(dt)
    if fn is None:
        return np.hypot(z.real, z.imag).astype(dt)
    flat = z.reshape(-1)
    return np.array([call_bits(fn, v.real, v.imag) for v in flat], dt).reshape(z.shape)


# numba lowers math.hypot on two float32 (float64) values to the C library's hypotf (hypot).
# Without JIT the loop below runs as Python, where math.hypot is Python's own double algorithm:
# there the ``native`` twin calls the C library through ctypes instead.

@njit
def _hypot_numba(a, b):
    return math.hypot(a, b)


@native(lambda: _hypot_numba.compile())
def hypot1(a, b):
    dt = np.dtype(type(a))
    fn = libm_hypot(dt)
    if fn is None:
        with np.errstate(all="ignore"):
            return np.hypot(a, b)
    return dt.type(call_bits(fn, a, b))


@njit
def hypot_loop(pairs, out):
    """``out[i] = hypot(pairs[i, 0], pairs[i, 1])``: ``pairs`` is a complex array seen as its
    (real, imaginary) float pairs (complex64 → float32 or complex128 → float64), a plain float
    array that the precompiled kernel library can also take."""
    for i in range(pairs.shape[0]):
        out[i] = hypot1(pairs[i, 0], pairs[i, 1])


def run_hypot(z: np.ndarray, out: np.ndarray) -> None:
    """The fast path of COMPLEX_ABS: :func:`hypot_loop` on ``z`` into ``out`` (same shape)."""
    flat = np.ascontiguousarray(z).reshape(-1)
    part = PART_TYPE[flat.dtype]
    pairs = flat.view(part).reshape(-1, 2)
    with np.errstate(all="ignore"):         # WORKBENCH_JIT=0: numpy scalars warn about inf and NaN
        if out.flags.c_contiguous and out.dtype == part:
            hypot_loop(pairs, out.reshape(-1))
        else:
            res = np.empty(flat.size, part)
            hypot_loop(pairs, res)
            out[...] = res.reshape(out.shape)


# ----------------------------------------------------------------------------------------------
# the kernel base class


class ComplexPartKernel(Kernel):
    """complex64 → float32, complex128 → float64, element by element (TFLite's ``complex::Prepare``).

    Subclasses set ``name`` and ``function`` (what OpData shows, or override :meth:`describe`), and
    either ``part`` ("real" / "imag": the output is a copy of that part's bits, its own reference)
    or their own ``invoke``."""

    dtypes = (C64, C128)
    function = ""
    part = ""

    def invoke(self, context, node, d):
        np.copyto(context.tensors[node.outputs[0]], getattr(context.tensors[node.inputs[0]], self.part))

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
