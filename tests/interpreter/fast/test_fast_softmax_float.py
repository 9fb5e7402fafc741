"""Float32 SOFTMAX of the speed layer (fast/softmax.py: ``FloatSoftmaxNative``, the kernel library's C
``softmax_f32``, and the numba loop it falls back to) against the teaching layer and LiteRT's builtin
kernels, bit for bit; without the library, numba; the reference variant keeps its own loop.  The sweep
over row lengths, betas and special values: tests/interpreter/test_float_softmax_bitexact.py."""

from __future__ import annotations

import pytest

from helpers import activation_cases
from helpers.op_layers import OpLayers
from workbench.interpreter import Interpreter
from workbench.interpreter.fast import softmax as fast_softmax
from workbench.perf import elementwise

CASES = {name: activation_cases.SOFTMAX[name]
         for name in ("float32_1d_beta1", "float32_4d_specials", "float32_rows_of_1000", "float32_64x37")}
LAYERS = OpLayers(CASES)


def path_of(case, variant="litert-x86"):
    model, _ = LAYERS.build(case)
    it = Interpreter(model=model, variant=variant)
    it.allocate_tensors()
    return it._sg(0).fast.get(0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_library_path_is_the_teaching_layer_and_litert(case):
    native = elementwise.softmax_function() is not None
    assert type(path_of(case)) is (fast_softmax.FloatSoftmaxNative if native else fast_softmax.FloatRows)
    LAYERS.check_layers(case)
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", ["float32_4d_specials", "float32_rows_of_1000"])
def test_without_the_library_numba_computes_the_same(case, monkeypatch):
    monkeypatch.setattr(elementwise, "softmax_function", lambda: None)
    assert type(path_of(case)) is fast_softmax.FloatRows
    LAYERS.check_layers(case)


def test_the_reference_variant_keeps_its_loop():
    path = path_of("float32_64x37", variant="reference")
    assert type(path) is fast_softmax.FloatRows and path.fn is fast_softmax.softmax_libm_numba
    LAYERS.check_reference_variant("float32_64x37")
