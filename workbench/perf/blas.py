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
_library = None         # the OpenBLAS that numpy loaded (ctypes)
_searched = False
_current: int | None = None
_handed_over: int | None = None     # OpenBLAS's jobs go to the kernel library's pool (since n threads)

SHARE_PRODUCTS = True
"""Whether ``set_threads(n)`` lets OpenBLAS cut one product among n threads (its jobs run on the kernel
library's pool).  On: float MobileNet v1 on a quiet 2-core machine takes 15.3 ms a frame with 2 threads
against 19.2 ms with 1 (benchmarks/bench_vs_xnnpack.py, load 0.7).  The price: OpenBLAS's jobs of one
product wait for each other, so when another process holds the second core the first job spins until
the second is scheduled (measured on a loaded 2-core machine: 136 ms a frame against 18 ms on one
thread).  Off: each product runs on the calling thread, ``num_threads`` shares only the kernel library's
row pieces (``pool_run`` in ``native/shim_head.c``, which hands a piece to whichever thread is there),
and 2 threads are never slower than 1 — nor faster for float."""


def _find():
    global _setter, _getter, _library, _searched
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
                    _setter, _getter, _library = s, g, lib
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
    """Ask OpenBLAS for ``n`` threads when :data:`SHARE_PRODUCTS`, else for one (a no-op if already
    asked for ``n``, or if OpenBLAS was not found); with more than one, its jobs go to the precompiled
    kernel library's thread pool when it can."""
    global _current
    if _current == n:
        return
    if available():
        _setter(int(n) if SHARE_PRODUCTS else 1)
        if n > 1:
            hand_over(n)
    _current = n


def hand_over(n: int) -> bool:
    """Let OpenBLAS hand its parallel jobs to the kernel library's thread pool (OpenBLAS's
    caller-managed threading, ``openblas_threads_callback_``, OpenBLAS >= 0.3.27).

    Why: OpenBLAS's own threads spin for ~0.1 s after every product, on the core the other parts of
    the model (depthwise rows, bias passes) would use; the pool's threads spin ~50 µs, then sleep.
    Nothing happens without the library or with an OpenBLAS that lacks the hook."""
    global _handed_over
    if _handed_over is not None:
        return True
    from . import precompiled

    lib = precompiled.library() if available() else None
    if lib is None or not hasattr(lib.module, "blas_callback"):
        return False
    try:
        hook = ctypes.c_void_p.in_dll(_library, "openblas_threads_callback_")
    except ValueError:
        return False
    hook.value = lib.module.blas_callback()
    _handed_over = n
    return True

