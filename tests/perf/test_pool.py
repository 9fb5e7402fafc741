"""The precompiled library's thread pool (workbench/perf/native/shim_head.c, ``pool_run``), for
correctness only (speed is measured by benchmarks/bench_vs_xnnpack.py): row pieces claimed by
whichever thread asks first write exactly what one call writes, job after job, for any row count,
alignment and thread count; OpenBLAS's jobs (each on its own thread) interleave with them; several
Python threads may use the pool at once."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from helpers import precompiled_probe as probe
from workbench.perf import precompiled


@pytest.fixture(scope="module")
def rows_kernel(tmp_path_factory):
    """``probe.scaled_rows`` from a library of its own (one entry: a few seconds to build)."""
    old = os.environ.get("WORKBENCH_KERNELS_DIR")
    d = tmp_path_factory.mktemp("pool_kernels")
    probe.use_library(d)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    precompiled.build(functions=[(probe.scaled_rows, [(x, np.empty_like(x), np.float32(0.5), 1.0, True, 0, 3)])],
                      directory=d, log=lambda *_: None)
    probe.use_library(d)
    pre = precompiled.for_function(probe.scaled_rows)
    assert pre is not None
    yield pre
    probe.use_library(old)


def _reference(x):
    ref = np.empty_like(x)
    probe.scaled_rows.compile()(x, ref, np.float32(0.75), -1.5, True, 0, x.shape[0])
    return ref


def test_every_row_count_and_alignment_gets_every_row_once(rows_kernel):
    """Job after job on the same workers (a worker may still be finishing the previous one): rows
    from 1 to 70, alignments 1 to 4, 2 to 5 threads (more than the CPUs included)."""
    x = np.random.default_rng(11).standard_normal((70, 13)).astype(np.float32)
    ref = _reference(x)
    for total in range(1, 71):
        for align in (1, 2, 3, 4):
            for threads in (2, 3, 5):
                out = np.full((total, 13), np.nan, np.float32)
                assert rows_kernel.rows(threads, total, align, x[:total], out, np.float32(0.75), -1.5, True)
                assert out.tobytes() == ref[:total].tobytes(), (total, align, threads)


def test_openblas_jobs_between_row_jobs(rows_kernel, monkeypatch):
    """OpenBLAS's jobs (handed to the same pool when its build has the hook and products are shared)
    and row pieces, one after the other: both kinds of job complete with the right values."""
    from workbench.perf import blas as _blas

    monkeypatch.setattr(_blas, "SHARE_PRODUCTS", True)
    monkeypatch.setattr(_blas, "_current", None)

    rng = np.random.default_rng(12)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    w = rng.standard_normal((200, 150)).astype(np.float32)
    x = rng.standard_normal((257, 9)).astype(np.float32)
    ref = _reference(x)
    _blas.set_threads(1)
    one = a @ w
    try:
        _blas.set_threads(2)
        for _ in range(20):
            out = np.full_like(x, np.nan)
            assert rows_kernel.rows(2, x.shape[0], 1, x, out, np.float32(0.75), -1.5, True)
            assert out.tobytes() == ref.tobytes()
            np.testing.assert_allclose(a @ w, one, rtol=1e-5, atol=1e-4)
        if _blas.available():
            assert _blas.get_threads() == 2
    finally:
        _blas.set_threads(1)


def test_products_stay_on_one_thread_without_sharing(monkeypatch):
    """With SHARE_PRODUCTS off, num_threads = 2 leaves OpenBLAS on one thread (its jobs would wait for
    each other when the second core is busy)."""
    from workbench.perf import blas as _blas

    monkeypatch.setattr(_blas, "_current", None)
    monkeypatch.setattr(_blas, "SHARE_PRODUCTS", False)
    try:
        _blas.set_threads(2)
        assert _blas.get_threads() == (1 if _blas.available() else None)
    finally:
        _blas.set_threads(1)


def test_python_threads_share_the_pool(rows_kernel):
    """Four Python threads, each running jobs: whoever holds the pool shares its rows, the others run
    theirs alone; every output is exact."""
    x = np.random.default_rng(13).standard_normal((501, 11)).astype(np.float32)
    ref = _reference(x)
    bad = []

    def jobs(k):
        for _ in range(25):
            out = np.full_like(x, np.nan)
            rows_kernel.rows(2 + k % 2, x.shape[0], 1 + k % 3, x, out, np.float32(0.75), -1.5, True)
            if out.tobytes() != ref.tobytes():
                bad.append(k)

    workers = [threading.Thread(target=jobs, args=(k,)) for k in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not bad


@pytest.mark.parametrize("m,k,n", [(49, 96, 160), (1, 300, 1000), (7, 5, 3), (200, 24, 40), (3, 64, 70)])
def test_gemm_split_is_the_product(rows_kernel, m, k, n):
    """``gemm_split`` (native/shim_tail.c) through ``blas.matmul``: cut by output columns or by rows,
    right matrix laid out by rows or by columns, on 1, 2 and 3 threads: numpy's product."""
    from workbench.perf import blas

    blas._gemm = None
    g = blas._gemm_split()
    assert blas.available() and g, "numpy's OpenBLAS with cblas_sgemm and the library's gemm_split"
    rng = np.random.default_rng(m * 1000 + n)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    for b in (rng.uniform(-1, 1, (k, n)).astype(np.float32), np.asfortranarray(rng.uniform(-1, 1, (k, n)),
                                                                                np.float32)):
        want = np.matmul(a, b)
        for threads in (1, 2, 3):
            out = np.full((m, n), np.nan, np.float32)
            assert g[0](g[1], g[2], g[3], 1, threads, a, b, out) is True
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5, err_msg=f"{threads} threads")
            out[:] = np.nan
            blas.matmul(a, b, out, threads)
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5, err_msg=f"blas.matmul, {threads} threads")
    # arrays it does not take: the caller multiplies another way
    assert g[0](g[1], g[2], g[3], 1, 2, a.astype(np.float64), b, np.empty((m, n), np.float32)) is False
    assert g[0](g[1], g[2], g[3], 1, 2, a, b, np.empty((m + 1, n), np.float32)) is False
    blas._gemm = None


