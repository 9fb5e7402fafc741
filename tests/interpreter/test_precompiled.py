"""The precompiled kernel library (workbench.perf.precompiled).

Each test builds its own library in a temporary directory, from the probe functions of
tests/helpers/precompiled_probe.py (one part of the C entries each); the sample-model test uses the
library ``make kernels`` built for these sources, or builds one from the sample models when there is none.
The library must give bit-for-bit what numba gives, raise numba's exceptions, hand anything it lacks
to numba, be ignored when it was built for other sources, and let a model run with no numba in
the process at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import precompiled_probe as probe
from workbench.perf import jit as _jit
from workbench.perf import precompiled
from workbench.perf.jit import run_rows

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"
DEFAULT_DIR = precompiled.library_dir()      # read before any test here points the process elsewhere


def _readonly(a):
    a.setflags(write=False)
    return a


# one value of every kind of argument an entry can take
TOUCHED = [np.zeros((2, 3), np.float32), np.zeros(4, np.int8), np.zeros((1, 1, 2), np.uint16), np.zeros(3),
           np.zeros((2, 2), bool), np.zeros(5, np.int64), np.zeros(2, np.uint32), _readonly(np.zeros(4, np.float32)),
           3, 2.5, True, np.float32(1), np.float64(2), np.int32(1), np.int64(1), np.uint8(1), np.int16(-2),
           np.uint64(7), np.bool_(True)]


@pytest.fixture(scope="module")
def probe_library(tmp_path_factory):
    old = os.environ.get("WORKBENCH_KERNELS_DIR")
    d = tmp_path_factory.mktemp("kernels")
    probe.use_library(d)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    manifest = precompiled.build(functions=[
        (probe.scaled_rows, [(x, np.empty_like(x), np.float32(0.5), 1.0, True, 0, 3)]),
        (probe.checked_total, [(np.arange(5, dtype=np.int64), 10)]),
        (probe.checked_double, [(np.arange(5, dtype=np.int64), np.empty(5, np.int64), 10)]),
        (probe.prefix_max, [(np.array([1.0, 3.0, 2.0]), np.empty(3))]),
        (probe.mean_f32, [(np.ones(4, np.float32),)]),
        (probe.growing_list, [(5, np.empty(5))]),
        (probe.touch, [(v,) for v in TOUCHED]),
    ], directory=d, log=lambda *_: None)
    probe.use_library(d)
    yield d, manifest
    probe.use_library(old)


def _numba(lazy):
    return lazy.compile()


def test_manifest_names_entries_and_what_is_left_to_numba(probe_library):
    d, manifest = probe_library
    so, man = precompiled.library_paths(d)
    assert so.exists() and json.loads(man.read_text()) == manifest
    assert manifest["fingerprint"] == precompiled.fingerprint()
    names = sorted({e["function"].split(":")[1] for e in manifest["entries"]})
    assert names == ["checked_double", "checked_total", "mean_f32", "prefix_max", "scaled_rows", "touch"]
    (left,) = manifest["skipped"]
    assert left.startswith("helpers.precompiled_probe:growing_list") and "NRT_MemInfo_" in left
    entry = next(e for e in manifest["entries"] if e["function"].endswith("scaled_rows"))
    assert entry["args"] == [["array", "<f4", 2, False], ["array", "<f4", 2, False], ["scalar", "<f4"],
                             ["scalar", "<f8"], ["scalar", "|b1"], ["scalar", "<i8"], ["scalar", "<i8"]]
    assert entry["spec"] == "af2af2sf0sd0s?0sq0sq0" and entry["ret"] is None


@pytest.mark.parametrize("clamp", [True, False])
def test_arrays_and_scalars_equal_numba_bit_for_bit(probe_library, clamp):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((37, 19)).astype(np.float32) * 3
    ours, ref = np.full_like(x, np.nan), np.full_like(x, np.nan)
    probe.scaled_rows(x, ours, np.float32(0.37), -0.25, clamp, 3, 30)
    assert isinstance(probe.scaled_rows._impl, precompiled.Precompiled)
    _numba(probe.scaled_rows)(x, ref, np.float32(0.37), -0.25, clamp, 3, 30)
    assert ours.tobytes() == ref.tobytes()
    assert np.isnan(ours[:3]).all() and np.isnan(ours[30:]).all()      # only rows 3..30 written


def test_threads_share_rows_through_the_library(probe_library):
    x = np.random.default_rng(2).standard_normal((4096, 600)).astype(np.float32)
    ours, ref = np.empty_like(x), np.empty_like(x)
    run_rows(probe.scaled_rows, x.shape[0], 2, x, ours, np.float32(1.5), 0.5, False, work=1 << 30)
    _numba(probe.scaled_rows)(x, ref, np.float32(1.5), 0.5, False, 0, x.shape[0])
    assert ours.tobytes() == ref.tobytes()


def test_rows_on_the_librarys_own_pool(probe_library, monkeypatch):
    """run_rows hands a library kernel's row pieces to the library's C thread pool (no Python in
    between); the pieces write exactly what one call writes, also when several Python threads use
    the pool at once (one gets it, the others run their pieces themselves)."""
    import threading

    monkeypatch.setattr(_jit, "MIN_PARALLEL_WORK", 0)
    monkeypatch.setattr(_jit, "MIN_POOL_WORK", 0)
    pre = precompiled.for_function(probe.scaled_rows)
    x = np.random.default_rng(5).standard_normal((1001, 37)).astype(np.float32)
    ref = np.empty_like(x)
    _numba(probe.scaled_rows)(x, ref, np.float32(0.75), -1.5, True, 0, x.shape[0])
    for threads, align in ((2, 1), (3, 1), (2, 8), (16, 3)):
        out = np.full_like(x, np.nan)
        assert pre.rows(threads, x.shape[0], align, x, out, np.float32(0.75), -1.5, True)
        assert out.tobytes() == ref.tobytes(), (threads, align)
    # what no entry takes goes back to Python's pool and numba
    assert not pre.rows(2, 5, 1, x[:, ::2], np.empty((1001, 19), np.float32), np.float32(1), 0.0, False)
    outs = [np.full_like(x, np.nan) for _ in range(4)]
    workers = [threading.Thread(target=run_rows, args=(probe.scaled_rows, x.shape[0], 2, x, o, np.float32(0.75),
                                                       -1.5, True)) for o in outs]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert all(o.tobytes() == ref.tobytes() for o in outs)


def test_openblas_jobs_go_to_the_pool(probe_library):
    """With 2 threads OpenBLAS hands its jobs to the library's pool (when its build has the hook):
    the products are those of one thread."""
    from workbench.perf import blas as _blas

    a = np.random.default_rng(6).standard_normal((700, 300)).astype(np.float32)
    w = np.random.default_rng(7).standard_normal((300, 200)).astype(np.float32)
    import threading

    _blas.set_threads(1)
    one = a @ w
    try:
        _blas.set_threads(2)
        two = a @ w
        _blas.set_threads(4)                # more jobs than CPUs: each still gets its own thread
        four = a @ w
        both = [None, None]                 # two Python threads in OpenBLAS at once: they queue up

        def product(k):
            both[k] = a @ w

        workers = [threading.Thread(target=product, args=(k,)) for k in range(2)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
    finally:
        _blas.set_threads(1)
    for got in (two, four, *both):
        np.testing.assert_allclose(got, one, rtol=1e-5, atol=1e-4)
    if _blas.available():
        assert _blas._handed_over == 2


def test_first_calls_from_several_threads_all_find_the_library(probe_library, monkeypatch):
    """run_rows makes the first call of a kernel on several threads at once: none of them may see
    the library as absent while another thread is still loading it."""
    import threading
    import time

    d, _ = probe_library
    probe.use_library(d)
    slow = precompiled._load

    def load():
        time.sleep(0.2)
        return slow()

    monkeypatch.setattr(precompiled, "_load", load)
    found = []
    workers = [threading.Thread(target=lambda: found.append(precompiled.for_function(probe.scaled_rows)))
               for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(found) == 3 and all(isinstance(f, precompiled.Precompiled) for f in found)


def test_scalar_results(probe_library):
    assert probe.checked_total(np.arange(7, dtype=np.int64), 10) == 21
    v = probe.mean_f32(np.array([0.1, 0.2, 0.7], np.float32))
    assert isinstance(probe.mean_f32._impl, precompiled.Precompiled)
    assert np.float32(v) == np.float32(_numba(probe.mean_f32)(np.array([0.1, 0.2, 0.7], np.float32)))


def test_arrays_the_kernel_allocates(probe_library):
    out = np.empty(6)
    probe.prefix_max(np.array([2.0, -1.0, 5.0, 4.0, 9.0, 0.0]), out)
    assert isinstance(probe.prefix_max._impl, precompiled.Precompiled)
    assert out.tolist() == [2.0, 2.0, 5.0, 5.0, 9.0, 9.0]
    for n in (0, 1, 1000):                          # many allocations and frees, empty ones too
        x = np.random.default_rng(n).standard_normal(n)
        out = np.empty(n)
        probe.prefix_max(x, out)
        assert np.array_equal(out, np.maximum.accumulate(x))


def test_an_exception_in_the_kernel_is_numbas_exception(probe_library):
    with pytest.raises(ValueError, match="more elements than the limit"):
        probe.checked_total(np.arange(50, dtype=np.int64), 10)
    assert probe.checked_total(np.arange(4, dtype=np.int64), 10) == 6      # and the entry still works


def test_a_prepared_run_calls_entries_that_answer_none_and_stops_where_one_raises(probe_library):
    """In a prepared run (interpreter/fused.py) a library call of a kernel that answers None runs its entry from
    slots filled once; one that answers a value stays a Python call; a kernel that raises stops the run at
    its call (run_calls answers that index, no exception: the node's own path then raises numba's)."""
    from workbench.interpreter import fused

    prepare, run = fused.prepare_run_function(), fused.run_calls_function()
    if prepare is None or precompiled.native("prepared_calls", lambda fn: True) is None:
        pytest.skip("a library without prepare_run")
    x, out = np.arange(5, dtype=np.int64), np.zeros(5, np.int64)
    big, big_out = np.arange(50, dtype=np.int64), np.zeros(50, np.int64)
    double = _jit.library_call(probe.checked_double, x, out, 10)
    total = _jit.library_call(probe.checked_total, x, 10)
    raises = _jit.library_call(probe.checked_double, big, big_out, 10)
    capsule = prepare((double, total, double, raises, double))
    assert precompiled.native("prepared_calls", lambda fn: True)(capsule) == (True, False, True, True, True)
    assert run(capsule, 2) == 3 and out.tolist() == [0, 2, 4, 6, 8] and not big_out.any()
    out[...] = 0
    assert run(capsule, 0) == 1 and out.tolist() == [0, 2, 4, 6, 8]      # the total answers 10: stops there
    assert run(capsule, 4) == 5
    with pytest.raises(ValueError, match="more elements than the limit"):
        probe.checked_double(big, big_out, 10)


def test_what_the_library_lacks_goes_to_numba(probe_library):
    x = np.arange(40, dtype=np.float32).reshape(5, 8)
    view = x[:, ::2]                                   # not C-contiguous: no entry takes it
    ours, ref = np.empty((5, 4), np.float32), np.empty((5, 4), np.float32)
    assert precompiled.library().match(probe.scaled_rows, view, ours, np.float32(2.0), 1.0, False, 0, 5) == -1
    probe.scaled_rows(view, ours, np.float32(2.0), 1.0, False, 0, 5)
    np.testing.assert_array_equal(ours, view * 2 + 1)
    x64 = x.astype(np.float64)                         # a dtype the workload never passed
    out64 = np.empty_like(x64)
    probe.scaled_rows(x64, out64, 2.0, 1.0, False, 0, 5)
    np.testing.assert_array_equal(out64, x64 * 2 + 1)
    out = np.empty(4)
    probe.growing_list(4, out)                         # left to numba at build time
    assert out.tolist() == [0.0, 1.0, 3.0, 6.0]
    assert not isinstance(probe.growing_list._impl, precompiled.Precompiled)
    del ref


def test_a_library_for_other_sources_is_ignored(tmp_path):
    old = os.environ.get("WORKBENCH_KERNELS_DIR")
    try:
        probe.use_library(tmp_path)
        so, man = precompiled.library_paths(tmp_path)
        so.write_bytes(b"not a shared library")
        man.write_text(json.dumps({"format": precompiled.FORMAT, "fingerprint": "0" * 64, "entries": []}))
        assert precompiled.library() is None
        assert precompiled.status()["in_use"] is False
        man.write_text("{ broken")
        precompiled.forget()
        assert precompiled.library() is None
        # the right fingerprint, but a file that is no shared library: ignored, not an error
        man.write_text(json.dumps({"format": precompiled.FORMAT, "fingerprint": precompiled.fingerprint(),
                                   "entries": [{"function": "x:y", "symbol": "s", "args": [], "ret": None}]}))
        precompiled.forget()
        assert precompiled.library() is None
        x = np.ones((2, 3), np.float32)
        out = np.empty_like(x)
        probe.scaled_rows(x, out, np.float32(2.0), 0.0, False, 0, 2)
        assert (out == 2).all()
    finally:
        probe.use_library(old)


def test_the_library_takes_exactly_what_numba_types_alike(probe_library):
    """Each value goes to the entry built for numba's type of it (dtype, dimensions, writability;
    a Python int is int64, a float float64, a bool a boolean); what numba would type otherwise, or
    what an entry cannot read safely, goes to numba (match -1)."""
    numba = pytest.importorskip("numba")
    from workbench.perf.build import _spec, spec_string

    lib = precompiled.library()
    entries = lib.manifest["entries"]
    for v in TOUCHED:
        k = lib.match(probe.touch, v)
        assert k >= 0 and entries[k]["spec"] == spec_string([_spec(numba.typeof(v))]), (v, k)
    x = np.zeros((3, 4), np.float32)
    misaligned = np.frombuffer(bytearray(17), np.float32, count=4, offset=1)
    others = [x[:, ::2], x.T, misaligned, np.zeros(3, ">f4"), np.zeros((), np.float32), np.zeros(3, np.float16),
              np.float16(1), 2 ** 63, np.complex64(1), "3", None, (1, 2)]
    for v in others:
        assert lib.match(probe.touch, v) == -1, v
        try:                                           # numba takes it, or refuses it as numba does
            assert probe.touch(v) == 0
        except (TypeError, OverflowError, NotImplementedError, numba.core.errors.NumbaError):
            pass
    assert lib.match(probe.touch, _readonly(np.zeros(3))) == -1        # the float64 entry may write its array
    assert entries[lib.match(probe.touch, np.zeros(4, np.float32))]["spec"] == "rf1"   # a reading one takes any


CHILD = r"""
import json, os, sys
import numpy as np
from workbench.bench import random_inputs
from workbench.interpreter import Interpreter
from workbench.perf import precompiled
out = {}
for k, path in enumerate(sys.argv[1:]):
    it = Interpreter(model_path=path)
    it.allocate_tensors()
    details = it.get_input_details()
    for d, x in zip(details, random_inputs(details, seed=3)):
        it.set_tensor(d["index"], x)
    it.invoke()
    saved = os.path.join(os.environ["OUTPUTS_DIR"], f"{k}.npz")
    np.savez(saved, *[np.asarray(it.get_tensor(d["index"])) for d in it.get_output_details()])
    out[path] = saved
