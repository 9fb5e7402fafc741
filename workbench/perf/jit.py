"""Lazy numba: ``@njit`` compiles on first call (with ``cache=True``), never at import.

With ``WORKBENCH_JIT=0`` (see :mod:`workbench.config`) the decorated function stays plain Python,
so ``import workbench`` never imports numba and a debugger can step into every kernel.

A jitted function may call another ``@njit`` function, or a :func:`native` operation, of the
project: when it is compiled, the lazy objects it names as globals are swapped for what numba can
call.  numba's disk cache keys a function's compiled code on its own file only, while that code holds
its callees' code too; so the cache index of a function whose callees (and theirs) live in other files
is keyed on those files' contents as well (:func:`_key_on_callees`), and an edit there compiles it again.
"""

from __future__ import annotations

import functools
import hashlib
import os
import types
from pathlib import Path

from .. import config


def _resolved(func):
    """``func`` with the lazy jit / native globals it uses replaced by their compiled forms."""
    names = set(func.__code__.co_names)
    swap = {k: v.compile() for k, v in func.__globals__.items()
            if k in names and isinstance(v, (LazyJit, LazyNative))}
    if not swap:
        return func
    glb = dict(func.__globals__)
    glb.update(swap)
    new = types.FunctionType(func.__code__, glb, func.__name__, func.__defaults__, func.__closure__)
    new.__qualname__ = func.__qualname__
    new.__module__ = func.__module__
    new.__doc__ = func.__doc__
    return new


def _callee_files(func) -> set:
    """The files of the jitted functions and native operations ``func`` names as globals, and of those
    their own jitted functions name, and so on."""
    files, seen, todo = set(), set(), [func]
    while todo:
        f = todo.pop()
        names = set(f.__code__.co_names)
        for k, v in f.__globals__.items():
            if k in names and isinstance(v, (LazyJit, LazyNative)) and id(v) not in seen:
                seen.add(id(v))
                files.add(v.py_func.__code__.co_filename)
                if isinstance(v, LazyNative):
                    files.add(v.builder.__code__.co_filename)
                else:
                    todo.append(v.py_func)
    return files


@functools.lru_cache(maxsize=None)
def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _key_on_callees(dispatcher, func) -> None:
    """Key ``dispatcher``'s disk cache on the contents of its callees' files besides its own.

    numba writes a source stamp (its file's hash) into each function's cache index and ignores an index
    whose stamp differs (``numba/core/caching.py``: ``IndexDataCacheFile``); the stamp here is numba's
    together with the other files' hashes.  Without it a caller in one file kept a callee's old code
    after an edit in another, and a callee called from Python could find its environment missing
    (numba's loader met the cached caller's copy of the callee's symbols first)."""
    others = sorted(_callee_files(func) - {func.__code__.co_filename})
    index = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if others and index is not None and hasattr(index, "_source_stamp"):
        index._source_stamp = (index._source_stamp, tuple((Path(f).name, _file_digest(f)) for f in others))


ALL: list = []          # every LazyJit made (so a build can forget what they resolved to)
CALLED: set = set()     # those called from Python (what the precompiled library must hold)


class LazyJit:
    """A function compiled by numba the first time it is called.

    A call from Python goes to the precompiled kernel library when it has this function for these
    argument types (:mod:`workbench.perf.precompiled`: no numba in the process), else to numba.
    """

    __slots__ = ("py_func", "options", "_impl", "_numba", "__name__", "__wrapped__", "__dict__")

    def __init__(self, func, options):
        self.py_func = func
        self.options = options
        self._impl = None
        self._numba = None
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        ALL.append(self)

    def compile(self):
        """numba's dispatcher (what jitted callers call), or the Python function without JIT."""
        if self._numba is None:
            if config.JIT:
                import numba

                self._numba = numba.njit(cache=True, **self.options)(_resolved(self.py_func))
                _key_on_callees(self._numba, self.py_func)
            else:
                self._numba = self.py_func
        return self._numba

    def _callable(self):
        CALLED.add(self)
        if config.JIT and config.PRECOMPILED:
            from . import precompiled

            pre = precompiled.for_function(self)
            if pre is not None:
                return pre
        return self.compile()

    @property
    def jitted(self) -> bool:
        return config.JIT

    def __call__(self, *args):
        impl = self._impl
        if impl is None:
            impl = self._impl = self._callable()
        return impl(*args)

    def __repr__(self) -> str:
        state = "numba" if config.JIT else "python (WORKBENCH_JIT=0)"
        return f"<lazy jit {self.__name__}: {state}>"


def forget_callables() -> None:
    """Choose again, at the next call of each jitted function, between the library and numba."""
    for lazy in ALL:
        lazy._impl = None


def njit(func=None, **options):
    """``@njit`` or ``@njit(fastmath=False, ...)``: lazily numba-compiled, cached on disk."""
    if func is None:
        return lambda f: LazyJit(f, options)
    return LazyJit(func, options)


