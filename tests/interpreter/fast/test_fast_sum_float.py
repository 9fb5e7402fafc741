"""The float32 SUM and MEAN of the speed layer (fast/reduce.py: ``FloatSumNative``, the kernel library's C
loop, and ``FloatSum``, the numba loop it falls back to) against the teaching layer and LiteRT's builtin
kernels, bit for bit, NaN and -0.0 included: a network's global average pool, a middle axis, a SUM, the
reduction of everything; Eigen's trailing-axes MEAN keeps numba; without the library, numba."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import F32, reduce
from helpers.op_layers import OpLayers
from workbench.interpreter import Interpreter
from workbench.interpreter.fast import reduce as fast_reduce
from workbench.perf import elementwise
from workbench.schema import BuiltinOperator as B


def values(shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 50
    x.flat[:2] = [np.nan, -0.0]
    return x


CASES = {"mean_hw_pool": reduce(B.MEAN, F32, (1, 7, 7, 40), [1, 2], True, values=values((1, 7, 7, 40), 1)),
         "mean_axis1": reduce(B.MEAN, F32, (2, 9, 17), [1], False, values=values((2, 9, 17), 2)),
         "sum_hw": reduce(B.SUM, F32, (2, 5, 3, 33), [1, 2], True, values=values((2, 5, 3, 33), 3)),
         "sum_all": reduce(B.SUM, F32, (3, 4, 5), [0, 1, 2], False, values=values((3, 4, 5), 4)),
         "mean_last_axis": reduce(B.MEAN, F32, (4, 24), [1], False, values=values((4, 24), 5))}
LAYERS = OpLayers(CASES)
NATIVE = {"mean_hw_pool": True, "mean_axis1": True, "sum_hw": True, "sum_all": True, "mean_last_axis": False}


def path_of(case):
    model, _ = LAYERS.build(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    return it._sg(0).fast.get(0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fast_paths_are_the_teaching_layer_and_litert(case):
    native = NATIVE[case] and elementwise.sum_function() is not None
    want = fast_reduce.FloatSumNative if native else fast_reduce.FloatSum
    assert type(path_of(case)) is want
    LAYERS.check_layers(case)
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", ["mean_hw_pool", "sum_hw"])
def test_without_the_library_numba_sums_the_same(case, monkeypatch):
    monkeypatch.setattr(elementwise, "sum_function", lambda: None)
    assert type(path_of(case)) is fast_reduce.FloatSum
    LAYERS.check_layers(case)