print(json.dumps({"outputs": out, "numba": "numba" in sys.modules, "llvmlite": "llvmlite" in sys.modules,
                  "library": precompiled.library() is not None}))
"""


def _child(models, env, outputs_dir):
    outputs_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-c", CHILD, *map(str, models)], capture_output=True, text=True,
                          env={**os.environ, **env, "OUTPUTS_DIR": str(outputs_dir)}, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _assert_same_outputs(a: dict, b: dict) -> None:
    """Integer outputs bit for bit; float ones within float32 rounding of each other (the library's
    float convolution sums in another order than the BLAS product numba's path calls)."""
    assert a.keys() == b.keys()
    for path in a:
        with np.load(a[path]) as one, np.load(b[path]) as other:
            assert one.files == other.files, path
            for name in one.files:
                x, y = one[name], other[name]
                assert x.dtype == y.dtype and x.shape == y.shape, (path, name)
                if x.dtype.kind == "f":
                    scale = float(np.nanmax(np.abs(y))) if np.isfinite(y).any() else 1.0
                    np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5 * max(scale, 1.0), err_msg=path)
                else:
                    assert x.tobytes() == y.tobytes(), (path, name)


# models whose numba kernels (float and int8 depthwise, VNNI int8 conv, pools, 8-bit softmax,
# requantization, hybrid conv, 16x8 paths, transpose-conv col2im) the workload covers
NO_NUMBA = ["mobilenet_v3_block_float", "mobilenet_v3_block_int8", "resnet_block_int8", "unet_tiny_int8",
            "resnet_block_int16x8", "ssd_head_int16x8", "transformer_tiny_dynamic", "unet_tiny_float"]


