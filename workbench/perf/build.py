"""Building the precompiled kernel library (see :mod:`workbench.perf.precompiled`).

Only the build imports numba and llvmlite; the library it writes is used without either.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from .. import config

NATIVE = Path(__file__).resolve().parent / "native"


def _native(name: str) -> str:
    """The text of one of the library's non-Python sources, shipped as package data in ``native/``."""
    return (NATIVE / name).read_text(encoding="utf-8")


# The two functions of numba's runtime that a kernel's own arrays need, written for the library:
# a block of 48 header bytes (reference count, destructor, destructor data, data pointer, size,
# external allocator — the order numba's generated code reads them in) followed by the data,
# aligned as asked; freeing the block frees both.  Nothing here runs a destructor: the library's
# arrays are plain memory.
RUNTIME_IR = _native("runtime.ll")

# The library is also a small Python extension module: its one function takes a kernel call from
# Python, checks the arguments against each entry the function has (numpy's own checks: type, kind,
# item size, dimensions, C order, alignment, writability), fills the entry's slots, lets the GIL go
# and calls it.  When no entry fits, or the kernel raised, it hands the same arguments to numba (the
# ``fallback`` callable returns the dispatcher), so the caller sees numba's result or exception.
SHIM = _native("shim_head.c")

SHIM_TAIL = _native("shim_tail.c")

# Float convolutions in C (AVX-512 where the CPU has it): the library's module calls them directly.
CONV_F32 = _native("conv_f32.c")

# Depthwise convolutions (int8 and float32) in C (AVX-512), likewise.
DEPTHWISE = _native("depthwise.c")

# Float32 ADD / SUB / MUL of same-shaped tensors in C (AVX-512), likewise.
ELEMENTWISE = _native("elementwise.c")

PROVIDED = frozenset({"NRT_MemInfo_alloc_aligned", "NRT_MemInfo_alloc_safe_aligned", "NRT_MemInfo_call_dtor"})
# what the C library and libm give every shared library
LIBC = frozenset(
    "memcpy memmove memset malloc free "
    "exp expf exp2 exp2f expm1 expm1f log logf log2 log2f log10 log10f log1p log1pf pow powf sqrt sqrtf "
    "cbrt cbrtf hypot hypotf sin sinf cos cosf tan tanf asin asinf acos acosf atan atanf atan2 atan2f sinh "
    "sinhf cosh coshf tanh tanhf asinh asinhf acosh acoshf atanh atanhf erf erff erfc erfcf lgamma lgammaf "
    "tgamma tgammaf floor floorf ceil ceilf round roundf trunc truncf rint rintf nearbyint nearbyintf fmod "
    "fmodf fabs fabsf fma fmaf fmin fminf fmax fmaxf ldexp ldexpf frexp frexpf modf modff sincos sincosf".split())


def _spec(t):
    """A numba argument type as the manifest writes it, or None when the library cannot take it."""
    from numba.core import types

    t = types.unliteral(t)
    if isinstance(t, types.Array):
        scalar = isinstance(t.dtype, (types.Integer, types.Float, types.Boolean))
        if t.layout != "C" or not 0 < t.ndim < 10 or not scalar:
            return None
        return ["array", np.dtype(str(t.dtype)).str, t.ndim, not t.mutable]
    if isinstance(t, (types.Integer, types.Float, types.Boolean)):
        return ["scalar", np.dtype(str(t) if not isinstance(t, types.Boolean) else "bool").str]
    return None


# dtype code (numpy's dtype.str) → the letter the C shim knows it by; which slot a scalar travels in
LETTERS = {"<f4": "f", "<f8": "d", "|i1": "b", "|u1": "B", "<i2": "h", "<u2": "H", "<i4": "i", "<u4": "I",
           "<i8": "q", "<u8": "Q", "|b1": "?"}
MAX_SLOTS = 96          # pointers, integers or reals one call may carry (the shim's fixed arrays)


def _slots(specs: list, ret) -> tuple[int, int, int]:
    """(pointers, integers, reals) one call of this entry fills, its result's slot included."""
    ptrs = sum(1 for s in specs if s[0] == "array")
    ints = sum(s[2] for s in specs if s[0] == "array") + sum(1 for s in specs if s[0] == "scalar" and
                                                          LETTERS[s[1]] not in "fd")
    reals = sum(1 for s in specs if s[0] == "scalar" and LETTERS[s[1]] in "fd")
    if ret is not None:
        if LETTERS[ret] in "fd":
            reals += 1
        else:
            ints += 1
    return ptrs, ints, reals


