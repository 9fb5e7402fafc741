"""Small jitted functions for tests/interpreter/test_precompiled.py: each exercises one part of the C entries
(arrays and their sizes, scalars of each kind, a scalar result, arrays the kernel allocates, an
exception raised inside the kernel)."""

import os

import numpy as np

from workbench.perf import jit as _jit
from workbench.perf import precompiled
from workbench.perf.jit import njit


def use_library(directory) -> None:
    """Point the process at the kernel library in ``directory`` (None: back to the default) and let every
    jitted function choose again between the library and numba."""
    if directory is None:
        os.environ.pop("WORKBENCH_KERNELS_DIR", None)
    else:
        os.environ["WORKBENCH_KERNELS_DIR"] = str(directory)
    precompiled.forget()
    _jit.forget_callables()


@njit(nogil=True)
def scaled_rows(x, out, scale, offset, clamp, r0, r1):
    """out[r] = x[r] * scale + offset (clamped to [-1, 1] when ``clamp``) for rows r0..r1."""
    for r in range(r0, r1):
        for j in range(x.shape[1]):
            v = x[r, j] * scale + offset
            if clamp:
                v = min(max(v, np.float32(-1.0)), np.float32(1.0))
            out[r, j] = v


@njit(nogil=True)
def checked_total(x, limit):
    """The sum of x as int64; ValueError when x has more than ``limit`` elements."""
    if x.shape[0] > limit:
        raise ValueError("checked_total: more elements than the limit")
    t = np.int64(0)
    for v in x:
        t += v
    return t


@njit(nogil=True)
def checked_double(x, out, limit):
    """out = 2 x; ValueError when x has more than ``limit`` elements (an entry that answers None)."""
    if x.shape[0] > limit:
        raise ValueError("checked_double: more elements than the limit")
    for i in range(x.shape[0]):
        out[i] = 2 * x[i]


@njit(nogil=True)
def prefix_max(x, out):
    """out = running maximum of x, through a scratch array the kernel allocates itself."""
    tmp = np.empty(x.shape[0], np.float64)
    best = -np.inf
    for i in range(x.shape[0]):
        best = max(best, x[i])
        tmp[i] = best
    for i in range(x.shape[0]):
        out[i] = tmp[i]


@njit(nogil=True)
def mean_f32(x):
    """A float32 result."""
    s = np.float32(0.0)
    for v in x:
        s += v
    return s / np.float32(x.size)


@njit(nogil=True)
def growing_list(n, out):
    """A kernel that needs more of numba's runtime than the library has (a growing list)."""
    values = [0.0]
    for i in range(1, n):
        values.append(values[-1] + i)
    for i in range(min(n, out.shape[0])):
        out[i] = values[i]


@njit(nogil=True)
def touch(v):
    """Takes anything numeric (an array or a number): one entry per numba type it is built for."""
    return 0
