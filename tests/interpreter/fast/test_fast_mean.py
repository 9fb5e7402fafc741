"""The quantized H·W MEAN of the speed layer (fast/reduce.py, ``mean_hw_numba``) against the teaching
layer's ``mean_quantized_optimized`` (kernels/mean.py), bit for bit, on random shapes and multipliers:
channel counts below, at and above a block of 16, both dtypes, left and right shifts; and the choice
made at bind (the reference algorithm and other axes keep the teaching layer)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import I8, U8, reduce
from helpers.op_layers import OpLayers
from workbench.interpreter import Interpreter
from workbench.interpreter.fast import reduce as fast_reduce
from workbench.interpreter.kernels import mean
from workbench.schema import BuiltinOperator as B

SHAPES = [(1, 7, 7, 5), (2, 3, 4, 16), (1, 5, 6, 17), (1, 7, 7, 33), (3, 1, 1, 48), (1, 14, 14, 50)]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("shape", SHAPES)
def test_hw_mean_is_the_teaching_layer(shape, dtype):
    n, h, w, c = shape
    rng = np.random.default_rng(c * 7 + n)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    for shift in (-rng.integers(1, 14), 0, 1):
        mult = int(rng.integers(1 << 30, 1 << 31))
        bias = int(rng.integers(-40, 40))
        d = mean.MeanQuantizedData(np.dtype(dtype).name, (1, 2), True, (n, 1, 1, c), "optimized 4-D HW (integer)",
                                   h * w, 0.05, 0, 0.02, 0, 0.0, mult, int(shift), bias)
        want = mean.mean_quantized_optimized(x, d)
        out = np.zeros((n, 1, 1, c), dtype)
        fast_reduce.mean_hw_numba(x.reshape(n, h * w, c), np.int64(mult), np.int64(shift), np.int64(bias),
                                  np.int64(info.min), np.int64(info.max), np.int64(c // 16 * 16),
                                  np.zeros(c, np.int64), out.reshape(n, c))
        np.testing.assert_array_equal(out, want, err_msg=f"shift {shift}")


CASES = {"int8_hw": reduce(B.MEAN, I8, (1, 5, 6, 18), [1, 2], True, (0.05, -3), (0.03, 9)),
         "uint8_hw": reduce(B.MEAN, U8, (2, 4, 4, 40), [1, -2], True, (0.05, 128), (0.02, 3)),
         "int8_axis1": reduce(B.MEAN, I8, (2, 9, 17), [1], False, (0.05, -128), (0.02, 0)),
         "uint8_hw_no_keep": reduce(B.MEAN, U8, (1, 3, 3, 40), [1, 2], False, (0.0235, 0), (0.0114, 255))}
LAYERS = OpLayers(CASES)


@pytest.mark.parametrize("case,fast", [("int8_hw", True), ("uint8_hw", True), ("int8_axis1", False),
                                       ("uint8_hw_no_keep", False)])
def test_bind_takes_the_optimized_hw_mean_only(case, fast):
    """The optimized algorithm gets the loop; the reference algorithm (no keep_dims, other axes) falls
    back to the teaching layer; the bits are the teaching layer's either way."""
    model, _ = LAYERS.build(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    assert isinstance(it._sg(0).fast.get(0), fast_reduce.QuantizedMeanHW) is fast
    LAYERS.check_layers(case)
