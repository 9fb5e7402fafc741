"""The kernel library's float32 ADD / SUB / MUL loop (perf/native/elementwise.c through perf/elementwise.py):
every value's IEEE operation and clamp, the bits of numpy's, on vectors, tails and pieces of two threads;
arrays it does not take leave the output alone.  Its SUM / MEAN: the sequential sums.  Its SOFTMAX: the
teaching layer's Eigen arithmetic (kernels/_softmax.py) bit for bit.  Through the interpreter:
tests/interpreter/fast/test_fast_binary_float.py, test_fast_sum_float.py, test_fast_softmax_float.py."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.interpreter.kernels._softmax import softmax_float_eigen
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
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(1, 49, 1024), (2, 3, 17), (3, 1, 5), (1, 7, 16), (4, 5, 1), (1, 49, 1280),
                                   (300, 20, 3), (2, 40, 67), (2, 5, 163), (1, 40, 2048), (1200, 60, 1)])
def test_sum_f32_adds_in_memory_order_then_divides(shape, threads):
    """Eight vectors of B at a time, then one (163 = 128 + 35); a MobileNet's global pool (49 x 1024) on one
    thread; from 65 536 values on, pieces of B (or of A, where B is short) on two."""
    x = np.random.default_rng(shape[2]).standard_normal(int(np.prod(shape))).astype(np.float32) * 100
    x[:2] = [np.nan, -0.0][:x.size]
    for divisor in (0.0, float(shape[1])):
        out = np.full(shape[0] * shape[2], 7, np.float32)
        fn = elementwise.sum_function()
        assert fn(threads, x, out, np.array(shape, np.int64), np.array([divisor], np.float32)) == 0
        assert out.view(np.uint32).tobytes() == sequential_sums(x.reshape(shape), divisor).view(np.uint32).tobytes()
    bad_out = np.full(shape[0] * shape[2] + 1, 7, np.float32)
    assert fn(1, x, bad_out, np.array(shape, np.int64), np.array([0], np.float32)) == -1 and (bad_out == 7).all()
    assert fn(1, x, out, np.array([shape[0], 0, shape[2]], np.int64), np.array([0], np.float32)) == -1


needs_softmax = pytest.mark.skipif(elementwise.softmax_function() is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")


@needs_softmax
@pytest.mark.parametrize("shape", [(1, 1000), (3, 37), (5, 1), (7, 3), (2, 2, 17), (4, 16), (1, 4), (6, 5)])
@pytest.mark.parametrize("beta", [1.0, 0.37, -1.3, 1000.0])
def test_softmax_f32_is_the_teaching_layer(shape, beta):
    """Row lengths below, at and past a vector and a packet, every row offset mod 4, the values past the
    last whole packet of the flat tensor on expf; inputs up to 1e4 (exponents down to the flush to 0),
    a NaN row, +-inf, -0.0, 3e38; out a second array and x itself."""
    rng = np.random.default_rng(shape[-1])
    x = (rng.standard_normal(shape) * rng.choice([1, 10, 100, 1e4], shape)).astype(np.float32)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, 4)] = [np.inf, -np.inf, -0.0, 3e38]
    if shape[0] > 2:
        x.reshape(-1, shape[-1])[1, 0] = np.nan
    want = softmax_float_eigen(x, beta).reshape(-1)
    fn, n, b = elementwise.softmax_function(), np.array([shape[-1]], np.int64), np.array([beta], np.float32)
    out = np.full(x.size, 7, np.float32)
    assert fn(1, flat, out, n, b) == 0
    assert same_bits_but_nan_payloads(out, want)
    same = flat.copy()
    assert fn(1, same, same, n, b) == 0
    assert same_bits_but_nan_payloads(same, want)


def same_bits_but_nan_payloads(a, b):
    """Every value's bits, a NaN where the other has one of any sign and payload (the teaching layer's numpy
    and the C library's packet exp need not propagate the same NaN; LiteRT's bits are not matched either,
    tests/interpreter/test_float_softmax_bitexact.py)."""
    nan = np.isnan(a)
    return bool((nan == np.isnan(b)).all()) and a[~nan].view(np.uint32).tobytes() == b[~nan].view(np.uint32).tobytes()


@needs_softmax
def test_softmax_f32_exp_over_its_whole_range():
    """Rows [0, z, z', z''] (max 0, so each value is the packet exp of z over 1 + the others' sum), z from
    0 down past -104 (where it returns 0), the bounds themselves."""
    z = -np.random.default_rng(3).uniform(0, 110, 30_000).astype(np.float32)
    z[:4] = [-104.0, np.nextafter(np.float32(-104), np.float32(0)), -0.0, -87.33654]
    x = np.zeros((10_000, 4), np.float32)
    x[:, 1:] = z.reshape(-1, 3)
    out = np.empty(x.size, np.float32)
    assert elementwise.softmax_function()(1, x.reshape(-1), out, np.array([4], np.int64), np.ones(1, np.float32)) == 0
    assert out.view(np.uint32).tobytes() == softmax_float_eigen(x, 1.0).reshape(-1).view(np.uint32).tobytes()


@needs_softmax
def test_softmax_f32_arrays_it_does_not_take_leave_the_output_alone():
    fn, x, out = elementwise.softmax_function(), np.ones(20, np.float32), np.full(20, 7, np.float32)
    n, b = np.array([5], np.int64), np.ones(1, np.float32)
    for args in ((x, out, np.array([6], np.int64), b), (x, out, np.array([0], np.int64), b),   # rows that do not fit
                 (x, out[:19], n, b), (x, out, n, np.ones(2, np.float32)),
                 (x.astype(np.float64), out, n, b), (x, out, n.astype(np.int32), b)):
        assert fn(1, *args) == -1
    assert (out == 7).all()