@pytest.mark.parametrize("m,k,n", [(1, 512, 300), (2, 300, 1000), (64, 40, 24), (3, 7, 5)])
def test_fc_f32_is_the_product_then_bias_and_clamp(rows_kernel, m, k, n):
    """``fc_f32`` (native/shim_tail.c): ``gemm_split``'s pieces, each adding the bias and clamping its part
    of the output: bit for bit the product then ``float_epilogue_rows`` (what the float FULLY_CONNECTED's
    own call does), with a bias or none (+ 0.0), a NaN kept, on 1, 2 and 3 threads; arrays it does not take
    answer -1 and leave the output alone.  ``blas.fc_call`` offers it only where ``matmul`` cuts."""
    import ctypes

    from workbench.interpreter.fast.conv_2d import float_epilogue_rows
    from workbench.perf import blas, precompiled

    blas._gemm = None
    g = blas._gemm_split()
    assert blas.available() and g, "numpy's OpenBLAS with cblas_sgemm and the library's gemm_split"
    fc = precompiled.library().module.fc_f32
    head = (g[1], g[2], g[3], ctypes.cast(blas._getter, ctypes.c_void_p).value)
    rng = np.random.default_rng(m * 7 + n)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    if n > 100:
        a[0, 0] = np.nan
    b = np.asfortranarray(rng.uniform(-1, 1, (k, n)), np.float32)
    out = np.empty((m, n), np.float32)
    call = blas.fc_call(a, b, out, 2, None, -0.5, 6.0)
    assert (call is None) == (m * k * n < blas.MIN_SPLIT_WORK)
    assert call is None or (call[0] is fc and call[1][:4] == head)
    assert blas.fc_call(a, b, out, 1, None, -0.5, 6.0) is None
    for bias in (rng.uniform(-2, 2, n).astype(np.float32), None):
        for threads in (1, 2, 3):
            want = np.full((m, n), np.nan, np.float32)
            assert g[0](g[1], g[2], g[3], 1, threads, a, b, want) is True
            float_epilogue_rows(want, bias if bias is not None else np.zeros(n, np.float32), np.float32(-0.5),
                                np.float32(6.0), 0, m)
            out[:] = np.nan
            assert fc(*head, threads, a, b, out, bias, -0.5, 6.0) == 0
            assert out.tobytes() == want.tobytes(), f"{threads} threads, bias {bias is not None}"
    out[:] = 7.0
    assert fc(*head, 2, a, b, out, np.zeros(n + 1, np.float32), -0.5, 6.0) == -1      # a bias of another length
    assert fc(*head, 2, a, b, out, np.zeros(n, np.float64), -0.5, 6.0) == -1          # not float32
    assert fc(*head, 2, a.astype(np.float64), b, out, None, -0.5, 6.0) == -1
    assert fc(*head, 2, a, b, np.empty((m + 1, n), np.float32), None, -0.5, 6.0) == -1
    assert (out == 7.0).all()
    blas._gemm = None
