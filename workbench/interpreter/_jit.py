"""Lazy numba: ``@njit`` compiles on first call (with ``cache=True``), never at import.

With ``WORKBENCH_JIT=0`` (see :mod:`workbench.config`) the decorated function stays plain Python,
so ``import workbench`` never imports numba and a debugger can step into every kernel.
"""

from __future__ import annotations

from .. import config


class LazyJit:
    """A function compiled by numba the first time it is called."""

    __slots__ = ("py_func", "options", "_impl", "__name__", "__wrapped__", "__dict__")

    def __init__(self, func, options):
        self.py_func = func
        self.options = options
        self._impl = None
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func

    def compile(self):
        """The callable actually used: numba's dispatcher, or the Python function without JIT."""
        if self._impl is None:
            if config.JIT:
                import numba

                self._impl = numba.njit(cache=True, **self.options)(self.py_func)
            else:
                self._impl = self.py_func
        return self._impl

    @property
    def jitted(self) -> bool:
        return config.JIT

    def __call__(self, *args):
        impl = self._impl
        if impl is None:
            impl = self.compile()
        return impl(*args)

    def __repr__(self) -> str:
        state = "numba" if config.JIT else "python (WORKBENCH_JIT=0)"
        return f"<lazy jit {self.__name__}: {state}>"


def njit(func=None, **options):
    """``@njit`` or ``@njit(fastmath=False, ...)``: lazily numba-compiled, cached on disk."""
    if func is None:
        return lambda f: LazyJit(f, options)
    return LazyJit(func, options)
