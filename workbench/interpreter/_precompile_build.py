"""Building the precompiled kernel library (see :mod:`workbench.interpreter.precompiled`).

Only the build imports numba and llvmlite; the library it writes is used without either.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from .. import config

# The two functions of numba's runtime that a kernel's own arrays need, written for the library:
# a block of 48 header bytes (reference count, destructor, destructor data, data pointer, size,
# external allocator — the order numba's generated code reads them in) followed by the data,
# aligned as asked; freeing the block frees both.  Nothing here runs a destructor: the library's
# arrays are plain memory.
RUNTIME_IR = r"""
declare ptr @malloc(i64)
declare void @free(ptr)

define ptr @NRT_MemInfo_alloc_aligned(i64 %size, i32 %align) {
entry:
  %align64 = zext i32 %align to i64
  %nonzero = icmp ugt i64 %align64, 1
  %step = select i1 %nonzero, i64 %align64, i64 1
  %head = add i64 %size, 48
  %total = add i64 %head, %step
  %block = call ptr @malloc(i64 %total)
  %failed = icmp eq ptr %block, null
  br i1 %failed, label %none, label %fill
none:
  ret ptr null
fill:
  %base = ptrtoint ptr %block to i64
  %after = add i64 %base, 48
  %less = sub i64 %step, 1
  %up = add i64 %after, %less
  %mask = xor i64 %less, -1
  %start = and i64 %up, %mask
  %data = inttoptr i64 %start to ptr
  store i64 1, ptr %block, align 8
  %dtor = getelementptr i8, ptr %block, i64 8
  store ptr null, ptr %dtor, align 8
  %info = getelementptr i8, ptr %block, i64 16
  store ptr null, ptr %info, align 8
  %dataslot = getelementptr i8, ptr %block, i64 24
  store ptr %data, ptr %dataslot, align 8
  %sizeslot = getelementptr i8, ptr %block, i64 32
  store i64 %size, ptr %sizeslot, align 8
  %allocslot = getelementptr i8, ptr %block, i64 40
  store ptr null, ptr %allocslot, align 8
  ret ptr %block
}

define ptr @NRT_MemInfo_alloc_safe_aligned(i64 %size, i32 %align) {
entry:
  %block = call ptr @NRT_MemInfo_alloc_aligned(i64 %size, i32 %align)
  ret ptr %block
}

