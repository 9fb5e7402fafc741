"""Precompiled kernels: the numba kernels as one native library, used without numba at run time.

numba compiles a kernel the first time it runs, or loads it from its disk cache; either way the
process imports numba and starts LLVM, which costs ~110 MB of resident memory and half a second
before the first multiply-add — more than a whole MobileNet.  This module moves that work ahead of
time:

``workbench precompile`` (also run by ``make lab`` / ``make test``)
    runs a workload of models (the cached corpus, the ``*.tflite`` files of each folder named with
    ``--models``, and any model given) with the numba kernels, notes every kernel that
    was called from Python with the argument types it met, and compiles each of those
    specialisations once more behind a plain C entry point (``int32 entry(void **ptrs, int64
    *ints, double *reals)``: arrays become a data pointer and their sizes).  The machine code of all
    of them is linked, with the system's C compiler driver (``cc``), into one shared library that is
    also a small Python extension module (its C part checks a call's arguments as numba would and
    fills the entry's slots); a JSON manifest lies next to it.  Both are named after a fingerprint
    of the kernels' source code, this CPU, Python and numpy, so a library built for other sources or
    another machine is never used.

at run time
    the first call of a jitted kernel looks the library up (no numba import): when the manifest has
    entries for this function, the call goes to the module's ``call``, which takes the first entry
    whose argument types fit (same dtype, dimensions, C order, alignment; a writable array where the
    kernel writes), lets go of the GIL (so ``num_threads`` works as before) and runs it; when none
    fits it hands the call to numba, which compiles or loads the kernel as it always did.

How an error inside a kernel is reported: each C entry runs the kernel inside ``try``/``except``
and returns 1 when it raised; the call is then repeated through numba, which raises the very
exception (type and message) the kernel raises.  Arrays the kernel allocates for itself come from
a 30-line allocator written here in LLVM IR (:data:`RUNTIME_IR`) with the memory layout numba's
code expects (reference count, destructor, destructor data, data pointer, size, allocator); a
kernel whose code needs anything else from numba's runtime (lists, dictionaries, exceptions with
run-time values) is left to numba and named in the build report.

``WORKBENCH_PRECOMPILED=0`` ignores the library; ``WORKBENCH_KERNELS_DIR`` moves it (default
``~/.cache/tflite-workbench/kernels``), both read in :mod:`workbench.config`.  :func:`status` says what is in use.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import sys
import threading
from pathlib import Path

import numpy as np

from .. import config
from ..errors import WorkbenchError

HERE = Path(__file__).resolve().parent
FORMAT = 1


class PrecompileError(WorkbenchError):
    """The precompiled kernel library could not be built."""


def library_dir() -> Path:
    """Where the library is built and looked for: ``WORKBENCH_KERNELS_DIR`` (:func:`workbench.config.kernels_dir`)."""
    return config.kernels_dir()


# ----------------------------------------------------------------------------------------------
# fingerprint: the kernels' sources and the CPU the code was compiled for

_NUMBA_ENV = ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_OPT", "NUMBA_BOUNDSCHECK", "NUMBA_FASTMATH",
              "NUMBA_DISABLE_JIT")
_fingerprint: str | None = None


def _cpu_description() -> str:
    """What the compiled code depends on: the machine, and on Linux the CPU model and its flags."""
    parts = [platform.machine(), platform.system()]
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key = line.split(":", 1)[0].strip()
                if key in ("vendor_id", "model name", "flags", "Features", "CPU part"):
                    parts.append(line.strip())
                elif not line.strip() and len(parts) > 2:
                    break           # the first processor is enough
    except OSError:
        parts.append(platform.processor())
    return "\n".join(parts)


def fingerprint() -> str:
    """sha256 over every source file of the interpreter package, the CPU, Python, numpy, the
    numba knobs and ``WORKBENCH_VNNI``."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(f"format {FORMAT}\n".encode())
        # the kernels this library compiles live in the interpreter's speed layer; hashing its
        # sources (read as text, not imported) keeps this package below the interpreter
        files = (sorted(HERE.rglob("*.py")) + sorted((HERE / "native").iterdir())
                 + sorted((HERE.parent / "interpreter").rglob("*.py")) + [HERE.parent / "config.py"])
        for path in files:
            h.update(str(path.relative_to(HERE.parent)).encode() + b"\0")
            h.update(path.read_bytes())
        h.update(_cpu_description().encode())
        h.update(f"python {sys.version}\nnumpy {np.__version__}\n".encode())
        for name in _NUMBA_ENV:
            h.update(f"{name}={os.environ.get(name, '')}\n".encode())
        h.update(f"WORKBENCH_VNNI={int(config.vnni())}\n".encode())
        _fingerprint = h.hexdigest()
    return _fingerprint


def library_paths(directory: Path | None = None) -> tuple[Path, Path]:
    """(shared library, manifest) for the current fingerprint."""
    d = Path(directory) if directory is not None else library_dir()
    stem = f"kernels-{fingerprint()[:20]}"
    return d / f"{stem}.so", d / f"{stem}.json"