def _sample_library(tmp_path, models) -> dict:
    """Environment for children that use a library holding the sample models' kernels: the one ``make
    kernels`` built (``workbench precompile --if-needed --models sample_models …``) when it is there for
    these sources, else one built here, in ``tmp_path``, from the sample models alone."""
    so, man = precompiled.library_paths(DEFAULT_DIR)
    if so.exists() and man.exists() and not json.loads(man.read_text()).get("skipped"):
        return {"WORKBENCH_KERNELS_DIR": str(DEFAULT_DIR)}
    env = {"WORKBENCH_KERNELS_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "workbench.cli", "precompile", "--only", "--json",
                           *map(str, models)], capture_output=True, text=True, env={**os.environ, **env},
                          cwd=ROOT, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status = json.loads(proc.stdout)
    assert status["built"] and status["in_use"] and status["entries"] >= 15, status
    assert status["left_to_numba"] == []
    return env


def test_sample_models_run_without_numba_and_equal_numba(tmp_path):
    models = [p for p in sorted(SAMPLES.glob("*.tflite")) if p.stem not in ("string_ops", "strided_slice_masks")]
    env = _sample_library(tmp_path, models)
    with_library = _child(models, env, tmp_path / "library")
    assert with_library["library"]
    without = _child(models, {**env, "WORKBENCH_PRECOMPILED": "0"}, tmp_path / "numba")
    assert without["numba"] and not without["library"]
    _assert_same_outputs(with_library["outputs"], without["outputs"])
    # all of them in one process: numba is imported there when any one of them needs it
    alone = _child([SAMPLES / f"{name}.tflite" for name in NO_NUMBA], env, tmp_path / "alone")
    assert alone["library"] and not alone["numba"] and not alone["llvmlite"], alone
