"""Set the number of BLAS threads numpy's OpenBLAS uses (numpy.matmul does the big products).

No dependency: the OpenBLAS that numpy loaded exports ``*_set_num_threads*``; we find it with ctypes.
When it cannot be found, setting the thread count does nothing (and :func:`available` says so).
"""

from __future__ import annotations

import ctypes
import glob
import os

_setter = None
_getter = None
_searched = False
_current: int | None = None


def _find():
    global _setter, _getter, _searched
    _searched = True
    import numpy as np

    libs = []
    base = os.path.dirname(os.path.dirname(np.__file__))
    libs += glob.glob(os.path.join(base, "numpy.libs", "*openblas*"))
    libs += glob.glob(os.path.join(os.path.dirname(np.__file__), ".dylibs", "*openblas*"))
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", "_64", ""):
                s = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                g = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                if s is not None and g is not None:
                    s.argtypes = [ctypes.c_int]
                    s.restype = None
                    g.restype = ctypes.c_int
                    _setter, _getter = s, g
                    return


def available() -> bool:
    if not _searched:
        _find()
    return _setter is not None


def get_threads() -> int | None:
    if not available():
        return None
    return int(_getter())


def set_threads(n: int) -> None:
    """Ask OpenBLAS for ``n`` threads (a no-op if already so, or if OpenBLAS was not found)."""
    global _current
    if _current == n:
        return
    if available():
        _setter(int(n))
    _current = n


def split_rows(fn, total: int, threads: int, *args, work: int) -> None:
    """``fn(*args, r0, r1)`` over rows 0..total, cut among ``threads`` threads by
    :func:`workbench.interpreter._jit.run_rows`, each piece calling a single-threaded OpenBLAS.

    Why not let OpenBLAS split the product itself: its threads spin while they wait, so with two
    threads on a machine where the other core is busy one product can take 10-20x longer; threads of
    our own simply wait.  Pieces of whole rows also carry the bias and the clamp of their rows
    (``fn`` does them), so no pass over the output stays single-threaded.  OpenBLAS's thread count
    is restored afterwards for the kernels that still let it split their products.
    """
    from ._jit import run_rows

    if threads <= 1 or total < 2:
        fn(*args, 0, total)
        return
    before = _current
    set_threads(1)
    try:
        run_rows(fn, total, threads, *args, work=work)
    finally:
        if before is not None:
            set_threads(before)