define void @NRT_MemInfo_call_dtor(ptr %block) {
entry:
  call void @free(ptr %block)
  ret void
}
"""

PROVIDED = frozenset({"NRT_MemInfo_alloc_aligned", "NRT_MemInfo_alloc_safe_aligned", "NRT_MemInfo_call_dtor"})
# what the C library and libm give every shared library
LIBC = frozenset(
    "memcpy memmove memset malloc free "
    "exp expf exp2 exp2f expm1 expm1f log logf log2 log2f log10 log10f log1p log1pf pow powf sqrt sqrtf "
    "cbrt cbrtf hypot hypotf sin sinf cos cosf tan tanf asin asinf acos acosf atan atanf atan2 atan2f sinh "
    "sinhf cosh coshf tanh tanhf asinh asinhf acosh acoshf atanh atanhf erf erff erfc erfcf lgamma lgammaf "
    "tgamma tgammaf floor floorf ceil ceilf round roundf trunc truncf rint rintf nearbyint nearbyintf fmod "
    "fmodf fabs fabsf fma fmaf fmin fminf fmax fmaxf ldexp ldexpf frexp frexpf modf modff sincos sincosf".split())


def default_models() -> list[Path]:
    """The workload: the repository's sample models and, when present, ../shared/models and the
    corpus models already in the cache (``make corpus``; nothing is downloaded here)."""
    from ..corpus import MODELS, cache_dir

    root = Path(__file__).resolve().parents[2]
    models = sorted((root / "sample_models").glob("*.tflite"))
    shared = root.parent / "shared" / "models"
    if shared.is_dir():
        models += sorted(shared.glob("*.tflite"))
    models += [p for p in (cache_dir() / f"{name}.tflite" for name in sorted(MODELS)) if p.exists()]
    return models


def run_workload(models, log=print) -> list[str]:
    """Run each model once on seeded inputs with the numba kernels; the models that failed, and why."""
    from ..bench import random_inputs
    from ..corpus import INPUT_SHAPES
    from .interpreter import Interpreter

    failed = []
    for path in models:
        try:
            it = Interpreter(model_path=str(path))
            for d, shape in zip(it.get_input_details(), INPUT_SHAPES.get(Path(path).stem, ())):
                it.resize_tensor_input(d["index"], list(shape))
            it.allocate_tensors()
            details = it.get_input_details()
            if any(np.dtype(d["dtype"]).kind not in "fiub" for d in details):
                raise ValueError("an input is not numeric")
            for d, x in zip(details, random_inputs(details, seed=0)):
                it.set_tensor(d["index"], x)
            it.invoke()
        except Exception as exc:       # a model the workload cannot run teaches nothing; say which
            failed.append(f"{Path(path).name}: {type(exc).__name__}: {str(exc)[:200]}")
    return failed


def _spec(t):
    """A numba argument type as the manifest writes it, or None when the library cannot take it."""
    from numba.core import types

    if isinstance(t, types.Array):
        if t.layout != "C" or t.ndim == 0 or not isinstance(t.dtype, (types.Integer, types.Float, types.Boolean)):
            return None
        return ["array", np.dtype(str(t.dtype)).str, t.ndim]
    if isinstance(t, (types.Integer, types.Float, types.Boolean)):
        return ["scalar", np.dtype(str(t) if not isinstance(t, types.Boolean) else "bool").str]
    return None


def _entry_source(specs: list, ret) -> str:
    """Python source of the C entry of one specialisation (compiled by ``numba.cfunc``)."""
    params, call = [], []
    for i, spec in enumerate(specs):
        if spec[0] == "array":
            dims = [f"n{i}_{d}" for d in range(spec[2])]
            params += [f"p{i}"] + dims
            call.append(f"carray(p{i}, ({', '.join(dims)},))")
        else:
            params.append(f"x{i}")
            call.append(f"x{i} != 0" if spec[1] == "|b1" else f"x{i}")
    if ret is not None:
        params.append("result")
    lines = [f"def entry({', '.join(params)}):", "    status = 0", "    try:"]
    if ret is not None:
        lines.append(f"        result[0] = kernel({', '.join(call)})")
    else:
        lines.append(f"        kernel({', '.join(call)})")
    lines += ["    except Exception:", "        status = 1", "    return status"]
    return "\n".join(lines) + "\n"


def _compile_entry(lazy, specs: list, ret):
    """numba cfunc of one specialisation → (LLVM IR of its module, its symbol)."""
    import numba
    from numba.core import types

    def scalar(code):
        return types.uint8 if code == "|b1" else numba.from_dtype(np.dtype(code))

    sig = []
    for spec in specs:
        if spec[0] == "array":
            sig.append(types.CPointer(numba.from_dtype(np.dtype(spec[1]))))
            sig += [types.int64] * spec[2]
        else:
            sig.append(scalar(spec[1]))
    if ret is not None:
        sig.append(types.CPointer(scalar(ret)))
    glb = {"kernel": lazy.compile(), "carray": numba.carray}
    exec(compile(_entry_source(specs, ret), f"<entry of {lazy.__name__}>", "exec"), glb)
    cf = numba.cfunc(types.int32(*sig))(glb["entry"])
    return cf._library.get_llvm_str(), cf.native_name


def _checked_module(ir: str, symbol: str, new_name: str):
    """Parse one entry's module, keep only its entry visible, and name what it needs from outside."""
    import llvmlite.binding as llvm

    mod = llvm.parse_assembly(ir)
    missing = []
    for fn in mod.functions:
        if fn.is_declaration:
            if not (fn.name.startswith("llvm.") or fn.name in PROVIDED or fn.name in LIBC):
                missing.append(fn.name)
        elif fn.name == symbol:
            fn.name = new_name
        else:
            fn.linkage = "internal"
    for gv in mod.global_variables:
        if gv.is_declaration:
            missing.append(gv.name)
        else:
            gv.linkage = "internal"
    return mod, missing


def _target_machine():
    import llvmlite.binding as llvm
    from numba.core import config as nconfig
    from numba.core.registry import cpu_target

    codegen = cpu_target.target_context.codegen()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=codegen._get_host_cpu_name(), features=codegen._tm_features,
                                        opt=int(nconfig.OPT), reloc="pic", codemodel="default")


