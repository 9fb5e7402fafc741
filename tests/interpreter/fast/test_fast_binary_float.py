"""The float32 ADD / SUB / MUL of the speed layer (fast/binary.py: ``FloatNative``, the kernel library's C
loop, and ``FloatRows``, the numba loop it falls back to; the operation and the activation clamp in one
pass, shared among threads) against the teaching layer (kernels/add.py, sub.py, mul.py), on 1 and 2
threads: the same bits, NaN, infinities and -0.0 included; and the choice made at bind (broadcast inputs
keep the teaching layer; without the library, or when it refuses the arrays, the numba loop)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.interpreter import Interpreter
from workbench.interpreter.fast import binary as fast_binary
from workbench.perf import elementwise
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import AddOptions, BuiltinOperator, ModelBuilder, MulOptions, SubOptions

OPS = {"add": (BuiltinOperator.ADD, AddOptions), "sub": (BuiltinOperator.SUB, SubOptions),
       "mul": (BuiltinOperator.MUL, MulOptions)}


def model(op: str, sa: tuple, sb: tuple, act):
    code, options = OPS[op]
    b = ModelBuilder()
    ta = b.input("a", sa, np.float32)
    tb = b.input("b", sb, np.float32)
    y = b.tensor("y", tuple(np.broadcast_shapes(sa, sb)), np.float32)
    b.op(code, [ta, tb], [y], options(fused_activation_function=act))
    b.output(y)
    return b.build()


def run(m, a, b, **kw):
    it = Interpreter(model=m, **kw)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], a)
    it.set_tensor(it.get_input_details()[1]["index"], b)
    it.invoke()
    return it, np.array(it.get_tensor(it.get_output_details()[0]["index"]))


def bits(x):
    return np.ascontiguousarray(x).view(np.uint32)


needs_library = pytest.mark.skipif(elementwise.binary_function() is None,
                                   reason="no kernel library with AVX-512 here (make kernels builds it)")
PATHS = {"native": (fast_binary.FloatNative, False), "rows": (fast_binary.FloatRows, True)}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("shape,act", [((1, 14, 14, 24), Act.NONE), ((1, 7, 9, 17), Act.RELU6),
                                       ((3, 5), Act.RELU), ((33,), Act.RELU_N1_TO_1),
                                       ((1, 56, 56, 24), Act.RELU6)])     # pieces on two threads
def test_the_fast_paths_are_the_teaching_layer(op, shape, act, path, monkeypatch):
    cls, without_library = PATHS[path]
    if without_library:
        monkeypatch.setattr(elementwise, "binary_function", lambda: None)
    elif elementwise.binary_function() is None:
        pytest.skip("no kernel library with AVX-512 here (make kernels builds it)")
    rng = np.random.default_rng(len(shape) * 31 + shape[-1])
    a = rng.uniform(-4, 4, shape).astype(np.float32)
    b = rng.uniform(-4, 4, shape).astype(np.float32)
    a.flat[:6] = [np.nan, np.inf, -np.inf, 3e38, -0.0, 0.0]
    b.flat[:6] = [1.0, 1.0, 2.0, 3e38, 0.0, -0.0]
    m = model(op, shape, shape, act)
    _, want = run(m, a, b, reference=True)
    for threads in (1, 2):
        it, got = run(m, a, b, num_threads=threads)
        assert type(it._sg(0).fast.get(0)) is cls
        np.testing.assert_array_equal(bits(got), bits(want), err_msg=f"{op} {shape} {threads} thread(s)")


@needs_library
def test_a_refused_call_gives_the_numba_loops_values(monkeypatch):
    m = model("add", (1, 6, 6, 20), (1, 6, 6, 20), Act.RELU6)
    a = np.linspace(-9, 9, 720, dtype=np.float32).reshape(1, 6, 6, 20)
    _, want = run(m, a, a[..., ::-1].copy(), reference=True)
    it = Interpreter(model=m)
    it.allocate_tensors()
    path = it._sg(0).fast[0]
    calls = []
    path.fn = lambda *args: calls.append(args) or -1
    it.set_tensor(it.get_input_details()[0]["index"], a)
    it.set_tensor(it.get_input_details()[1]["index"], a[..., ::-1].copy())
    it.invoke()
    assert len(calls) == 1
    np.testing.assert_array_equal(bits(it.get_tensor(it.get_output_details()[0]["index"])), bits(want))


def test_broadcast_keeps_the_teaching_layer():
    m = model("add", (1, 4, 4, 8), (8,), Act.RELU)
    a = np.linspace(-3, 3, 128, dtype=np.float32).reshape(1, 4, 4, 8)
    b = np.arange(8, dtype=np.float32) - 4
    _, want = run(m, a, b, reference=True)
    it, got = run(m, a, b, num_threads=2)
    assert it._sg(0).fast.get(0) is None
    np.testing.assert_array_equal(got, want)
