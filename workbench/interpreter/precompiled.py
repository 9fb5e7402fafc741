"""Precompiled kernels: the numba kernels as one native library, used without numba at run time.

numba compiles a kernel the first time it runs, or loads it from its disk cache; either way the
process imports numba and starts LLVM, which costs ~110 MB of resident memory and half a second
before the first multiply-add — more than a whole MobileNet.  This module moves that work ahead of
time:

``workbench precompile`` (also run by ``make lab`` / ``make test``)
    runs a workload of models (the repository's ``sample_models``, ``../shared/models`` when it is
    there, and any model given) with the numba kernels, notes every kernel that was called from
    Python with the argument types it met, and compiles each of those specialisations once more
    behind a plain C entry point (arrays become a data pointer and their sizes).  The machine code
    of all of them is linked, with the system's C compiler driver (``cc``), into one shared
    library, next to a JSON manifest; both are named after a fingerprint of the kernels' source
    code and of this CPU, so a library built for other sources or another CPU is never used.

at run time
    the first call of a jitted kernel looks the library up (no numba import): when the manifest has
    an entry for this function and argument types, the call goes to the library through
    :mod:`ctypes` (which lets go of the GIL, so ``num_threads`` works as before); otherwise, and for
    arrays that are not C-contiguous, numba compiles or loads the kernel as it always did.

How an error inside a kernel is reported: each C entry runs the kernel inside ``try``/``except``
and returns 1 when it raised; the call is then repeated through numba, which raises the very
exception (type and message) the kernel raises.  Arrays the kernel allocates for itself come from
a 30-line allocator written here in LLVM IR (:data:`RUNTIME_IR`) with the memory layout numba's
code expects (reference count, destructor, destructor data, data pointer, size, allocator); a
kernel whose code needs anything else from numba's runtime (lists, dictionaries, exceptions with
run-time values) is left to numba and named in the build report.

``WORKBENCH_PRECOMPILED=0`` ignores the library; ``WORKBENCH_KERNELS_DIR`` moves it (default
``~/.cache/tflite-workbench/kernels``).  :func:`status` says what is in use.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import platform
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
    env = os.environ.get("WORKBENCH_KERNELS_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tflite-workbench" / "kernels"


# ----------------------------------------------------------------------------------------------
# fingerprint: the kernels' sources and the CPU the code was compiled for

_NUMBA_ENV = ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_OPT", "NUMBA_BOUNDSCHECK", "NUMBA_FASTMATH",
              "NUMBA_DISABLE_JIT", "WORKBENCH_VNNI")
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
    """sha256 over every source file of the interpreter package, the CPU and the numba knobs."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(f"format {FORMAT}\n".encode())
        files = sorted(HERE.rglob("*.py")) + [HERE.parent / "config.py"]
        for path in files:
            h.update(str(path.relative_to(HERE.parent)).encode() + b"\0")
            h.update(path.read_bytes())
        h.update(_cpu_description().encode())
        for name in _NUMBA_ENV:
            h.update(f"{name}={os.environ.get(name, '')}\n".encode())
        _fingerprint = h.hexdigest()
    return _fingerprint


def library_paths(directory: Path | None = None) -> tuple[Path, Path]:
    """(shared library, manifest) for the current fingerprint."""
    d = Path(directory) if directory is not None else library_dir()
    stem = f"kernels-{fingerprint()[:20]}"
    return d / f"{stem}.so", d / f"{stem}.json"


# ----------------------------------------------------------------------------------------------
# run time: find a kernel in the library and call it through ctypes

_CTYPES = {"<f4": ctypes.c_float, "<f8": ctypes.c_double, "|i1": ctypes.c_int8, "|u1": ctypes.c_uint8,
           "<i2": ctypes.c_int16, "<u2": ctypes.c_uint16, "<i4": ctypes.c_int32, "<u4": ctypes.c_uint32,
           "<i8": ctypes.c_int64, "<u8": ctypes.c_uint64, "|b1": ctypes.c_uint8}