# ----------------------------------------------------------------------------------------------
# run time: the library is a Python extension module; its ``call`` runs a kernel's entries


class Precompiled(functools.partial):
    """A jitted kernel served by the library: ``call(first, count, fallback, *args)`` of the library's
    module with this function's entries bound; numba (``fallback``) takes what they do not fit."""

    @property
    def lazy(self):
        return self.args[2].__self__

    def rows(self, threads: int, total: int, align: int, *args) -> bool:
        """The kernel over rows 0..total (its last two arguments), cut among ``threads`` threads of
        the library's own pool; False when no entry takes these arguments (or the kernel raised)."""
        first, count, fallback = self.args
        return self.func.__self__.call_rows(first, count, fallback, threads, total, align, *args) is None

    def __repr__(self) -> str:
        return f"<precompiled {self.lazy.__name__}: {self.args[1]} signature(s)>"


class _Library:
    def __init__(self, so: Path, manifest: dict):
        self.path = so
        self.manifest = manifest
        loader = importlib.machinery.ExtensionFileLoader("workbench_kernels", str(so))
        spec = importlib.util.spec_from_file_location("workbench_kernels", so, loader=loader)
        self.module = importlib.util.module_from_spec(spec)
        loader.exec_module(self.module)
        if self.module.entries != len(manifest["entries"]):
            raise ValueError(f"{so} holds {self.module.entries} entries, its manifest {len(manifest['entries'])}")
        self.span: dict[str, tuple[int, int]] = {}       # function → (first entry, number of entries)
        for k, entry in enumerate(manifest["entries"]):
            first, count = self.span.get(entry["function"], (k, 0))
            if first + count != k:
                raise ValueError(f"{so}: the entries of {entry['function']} are not together")
            self.span[entry["function"]] = (first, count + 1)

    def bind(self, lazy) -> Precompiled | None:
        span = self.span.get(function_name(lazy.py_func))
        return None if span is None else Precompiled(self.module.call, span[0], span[1], lazy.compile)

    def match(self, lazy, *args) -> int:
        """The index of the entry that would take these arguments, -1 for numba (tests, notebooks)."""
        span = self.span.get(function_name(lazy.py_func))
        return -1 if span is None else self.module.match(span[0], span[1], *args)


_library: _Library | None | bool = False       # False: not looked for yet; None: none usable
_lock = threading.Lock()


def function_name(func) -> str:
    return f"{func.__module__}:{func.__qualname__}"


def enabled() -> bool:
    return config.JIT and config.PRECOMPILED


def library() -> _Library | None:
    """The library for the current fingerprint, loaded once (None when there is none, or disabled)."""
    global _library
    if _library is False:
        with _lock:             # the first calls may come from several threads at once (run_rows)
            if _library is False:
                _library = _load()
    return _library


def _load() -> _Library | None:
    if not enabled():
        return None
    so, man = library_paths()
    try:
        manifest = json.loads(man.read_text())
        if manifest.get("fingerprint") == fingerprint() and so.exists():
            return _Library(so, manifest)
    except (OSError, ValueError, KeyError, ImportError):
        pass
    return None


def for_function(lazy):
    """A :class:`Precompiled` for this lazily jitted function, or None when the library lacks it."""
    lib = library()
    return None if lib is None else lib.bind(lazy)


_natives: dict = {}      # name -> (the library it was probed in, the function or None)


def native(name: str, probe):
    """The library module's own C function ``name`` (``conv_f32``, ``dw_i8``: written in C, not compiled
    from numba), or None: no library, an older one without it, or ``probe(fn)`` false (a CPU without
    the instructions it needs answers -1).  Probed once per library in use."""
    lib = library()
    known = _natives.get(name)
    if known is not None and known[0] is lib:
        return known[1]
    fn = getattr(lib.module, name, None) if lib is not None else None
    if fn is not None and not probe(fn):
        fn = None
    _natives[name] = (lib, fn)
    return fn


def forget() -> None:
    """Look the library up again at the next first call (after a build, or in tests)."""
    global _library, _fingerprint
    _library = False
    _fingerprint = None


def status() -> dict:
    """What the library holds and whether this process uses it."""
    so, man = library_paths()
    doc = {"enabled": enabled(), "directory": str(so.parent), "fingerprint": fingerprint()[:20],
           "built": so.exists() and man.exists()}
    if doc["built"]:
        manifest = json.loads(man.read_text())
        doc["entries"] = len(manifest["entries"])
        doc["functions"] = len({e["function"] for e in manifest["entries"]})
        doc["left_to_numba"] = manifest.get("skipped", [])
    doc["in_use"] = library() is not None
    return doc


from .build import RUNTIME_IR, build  # noqa: E402  (numba is imported on use)

__all__ = ["PrecompileError", "Precompiled", "RUNTIME_IR", "build", "enabled",
           "fingerprint",
           "for_function", "forget", "library", "library_dir", "library_paths", "native", "status"]
