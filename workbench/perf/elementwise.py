"""Float32 ADD, SUB and MUL of same-shaped tensors by the kernel library's own C loop
(``native/elementwise.c``): the IEEE operation and the activation's clamp, sixteen values a vector, the
flat arrays cut into pieces for the pool from ``EW_MIN_SPLIT`` (32 768) values on.  Every output is computed
on its own, so the bits are the teaching layer's on any number of threads.  Also float32 SUM / MEAN
over one block of axes ([A, R, B]: the R values of each output added in memory order, then a MEAN's
division), 16 outputs a vector, cut among threads along B (or A) from ``EW_SUM_MIN_SPLIT`` (4096) values on.  And
float32 SOFTMAX in litert-x86's arithmetic (Eigen's packet exp and reductions, as
``interpreter/kernels/_softmax.py`` spells them out), one thread."""

from __future__ import annotations

import numpy as np

ADD, SUB, MUL = 0, 1, 2


def _probe(fn) -> bool:
    """17 values (one vector and a masked tail): 3 - 2 = 1 each."""
    a, b, out = np.full(17, 3, np.float32), np.full(17, 2, np.float32), np.zeros(17, np.float32)
    return fn(1, a, b, out, np.array([-np.inf, np.inf], np.float32), SUB) == 0 and bool((out == 1).all())


def binary_function():
    """The library's ``binary_f32``, or None (no library, an older one, or a CPU without AVX-512: a
    probe says which; probed again when the library in use changes)."""
    from . import precompiled

    return precompiled.native("binary_f32", _probe)


def _probe_sum(fn) -> bool:
    """[1, 3, 17]: (1 + 2 + 3) / 2 = 3 in each of 17 outputs (one vector and a masked tail)."""
    x = np.repeat(np.array([1, 2, 3], np.float32), 17)
    out = np.zeros(17, np.float32)
    return fn(1, x, out, np.array([1, 3, 17], np.int64), np.array([2], np.float32)) == 0 and bool((out == 3).all())


def sum_function():
    """The library's ``sum_f32``, or None (as :func:`binary_function`)."""
    from . import precompiled

    return precompiled.native("sum_f32", _probe_sum)


def _probe_softmax(fn) -> bool:
    """Two rows of 17 equal values (a vector, a masked tail, the last value on expf): 1/17 each."""
    x, out = np.zeros(34, np.float32), np.zeros(34, np.float32)
    return (fn(1, x, out, np.array([17], np.int64), np.array([1], np.float32)) == 0
            and bool((out == np.float32(1) / np.float32(17)).all()))


def softmax_function():
    """The library's ``softmax_f32``, or None (as :func:`binary_function`)."""
    from . import precompiled

    return precompiled.native("softmax_f32", _probe_softmax)
