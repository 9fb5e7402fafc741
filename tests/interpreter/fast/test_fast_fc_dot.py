"""The float FULLY_CONNECTED of the speed layer for a row or a few (fast/fully_connected.py: ``FloatDot``,
the kernel library's ``fc_dot_f32``): chosen at prepare for constant weights and up to ``DOT_MAX_ROWS``
rows; the BLAS product (``FloatBlas``) for more rows, weights computed at run time, or without the
library; the BLAS product again where the library refuses the arrays or its guard is raised at invoke
(then the teaching layer's bits).  Values: the teaching layer's within float tolerance, one bit pattern
for any thread count."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.interpreter import Interpreter
from workbench.interpreter.fast import fully_connected as fast_fc
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import FullyConnectedOptions, ModelBuilder

needs_library = pytest.mark.skipif(fast_fc._dot_function() is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")


def model(rows, depth=300, units=77, act=Act.RELU, bias=True, weights_input=False):
    rng = np.random.default_rng(rows * 31 + depth)
    b = ModelBuilder()
    x = b.input("x", (rows, depth))
    w = (b.input("w", (units, depth)) if weights_input
         else b.constant("w", rng.standard_normal((units, depth)).astype(np.float32) * 0.1))
    ins = [x, w, b.constant("b", rng.standard_normal(units).astype(np.float32)) if bias else -1]
    y = b.tensor("y", (rows, units))
    b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act))
    b.output(y)
    feeds = [rng.uniform(-1, 1, (rows, depth)).astype(np.float32)]
    if weights_input:
        feeds.append(rng.standard_normal((units, depth)).astype(np.float32) * 0.1)
    return b.build(), feeds


def run(m, feeds, **kw):
    it = Interpreter(model=m, **kw)
    it.allocate_tensors()
    for d, v in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], v)
    it.invoke()
    return it, it.get_tensor(it.get_output_details()[0]["index"])


@needs_library
@pytest.mark.parametrize("rows,depth,units,act,bias", [(1, 1280, 1001, Act.NONE, True), (2, 65, 17, Act.RELU6, True),
                                                        (4, 33, 5, Act.RELU_N1_TO_1, False)])
def test_a_few_rows_take_one_dot_product_an_output(rows, depth, units, act, bias):
    m, feeds = model(rows, depth, units, act, bias)
    want = run(m, feeds, reference=True)[1]
    got = {}
    for threads in (1, 2, 3):
        it, got[threads] = run(m, feeds, num_threads=threads)
        assert type(it._sg().fast[0]) is fast_fc.FloatDot and it._sg().fast[0].name == "dot(avx512)"
    assert got[1].tobytes() == got[2].tobytes() == got[3].tobytes()
    np.testing.assert_allclose(got[1], want, rtol=1e-5, atol=1e-5)


def test_more_rows_run_time_weights_or_no_library_take_the_blas_product(monkeypatch):
    for m, feeds in (model(fast_fc.DOT_MAX_ROWS + 1), model(1, weights_input=True)):
        it, got = run(m, feeds)
        assert type(it._sg().fast[0]) is fast_fc.FloatBlas
        np.testing.assert_allclose(got, run(m, feeds, reference=True)[1], rtol=1e-5, atol=1e-5)
    monkeypatch.setattr(fast_fc, "_dot_function", lambda: None)
    m, feeds = model(1)
    it, got = run(m, feeds)
    assert type(it._sg().fast[0]) is fast_fc.FloatBlas
    np.testing.assert_allclose(got, run(m, feeds, reference=True)[1], rtol=1e-5, atol=1e-5)


@needs_library
def test_arrays_the_library_refuses_take_the_blas_product():
    m, feeds = model(2)
    it, _ = run(m, feeds)
    path = it._sg().fast[0]
    calls = []
    real = path.fn

    def refusing(*args):
        calls.append(args)
        args[4][...] = np.nan           # so that an output the fallback did not write shows
        return -1
    path.fn = refusing
    it.invoke()
    path.fn = real
    assert len(calls) == 1
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), run(m, feeds, reference=True)[1],
                               rtol=1e-5, atol=1e-5)


@needs_library
@pytest.mark.parametrize("value", [np.nan, 3e37, -np.inf])
def test_a_raised_guard_takes_the_blas_product_with_the_teaching_layers_bits(value):
    """An input value that could make a reordered partial sum overflow (or a NaN): the library answers 1
    without writing, and the BLAS product runs: the teaching layer's bits (litert-x86: numpy's product)."""
    m, feeds = model(2, depth=65, units=17, act=Act.NONE)
    feeds[0][1, 7] = value
    for threads in (1, 2):
        it, got = run(m, feeds, num_threads=threads)
        assert type(it._sg().fast[0]) is fast_fc.FloatDot
        assert got.tobytes() == run(m, feeds, reference=True)[1].tobytes()
