"""Speed layer for COMPLEX_ABS: a numba loop on ``math.hypot``, which numba lowers to the C library's
hypotf (float32) / hypot (float64) — the very functions the teaching layer (``kernels/_complex.py``)
writes out in numpy, so the bits are the same.  With ``WORKBENCH_JIT=0`` the loop runs as Python,
where ``math.hypot`` would be Python's own algorithm: there :func:`hypot1` calls the C library
through ctypes, the arguments handed over bit for bit (:func:`call_bits`).  Both variants: TFLite's
reference and optimized builds run the same ``std::abs``.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from ...perf.jit import native, njit
from ...schema.enums import BuiltinOperator
from ..kernels._complex import F32, PART_TYPE, ComplexPartData, hypot, hypotf
from ..quant.prepare import libm
from ..variants import VARIANTS
from . import Call, fast_path

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


@njit
def _hypot_numba(a, b):
    return math.hypot(a, b)


@native(lambda: _hypot_numba.compile())
def hypot1(a, b):
    dt = np.dtype(type(a))
    fn = libm_hypot(dt)
    if fn is None:
        return dt.type((hypotf if dt == F32 else hypot)(a, b))      # the teaching layer's numpy
    return dt.type(call_bits(fn, a, b))


@njit
def hypot_loop(pairs, out):
    """``out[i] = hypot(pairs[i, 0], pairs[i, 1])``: ``pairs`` is a complex array seen as its
    (real, imaginary) float pairs (complex64 → float32 or complex128 → float64), a plain float
    array that the precompiled kernel library can also take."""
    for i in range(pairs.shape[0]):
        out[i] = hypot1(pairs[i, 0], pairs[i, 1])


def run_hypot(z: np.ndarray, out: np.ndarray) -> None:
    """:func:`hypot_loop` on ``z`` into ``out`` (same shape)."""
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


def _complex_abs(context, node, d):
    run_hypot(context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])


@fast_path(BuiltinOperator.COMPLEX_ABS, ComplexPartData, variants=tuple(VARIANTS))
def bind_complex_abs(context, node, d):
    return Call("numba", _complex_abs)