def build(models=None, directory=None, log=print, functions=None) -> dict:
    """Build the library for the current sources and CPU; returns the manifest written.

    ``models``: the workload (default :func:`default_models`); ``functions``: instead of a workload,
    an explicit list of ``(lazy jitted function, [argument tuples])`` to call once each (tests)."""
    from . import _jit, precompiled

    if not config.JIT:
        raise precompiled.PrecompileError("WORKBENCH_JIT=0: there is no numba to compile the kernels with")
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise precompiled.PrecompileError("no C compiler driver (cc, gcc or clang) to link the kernel library with")
    t0 = time.perf_counter()
    saved = config.PRECOMPILED
    config.PRECOMPILED = False          # the workload must meet numba's dispatchers, not an old library
    _jit.forget_callables()
    _jit.CALLED.clear()
    try:
        failed = []
        if functions is not None:
            for lazy, calls in functions:
                for args in calls:
                    lazy(*args)
        else:
            models = list(default_models() if models is None else models)
            log(f"workload: {len(models)} model(s)")
            failed = run_workload(models, log)
        seen = list(_jit.CALLED)
    finally:
        config.PRECOMPILED = saved
        _jit.forget_callables()
    t_workload = time.perf_counter() - t0

    from numba.core import types

    entries, skipped, modules = [], [], []
    for lazy in sorted(seen, key=lambda f: precompiled.function_name(f.py_func)):
        name = precompiled.function_name(lazy.py_func)
        dispatcher = lazy.compile()
        done = set()
        for sig in list(dispatcher.signatures):
            ret_t = dispatcher.overloads[sig].signature.return_type
            specs = [_spec(t) for t in sig]
            if any(s is None for s in specs):
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: an argument that is not a C-contiguous "
                               f"numeric array or a number")
                continue
            ret = None
            if ret_t != types.none:
                rs = _spec(ret_t)
                if rs is None or rs[0] != "scalar" or rs[1] == "|b1":
                    skipped.append(f"{name}: returns {ret_t}")
                    continue
                ret = rs[1]
            key = json.dumps([specs, ret])
            if key in done:
                continue
            done.add(key)
            symbol = f"workbench_kernel_{len(entries)}"
            try:
                ir, native = _compile_entry(lazy, specs, ret)
                mod, missing = _checked_module(ir, native, symbol)
            except Exception as exc:
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            if missing:
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: needs {', '.join(sorted(missing)[:4])} "
                               f"from numba's runtime")
                continue
            modules.append(mod)
            entries.append({"function": name, "symbol": symbol, "args": specs, "ret": ret})
    t_compile = time.perf_counter() - t0 - t_workload
    so, man = precompiled.library_paths(directory)
    so.parent.mkdir(parents=True, exist_ok=True)
    manifest = {"format": precompiled.FORMAT, "fingerprint": precompiled.fingerprint(), "entries": entries,
                "skipped": skipped, "workload_failures": failed,
                "seconds": {"workload": round(t_workload, 1), "compile": round(t_compile, 1)}}
    _link(modules, so, cc)
    for old in so.parent.glob("kernels-*"):
        if old not in (so, man):
            old.unlink(missing_ok=True)
    manifest["seconds"]["total"] = round(time.perf_counter() - t0, 1)
    tmp = man.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, man)
    precompiled.forget()
    log(f"{len(entries)} kernel specialisation(s) of {len({e['function'] for e in entries})} function(s) in {so} "
        f"({manifest['seconds']['total']} s); left to numba: {len(skipped)}")
    return manifest


def _link(modules, so: Path, cc: str) -> None:
    """One object file for every entry and the runtime, linked into ``so`` (replaced atomically)."""
    import llvmlite.binding as llvm

    from . import precompiled

    runtime = llvm.parse_assembly(RUNTIME_IR)
    combined = modules[0] if modules else runtime
    if modules:
        runtime.triple = combined.triple
        runtime.data_layout = combined.data_layout
        for mod in modules[1:]:
            combined.link_in(mod)
        combined.link_in(runtime)
    else:
        combined.triple = llvm.get_process_triple()
    combined.verify()
    obj = _target_machine().emit_object(combined)
    with tempfile.TemporaryDirectory() as tmp:
        o = Path(tmp) / "kernels.o"
        o.write_bytes(obj)
        out = Path(tmp) / "kernels.so"
        proc = subprocess.run([cc, "-shared", "-o", str(out), str(o), "-lm", "-Wl,-z,defs"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise precompiled.PrecompileError(f"linking the kernel library failed:\n{proc.stderr[-2000:]}")
        partial = so.with_suffix(".so.tmp")
        shutil.copyfile(out, partial)
        os.replace(partial, so)