def _entry_module(dispatcher, sig, specs: list, ret, symbol: str):
    """One specialisation's C entry, ``symbol``, as an LLVM module: a small wrapper written with numba's
    own lowering helpers, linked to the kernel as numba already compiled and optimised it.

    Every entry has one signature, ``int32 entry(void **ptrs, int64 *ints, double *reals)``: the
    arguments in order, arrays as a data pointer in ``ptrs`` and their sizes in ``ints``, integer and
    boolean scalars in ``ints``, real ones in ``reals``; a scalar result goes to the next free slot.
    It returns 0, or 1 when the kernel raised.  The wrapper builds each array's structure as
    ``numba.carray`` does (C order, no owner) and calls the kernel through numba's calling convention
    (``numba/core/callconv.py``: a status, a slot for the result, one for an exception's details), so
    nothing is compiled twice: the kernel's module is the one numba links into its own callers."""
    import llvmlite.binding as llvm
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.core.registry import cpu_target
    from numba.np.arrayobj import make_array, populate_array

    ctx = cpu_target.target_context
    cres = dispatcher.overloads[sig]
    argtys, resty = cres.signature.args, cres.signature.return_type
    kernel = cres.library._get_module_for_linking().clone()
    name = cres.fndesc.llvm_func_name
    kernel.get_function(name)         # NameError when the kernel's module does not define it

    i64, f64 = ir.IntType(64), ir.DoubleType()
    wrapper = ir.Module(name=symbol)
    fn = ir.Function(wrapper, ir.FunctionType(ir.IntType(32), [ir.IntType(8).as_pointer().as_pointer(),
                                                                i64.as_pointer(), f64.as_pointer()]), symbol)
    ptrs, ints, reals = fn.args
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    callee = ir.Function(wrapper, ctx.call_conv.get_function_type(resty, argtys), name)
    values = []
    p = i = r = 0
    for spec, ty in zip(specs, argtys):
        if spec[0] == "array":
            shape = [builder.load(builder.gep(ints, [ir.Constant(i64, i + d)])) for d in range(ty.ndim)]
            itemsize = ir.Constant(i64, np.dtype(spec[1]).itemsize)
            strides, step = [], itemsize
            for s in reversed(shape):
                strides.insert(0, step)
                step = builder.mul(step, s)
            data = builder.bitcast(builder.load(builder.gep(ptrs, [ir.Constant(i64, p)])),
                                   ctx.get_data_type(ty.dtype).as_pointer())
            ary = make_array(ty)(ctx, builder)
            populate_array(ary, data=data, shape=shape, strides=strides, itemsize=itemsize, meminfo=None)
            values.append(ary._getvalue())
            p, i = p + 1, i + ty.ndim
        elif LETTERS[spec[1]] in "fd":
            v = builder.load(builder.gep(reals, [ir.Constant(i64, r)]))
            values.append(v if ty == types.float64 else builder.fptrunc(v, ctx.get_value_type(ty)))
            r += 1
        else:
            v = builder.load(builder.gep(ints, [ir.Constant(i64, i)]))
            if isinstance(ty, types.Boolean):
                values.append(builder.icmp_unsigned("!=", v, ir.Constant(i64, 0)))
            else:
                values.append(v if ty.bitwidth == 64 else builder.trunc(v, ctx.get_value_type(ty)))
            i += 1
    status, result = ctx.call_conv.call_function(builder, callee, resty, argtys, values)
    if ret is not None:
        if LETTERS[ret] in "fd":
            builder.store(result if resty == types.float64 else builder.fpext(result, f64),
                          builder.gep(reals, [ir.Constant(i64, r)]))
        else:
            if resty.bitwidth < 64:
                result = (builder.sext if resty.signed else builder.zext)(result, i64)
            builder.store(result, builder.gep(ints, [ir.Constant(i64, i)]))
    builder.ret(builder.select(status.is_ok, ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), 1)))
    mod = llvm.parse_assembly(cgutils.normalize_ir_text(str(wrapper)))
    mod.triple, mod.data_layout = kernel.triple, kernel.data_layout
    kernel.link_in(mod)
    return kernel


def spec_string(specs: list) -> str:
    """The shim's description of an entry's arguments: per argument its kind ('a' an array the
    kernel may write, 'r' one it only reads, 's' a scalar), its type letter and its number of
    dimensions (a digit, 0 for scalars)."""
    return "".join(f"{('r' if s[3] else 'a') if s[0] == 'array' else 's'}{LETTERS[s[1]]}"
                   f"{s[2] if s[0] == 'array' else 0}" for s in specs)


