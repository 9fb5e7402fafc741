"""The kernel library's float fully connected layer for few rows (``fc_dot_f32``, perf/native/conv_f32.c):
its order of sums written out in numpy and compared bit for bit, on random shapes (depths below, at and
past the multiples of 16 and 64, odd unit counts, one to four rows); the same bits on one, two and three
threads; the clamp; the guard (1, output untouched); -1 and the output untouched for arrays it does not
take.  The fast
path that calls it is tested in tests/interpreter/fast/test_fast_fc_dot.py."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.interpreter.fast import fully_connected

fc_dot = fully_connected._dot_function()
needs_library = pytest.mark.skipif(fc_dot is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")


def fma(a, b, c):
    """a * b + c rounded once to float32 (the product of two float32 values is exact in float64)."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def lanes(v):
    """The 16 lanes' sum in the kernel's order: halves first (i + i + 8, then + 4, + 2, + 1)."""
    while v.shape[-1] > 1:
        half = v.shape[-1] // 2
        v = v[..., :half] + v[..., half:]
        v = v.astype(np.float32)
    return v[..., 0]


def expected(x, w, bias, lo, hi):
    """out[m, n] as the kernel sums it: four sums of 16 lanes over 64 values a step, what is left after
    the last multiple of 64 into the first sum 16 values a step (zeros past the depth), then
    (s0 + s1) + (s2 + s3), the lanes, + bias, the clamp (NaN kept)."""
    m, k = x.shape
    n = w.shape[0]
    k16 = -(-k // 16) * 16
    xp = np.zeros((m, k16), np.float32)
    xp[:, :k] = x
    wp = np.zeros((n, k16), np.float32)
    wp[:, :k] = w
    s = np.zeros((4, m, n, 16), np.float32)
    k64 = k // 64 * 64
    for j in range(0, k64, 64):
        for q in range(4):
            s[q] = fma(wp[None, :, j + 16 * q:j + 16 * q + 16], xp[:, None, j + 16 * q:j + 16 * q + 16], s[q])
    for j in range(k64, k16, 16):
        s[0] = fma(wp[None, :, j:j + 16], xp[:, None, j:j + 16], s[0])
    total = lanes((s[0] + s[1]) + (s[2] + s[3]))
    total = total + (bias if bias is not None else np.float32(0))
    return np.where(total < lo, np.float32(lo), np.where(total > hi, np.float32(hi), total)).astype(np.float32)


SHAPES = [(1, 1280, 1001), (1, 1024, 37), (2, 65, 17), (3, 63, 5), (4, 16, 1), (1, 1, 3), (2, 200, 64),
          (1, 129, 33)]


@needs_library
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_fc_dot_sums_in_its_documented_order_on_any_thread_count(m, k, n):
    rng = np.random.default_rng(m * 1000 + k + n)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    for bias, lo, hi in ((rng.standard_normal(n).astype(np.float32), -1.0, 6.0), (None, -np.inf, np.inf)):
        want = expected(x, w, bias, np.float32(lo), np.float32(hi))
        for threads in (1, 2, 3):
            out = np.full((m, n), 7.0, np.float32)
            assert fc_dot(threads, x, w, bias, out, lo, hi, np.inf) == 0
            assert out.tobytes() == want.tobytes(), f"{threads} threads, bias {bias is not None}"
    # against float64 sums: the order above is a sum, not something else
    np.testing.assert_allclose(want, x.astype(np.float64) @ w.T.astype(np.float64), rtol=1e-4, atol=1e-4 * k ** 0.5)


@needs_library
def test_fc_dot_clamps_and_its_guard_leaves_the_output_alone():
    """The clamp; the guard (as conv_f32's): an input value at or above the limit in magnitude, or a NaN,
    answers 1 before anything is written (the caller then takes the teaching layer's BLAS product)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 70)).astype(np.float32)
    w = rng.standard_normal((9, 70)).astype(np.float32)
    out = np.zeros((2, 9), np.float32)
    assert fc_dot(2, x, w, np.zeros(9, np.float32), out, -0.5, 0.5, 10.0) == 0
    assert out.min() == -0.5 and out.max() == 0.5
    for value, limit in ((np.nan, np.inf), (10.0, 10.0), (-11.0, 10.0), (np.inf, np.inf)):
        bad = x.copy()
        bad[1, 69] = value
        out[:] = 7.0
        assert fc_dot(2, bad, w, None, out, -np.inf, np.inf, limit) == 1
        assert (out == 7.0).all()


@needs_library
def test_fc_dot_refuses_arrays_it_does_not_take():
    x, w = np.ones((1, 8), np.float32), np.ones((3, 8), np.float32)
    out = np.full((1, 3), 7.0, np.float32)
    bad = [(x.astype(np.float64), w, None, out), (x, w.astype(np.float16), None, out),
           (x, np.ones((3, 9), np.float32), None, out), (x, w, None, np.full((2, 3), 7.0, np.float32)),
           (x, w, np.zeros(4, np.float32), out), (x, w, np.zeros(3, np.float64), out),
           (np.ones((1, 16), np.float32)[:, ::2], w, None, out), (x, w, None, np.full((1, 6), 7.0, np.float32)[:, ::2])]
    for args in bad:
        assert fc_dot(1, *args, -1.0, 1.0, np.inf) == -1
    read_only = np.full((1, 3), 7.0, np.float32)
    read_only.flags.writeable = False
    assert fc_dot(1, x, w, None, read_only, -1.0, 1.0, np.inf) == -1
    both = np.ones((1, 9), np.float32)          # out over the last values of x
    assert fc_dot(1, both[:, :8], w, None, both[:, 6:], -1.0, 1.0, np.inf) == -1
    assert (out == 7.0).all() and (read_only == 7.0).all()
    with pytest.raises(TypeError):
        fc_dot(1, x, w, None, out, -1.0, 1.0)
