"""Set the number of BLAS threads numpy's OpenBLAS uses (numpy.matmul does the big products).

No dependency: the OpenBLAS that numpy loaded exports ``*_set_num_threads*``; we find it with ctypes.
When it cannot be found, setting the thread count does nothing (and :func:`available` says so).
"""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

_setter = None
_getter = None
_library = None         # the OpenBLAS that numpy loaded (ctypes)
_searched = False
_current: int | None = None
_handed_over: int | None = None     # OpenBLAS's jobs go to the kernel library's pool (since n threads)
_gemm = None                        # (split function, sgemm address, set-threads address, ilp64) or False

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



MIN_SPLIT_WORK = 150_000
"""Multiply-adds below which :func:`matmul` does not cut a product among threads: a product that
small takes a few microseconds, about what handing half of it to another thread costs."""

SPLIT = True
"""Whether :func:`matmul` cuts products among threads itself (else OpenBLAS's threads do).  Measured
node by node inside the networks on 2 quiet cores (benchmarks/bench_layers.py --overhead
--compare-threads 2; median of 25, load 0.6): the 1x1 convolutions of MobileNet v2 took 7.8 ms in
pieces against 8.1 ms with OpenBLAS's threads, those of v1 10.0 against 10.3; the 7x7 layers
(49 rows) about 10 % less each (OpenBLAS gains little from its second thread there)."""


def _gemm_split():
    """The kernel library's ``gemm_split`` and the addresses it needs from numpy's OpenBLAS, or False."""
    global _gemm
    if _gemm is None:
        _gemm = False
        from . import precompiled

        lib = precompiled.library() if available() else None
        split = getattr(lib.module, "gemm_split", None) if lib is not None else None
        if split is not None:
            for name, ilp64 in (("scipy_cblas_sgemm64_", 1), ("cblas_sgemm64_", 1), ("scipy_cblas_sgemm", 0),
                                ("cblas_sgemm", 0)):
                fn = getattr(_library, name, None)
                if fn is not None:
                    sgemm = ctypes.cast(fn, ctypes.c_void_p).value
                    setter = ctypes.cast(_setter, ctypes.c_void_p).value
                    _gemm = (split, sgemm, setter, ilp64)
                    break
    return _gemm


def _openblas_threads() -> int:
    """How many threads OpenBLAS is set to now (gemm_split sets it back to that after its pieces)."""
    if _current is not None:
        return int(_current) if SHARE_PRODUCTS else 1
    return get_threads() or 1


def _splits(a, b, threads: int) -> bool:
    """Whether :func:`matmul` cuts the product ``a @ b`` among ``threads`` threads of the pool."""
    return threads > 1 and SPLIT and a.shape[0] * a.shape[1] * b.shape[1] >= MIN_SPLIT_WORK


def fc_call(a, b, out, threads: int, bias, lo, hi):
    """``(function, args)``: the kernel library's ``fc_f32`` making ``out = clamp(a @ b + bias, lo, hi)``
    in the pieces :func:`matmul` would cut (each piece adds the bias and clamps its part right after its
    product: the same values as ``matmul`` then a pass of + bias and clamp), as one call; None where
    ``matmul`` would not cut it (one thread, a small product: numpy's product, whose bits for one row
    differ from ``cblas_sgemm``'s) or the library lacks it.  ``bias`` None adds zeros."""
    if not _splits(a, b, threads):
        return None
    g = _gemm if _gemm is not None else _gemm_split()
    from . import precompiled

    fn = precompiled.native("fc_f32", lambda fn: True) if g else None
    if fn is None:
        return None
    getter = ctypes.cast(_getter, ctypes.c_void_p).value
    return fn, (g[1], g[2], g[3], getter, int(threads), a, b, out, bias, float(lo), float(hi))


def matmul(a, b, out, threads: int) -> None:
    """``np.matmul(a, b, out=out)`` for float32 matrices, cut among ``threads`` threads of the kernel
    library's pool (``gemm_split`` in ``native/shim_tail.c``: by output columns or by rows, every piece
    a single-thread OpenBLAS product) when the product is big enough; else, or without the library or
    OpenBLAS's cblas_sgemm, ``np.matmul`` itself (which OpenBLAS may share among its threads)."""
    if _splits(a, b, threads):
        g = _gemm if _gemm is not None else _gemm_split()
        if g and g[0](g[1], g[2], g[3], _openblas_threads(), threads, a, b, out):
            return
    np.matmul(a, b, out=out)