def arg_key(a):
    """The part of numba's type of ``a`` the library's entries are chosen by (None: not handled)."""
    t = type(a)
    if t is np.ndarray:
        return (a.dtype.str, a.ndim) if a.flags.c_contiguous else None
    if t is int:
        return "<i8"
    if t is float:
        return "<f8"
    if t is bool:
        return "|b1"
    if isinstance(a, np.generic):
        return a.dtype.str
    return None


def spec_key(spec) -> object:
    """The :func:`arg_key` an argument written as ``spec`` in the manifest has."""
    return (spec[1], spec[2]) if spec[0] == "array" else spec[1]


def _caller_source(args: list, ret: str | None) -> str:
    """Python source of the function that unpacks one call's arguments for the C entry."""
    names = [f"a{i}" for i in range(len(args))]
    flat = []
    for name, spec in zip(names, args):
        if spec[0] == "array":
            flat.append(f"{name}.ctypes.data")
            flat.extend(f"{name}.shape[{d}]" for d in range(spec[2]))
        elif spec[1][1] == "f":
            flat.append(f"float({name})")
        else:
            flat.append(f"int({name})")
    params = ", ".join(names)
    lines = [f"def call({params}):"]
    if ret is not None:
        lines.append("    out = RET()")
        flat.append("byref(out)")
    lines.append(f"    if FN({', '.join(flat)}):")
    lines.append(f"        return FALLBACK()({params})")
    lines.append("    return out.value" if ret is not None else "    return None")
    return "\n".join(lines) + "\n"


class Precompiled:
    """A jitted kernel served by the library for the argument types it has, by numba otherwise."""

    __slots__ = ("lazy", "table", "__name__")

    def __init__(self, lazy, table: dict):
        self.lazy = lazy
        self.table = table
        self.__name__ = lazy.__name__

    def __call__(self, *args):
        fn = self.table.get(tuple(map(arg_key, args)))
        if fn is None:
            return self.lazy.compile()(*args)
        return fn(*args)

    def __repr__(self) -> str:
        return f"<precompiled {self.__name__}: {len(self.table)} signature(s)>"


class _Library:
    def __init__(self, so: Path, manifest: dict):
        self.path = so
        self.manifest = manifest
        self.dll = ctypes.CDLL(str(so))
        self.by_function: dict[str, list[dict]] = {}
        for entry in manifest["entries"]:
            self.by_function.setdefault(entry["function"], []).append(entry)

    def table(self, lazy) -> dict:
        table = {}
        for entry in self.by_function.get(function_name(lazy.py_func), ()):
            try:
                fn = self.dll[entry["symbol"]]
            except AttributeError:      # a manifest that does not match its library: numba will do
                continue
            argtypes = []
            for spec in entry["args"]:
                if spec[0] == "array":
                    argtypes.append(ctypes.c_void_p)
                    argtypes.extend([ctypes.c_int64] * spec[2])
                else:
                    argtypes.append(_CTYPES[spec[1]])
            ret = entry["ret"]
            if ret is not None:
                argtypes.append(ctypes.c_void_p)
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int32
            glb = {"FN": fn, "FALLBACK": lazy.compile, "byref": ctypes.byref,
                   "RET": _CTYPES[ret] if ret is not None else None}
            exec(compile(_caller_source(entry["args"], ret), f"<precompiled {entry['symbol']}>", "exec"), glb)
            table[tuple(spec_key(s) for s in entry["args"])] = glb["call"]
        return table


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
    except (OSError, ValueError, KeyError):
        pass
    return None


def for_function(lazy):
    """A :class:`Precompiled` for this lazily jitted function, or None when the library lacks it."""
    lib = library()
    if lib is None:
        return None
    table = lib.table(lazy)
    return Precompiled(lazy, table) if table else None


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


from ._precompile_build import RUNTIME_IR, build, default_models  # noqa: E402  (numba is imported on use)

__all__ = ["PrecompileError", "Precompiled", "RUNTIME_IR", "arg_key", "build", "default_models", "enabled",
           "fingerprint",
           "for_function", "forget", "library", "library_dir", "library_paths", "status"]