def _checked_module(mod, symbol: str):
    """Keep only one entry's ``symbol`` visible in its module, drop what the entry does not reach (the
    kernel module's Python wrapper among it), and name what the rest needs from outside."""
    import llvmlite.binding as llvm

    for fn in mod.functions:
        if not fn.is_declaration and fn.name != symbol:
            fn.linkage = "internal"
    for gv in mod.global_variables:
        if not gv.is_declaration:
            gv.linkage = "internal"
    pm = llvm.create_new_module_pass_manager()
    pm.add_global_dead_code_eliminate_pass()
    pm.add_strip_dead_prototype_pass()
    pm.run(mod, llvm.create_pass_builder(_target_machine(), llvm.create_pipeline_tuning_options()))
    missing = [fn.name for fn in mod.functions if fn.is_declaration and not (
        fn.name.startswith("llvm.") or fn.name in PROVIDED or fn.name in LIBC)]
    return missing + [gv.name for gv in mod.global_variables if gv.is_declaration]


@functools.cache
def _target_machine():
    import llvmlite.binding as llvm
    from numba.core import config as nconfig
    from numba.core.registry import cpu_target

    codegen = cpu_target.target_context.codegen()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=codegen._get_host_cpu_name(), features=codegen._tm_features,
                                        opt=int(nconfig.OPT), reloc="pic", codemodel="default")


def build(workload=None, directory=None, log=print, functions=None) -> dict:
    """Build the library for the current sources and CPU; returns the manifest written.

    ``workload``: a callable ``workload(log) -> [failure notes]`` that runs the kernels once on real
    models (the command line passes :func:`workbench.cli.precompile_workload`; this package knows
    no models); ``functions``: instead of a workload, an explicit list of ``(lazy jitted function,
    [argument tuples])`` to call once each (tests)."""
    from . import jit as _jit
    from . import precompiled

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
        elif workload is not None:
            failed = list(workload(log))
        else:
            raise precompiled.PrecompileError("nothing to compile from: give a workload or functions")
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
            if max(_slots(specs, ret)) > MAX_SLOTS:
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: more than {MAX_SLOTS} values per call")
                continue
            symbol = f"workbench_kernel_{len(entries)}"
            try:
                mod = _entry_module(dispatcher, sig, specs, ret, symbol)
                missing = _checked_module(mod, symbol)
            except Exception as exc:
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            if missing:
                skipped.append(f"{name}{tuple(str(t) for t in sig)}: needs {', '.join(sorted(missing)[:4])} "
                               f"from numba's runtime")
                continue
            modules.append(mod)
            entries.append({"function": name, "symbol": symbol, "args": specs, "ret": ret,
                            "spec": spec_string(specs)})
    t_compile = time.perf_counter() - t0 - t_workload
    so, man = precompiled.library_paths(directory)
    so.parent.mkdir(parents=True, exist_ok=True)
    manifest = {"format": precompiled.FORMAT, "fingerprint": precompiled.fingerprint(), "entries": entries,
                "skipped": skipped, "workload_failures": failed,
                "seconds": {"workload": round(t_workload, 1), "compile": round(t_compile, 1)}}
    _link(modules, entries, so, cc)
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


def _shim_source(entries: list) -> str:
    """The C source of the library's Python module: :data:`SHIM` and the table of its entries."""
    lines = [SHIM]
    for e in entries:
        lines.append(f"extern int32_t {e['symbol']}(void **, int64_t *, double *);")
    rows = []
    for e in entries:
        ret = "-" if e["ret"] is None else LETTERS[e["ret"]]
        rows.append(f'    {{{e["symbol"]}, "{e["spec"]}", \'{ret}\'}},')
    lines.append(f"static const entry_t ENTRIES[] = {{\n{chr(10).join(rows) or '    {0, 0, 0},'}\n}};")
    lines.append(f"static const Py_ssize_t N_ENTRIES = {len(entries)};")
    lines.append(CONV_F32)
    lines.append(DEPTHWISE)
    lines.append(ELEMENTWISE)
    lines.append(SHIM_TAIL)
    return "\n".join(lines) + "\n"


def _link(modules, entries: list, so: Path, cc: str) -> None:
    """One object file for the entries and the allocator, one for the shim, linked into ``so``
    (replaced atomically)."""
    import sysconfig

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
        kernels_o, shim_c, shim_o = Path(tmp) / "kernels.o", Path(tmp) / "shim.c", Path(tmp) / "shim.o"
        kernels_o.write_bytes(obj)
        shim_c.write_text(_shim_source(entries))
        out = Path(tmp) / "kernels.so"
        steps = [[cc, "-O2", "-ffp-contract=off", "-fPIC", "-pthread", "-c", str(shim_c), "-o", str(shim_o), "-I",
                  sysconfig.get_paths()["include"], "-I", np.get_include()],
                 [cc, "-shared", "-pthread", "-o", str(out), str(kernels_o), str(shim_o), "-lm"]]
        for cmd in steps:
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise precompiled.PrecompileError(f"building the kernel library failed ({' '.join(cmd[:3])} ...):\n"
                                                  f"{proc.stderr[-2000:]}")
        partial = so.with_suffix(".so.tmp")
        shutil.copyfile(out, partial)
        os.replace(partial, so)
