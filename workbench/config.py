"""Environment knobs: every ``WORKBENCH_*`` variable the package looks at is read here, and only here.

Read once at import (a change afterwards has no effect):

* :data:`JIT` -- ``WORKBENCH_JIT``
* :data:`DEBUG` -- ``WORKBENCH_DEBUG``
* :data:`PRECOMPILED` -- ``WORKBENCH_PRECOMPILED``

Read each time they are called (a test or a notebook may set them after import):

* :func:`debug_level` -- ``WORKBENCH_DEBUG`` as it is now
* :func:`vnni` -- ``WORKBENCH_VNNI``
* :func:`corpus_dir` -- ``WORKBENCH_CORPUS_DIR``
* :func:`kernels_dir` -- ``WORKBENCH_KERNELS_DIR``

A flag is off for ``0``, ``false``, ``no`` or ``off`` (any case), on for any other value, and takes its
default when unset or empty.  ``tests/architecture/test_config_knobs.py`` fails on a ``WORKBENCH_*``
read anywhere else in ``workbench/``.  Variables that are not the workbench's own (``XDG_CACHE_HOME``
here; ``NUMBA_*``, ``CC`` where they are used) are read where they are needed.
"""

from __future__ import annotations

import os
from pathlib import Path


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


def _level(name: str) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else 0
    except ValueError:
        return 1  # any non-numeric value means "on"


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"))


def debug_level() -> int:
    """``WORKBENCH_DEBUG=<level>`` as set now: an integer, any other non-empty value 1; default 0 (off).
    The CLI re-raises an internal error with its traceback when it is at least 1."""
    return _level("WORKBENCH_DEBUG")


def vnni() -> bool:
    """``WORKBENCH_VNNI=0`` keeps int8 CONV_2D / FULLY_CONNECTED off the AVX-512 VNNI micro-kernel
    (:mod:`workbench.perf.vnni`), on their portable float-BLAS path; default on (used where the
    CPU has VNNI and :data:`JIT` is on)."""
    return _flag("WORKBENCH_VNNI", True)


def corpus_dir() -> Path:
    """``WORKBENCH_CORPUS_DIR``: where :mod:`workbench.corpus` caches the downloaded models; default
    ``$XDG_CACHE_HOME/tflite-workbench/corpus`` (``~/.cache/tflite-workbench/corpus``)."""
    value = os.environ.get("WORKBENCH_CORPUS_DIR")
    return Path(value) if value else _cache_home() / "tflite-workbench" / "corpus"


def kernels_dir() -> Path:
    """``WORKBENCH_KERNELS_DIR``: where the precompiled kernel library is built and looked for
    (:mod:`workbench.perf.precompiled`); default ``$XDG_CACHE_HOME/tflite-workbench/kernels``
    (``~/.cache/tflite-workbench/kernels``)."""
    value = os.environ.get("WORKBENCH_KERNELS_DIR")
    return Path(value) if value else _cache_home() / "tflite-workbench" / "kernels"


JIT: bool = _flag("WORKBENCH_JIT", True)
"""``WORKBENCH_JIT=0`` runs every numba kernel as plain Python: slow, but steppable in a debugger and
visible to coverage; default on (numba compiles the kernels)."""

DEBUG: int = debug_level()
"""``WORKBENCH_DEBUG=<level>`` at import: extra checks and messages in the components that look at it
(the interpreter warns about the first non-finite float output); default 0 (off)."""

PRECOMPILED: bool = _flag("WORKBENCH_PRECOMPILED", True)
"""``WORKBENCH_PRECOMPILED=0`` ignores the precompiled kernel library
(:mod:`workbench.perf.precompiled`), so numba compiles or loads its cache; default on."""

__all__ = ["JIT", "DEBUG", "PRECOMPILED", "debug_level", "vnni", "corpus_dir", "kernels_dir"]
