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

