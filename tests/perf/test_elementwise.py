"""The kernel library's float32 ADD / SUB / MUL loop (perf/native/elementwise.c through perf/elementwise.py):
every value's IEEE operation and clamp, the bits of numpy's, on vectors, tails and pieces of two threads;
arrays it does not take leave the output alone.  Through the interpreter: tests/interpreter/fast/
test_fast_binary_float.py."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.perf import elementwise

needs_library = pytest.mark.skipif(elementwise.binary_function() is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")
NUMPY = {elementwise.ADD: np.add, elementwise.SUB: np.subtract, elementwise.MUL: np.multiply}


@needs_library
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 40_000, 100_003])
@pytest.mark.parametrize("op", sorted(NUMPY))
def test_binary_f32_is_numpy_then_the_clamp(op, n, threads):
    rng = np.random.default_rng(n + op)
    a = rng.standard_normal(n).astype(np.float32) * 4
    b = rng.standard_normal(n).astype(np.float32) * 4
    a[:4] = [np.nan, -0.0, np.inf, 3e38][:n]
    b[:4] = [1.0, 0.0, -np.inf, 3e38][:n]
    for lo, hi in ((-np.inf, np.inf), (0.0, 6.0), (-1.0, 1.0)):
        out = np.full(n, 7, np.float32)
        with np.errstate(all="ignore"):
            v = NUMPY[op](a, b)
        want = np.where(v < lo, np.float32(lo), np.where(v > hi, np.float32(hi), v)).astype(np.float32)
        assert elementwise.binary_function()(threads, a, b, out, np.array([lo, hi], np.float32), op) == 0
        assert out.view(np.uint32).tobytes() == want.view(np.uint32).tobytes(), (lo, hi)


@needs_library
def test_arrays_it_does_not_take_leave_the_output_alone():
    fn = elementwise.binary_function()
    a, b, out = np.ones(20, np.float32), np.ones(20, np.float32), np.full(20, 7, np.float32)
    clamp = np.array([-1, 1], np.float32)
    for args in ((a, b[:19], out, clamp, 0), (a, b, out[::2], clamp, 0), (a.astype(np.float64), b, out, clamp, 0),
                 (a, b, out, clamp[:1], 0), (a, b, out, clamp, 3), (a.reshape(4, 5), b, out, clamp, 0)):
        assert fn(1, *args) == -1
    assert (out == 7).all()
    with pytest.raises(TypeError):
        fn(1, a, b, out, clamp)


def sequential_sums(x3, divisor):
    want = x3[:, 0, :].copy()
    for r in range(1, x3.shape[1]):
        want = (want + x3[:, r, :]).astype(np.float32)
    if divisor:
        want = (want / np.float32(divisor)).astype(np.float32)
    return want.reshape(-1)


@pytest.mark.skipif(elementwise.sum_function() is None,
                    reason="no kernel library with AVX-512 here (make kernels builds it)")
@pytest.mark.parametrize("shape", [(1, 49, 1024), (2, 3, 17), (3, 1, 5), (1, 7, 16), (4, 5, 1)])
def test_sum_f32_adds_in_memory_order_then_divides(shape):
    x = np.random.default_rng(shape[2]).standard_normal(int(np.prod(shape))).astype(np.float32) * 100
    x[:2] = [np.nan, -0.0][:x.size]
    for divisor in (0.0, float(shape[1])):
        out = np.full(shape[0] * shape[2], 7, np.float32)
        fn = elementwise.sum_function()
        assert fn(1, x, out, np.array(shape, np.int64), np.array([divisor], np.float32)) == 0
        assert out.view(np.uint32).tobytes() == sequential_sums(x.reshape(shape), divisor).view(np.uint32).tobytes()
    bad_out = np.full(shape[0] * shape[2] + 1, 7, np.float32)
    assert fn(1, x, bad_out, np.array(shape, np.int64), np.array([0], np.float32)) == -1 and (bad_out == 7).all()
    assert fn(1, x, out, np.array([shape[0], 0, shape[2]], np.int64), np.array([0], np.float32)) == -1