class LazyNative:
    """An operation written directly in LLVM IR (a numba ``@intrinsic``), built on first use.

    ``builder()`` imports numba and returns the intrinsic; jitted callers get it when they are
    compiled.  Called from Python (``WORKBENCH_JIT=0``, tests), ``py_func`` runs: plain numpy code
    that computes the same thing, so the arithmetic can be read and checked.
    """

    __slots__ = ("py_func", "builder", "_impl", "__name__", "__wrapped__", "__dict__")

    def __init__(self, py_func, builder):
        self.py_func = py_func
        self.builder = builder
        self._impl = None
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func

    def compile(self):
        if self._impl is None:
            self._impl = self.builder()
        return self._impl

    def __call__(self, *args):
        return self.py_func(*args)

    def __repr__(self) -> str:
        return f"<lazy native {self.__name__}>"


def native(builder):
    """``@native(builder)`` on a Python twin: see :class:`LazyNative`."""
    return lambda f: LazyNative(f, builder)


# ----------------------------------------------------------------------------------------------
# sharing a kernel's rows among threads

_pool = None
MIN_PARALLEL_WORK = 1 << 21     # below ~2 million multiply-adds a hand-off to Python's thread pool costs more
MIN_POOL_WORK = 1 << 15         # ... and below ~32 thousand, one to the kernel library's pool (about 1 µs)


@functools.lru_cache(maxsize=1)
def cpu_count() -> int:
    """CPUs this process may run on (asked once: the system call cost more than a small kernel's
    hand-off, on every node of every invoke)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _in_library(fn):
    """The kernel library's ``Precompiled`` for lazily jitted ``fn``, or None (not a LazyJit, or numba's
    own function: the library does not hold it)."""
    if type(fn) is not LazyJit:
        return None
    impl = fn._impl
    if impl is None:
        impl = fn._impl = fn._callable()
    return impl if getattr(impl, "rows", None) is not None else None


def rows_call(fn, total: int, threads: int, *args, align: int = 1, work: int | None = None):
    """What :func:`run_rows` would run as one call of the kernel library — ``(call_rows, arguments)``,
    answering None when done — or None when ``fn`` is not a kernel the library holds."""
    impl = _in_library(fn)
    if impl is None:
        return None
    threads = min(int(threads), cpu_count(), max(1, total // (2 * align)))
    if work is not None and work < MIN_POOL_WORK:
        threads = 1
    first, count, fallback = impl.args
    return impl.func.__self__.call_rows, (first, count, fallback, threads, total, align, *args)


def library_call(fn, *args):
    """``fn(*args)`` as one call of the kernel library — ``(call, arguments)``, answering None when done
    (the library's compiled specialization, or numba's for arguments it has none for) — or None when
    ``fn`` is not a kernel the library holds.  For a node whose whole work is one kernel call, so that
    it joins the runs of library calls (``workbench/interpreter/fused.py``)."""
    impl = _in_library(fn)
    return None if impl is None else (impl.func, (*impl.args, *args))


def run_rows(fn, total: int, threads: int, *args, align: int = 1, work: int | None = None) -> None:
    """``fn(*args, r0, r1)`` over rows 0..total.

    With ``threads`` > 1 (capped at the CPUs and at one piece per ``2·align`` rows) the rows are cut
    into that many pieces of a multiple of ``align`` rows, run at the same time on a small thread
    pool (``fn`` must be a jitted kernel declared ``nogil=True``, writing disjoint rows) while the
    calling thread runs the first piece.  With 1 thread, or less ``work`` (multiply-adds, when
    given) than the hand-off costs, one plain call: nothing else happens.  The precompiled kernel
    library's pool hands off in about a microsecond (``MIN_POOL_WORK``), Python's thread pool in tens
    (``MIN_PARALLEL_WORK``).
    """
    global _pool
    threads = min(int(threads), cpu_count(), max(1, total // (2 * align)))
    if threads <= 1 or (work is not None and work < MIN_POOL_WORK):
        fn(*args, 0, total)
        return
    if type(fn) is LazyJit:             # a kernel of the precompiled library: its own thread pool
        impl = fn._impl
        if impl is None:
            impl = fn._impl = fn._callable()
        rows = getattr(impl, "rows", None)
        if rows is not None and rows(threads, total, align, *args):
            return
        fn = fn.compile()
    if work is not None and work < MIN_PARALLEL_WORK:
        fn(*args, 0, total)
        return
    step = -(-total // threads)
    step = -(-step // align) * align
    if _pool is None or _pool._max_workers < threads - 1:
        from concurrent.futures import ThreadPoolExecutor

        _pool = ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="workbench-rows")
    jobs = [_pool.submit(fn, *args, r0, min(total, r0 + step)) for r0 in range(step, total, step)]
    try:
        fn(*args, 0, min(total, step))
    finally:
        for job in jobs:
            job.result()
