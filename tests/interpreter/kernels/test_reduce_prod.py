"""REDUCE_PROD: the teaching layer (kernels/reduce_prod.py) and the speed layer (fast/reduce.py, the
quantized product as a numba loop) compute the same bits under both variants, the default interpreter
is bit-exact with LiteRT's builtin kernels and the reference variant with its BUILTIN_REF kernels;
float32, int32, int64, unquantized int8 / uint8, quantized int8 and int16 (rescaled at every step;
a one-value product copied by the builtin kernel, rescaled by the reference one)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import F32, I8, I16, I32, I64, U8, prepared, reduce
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

P = B.REDUCE_PROD
NEAR_ONE = np.random.default_rng(7).uniform(0.9, 1.1, (2, 60)).astype(np.float32)
CASES = {
    "float32_axis1": reduce(P, F32, (3, 4, 5), [1], False),
    "float32_long_rows": reduce(P, F32, (2, 60), [1], False, values=NEAR_ONE),
    "float32_all": reduce(P, F32, (2, 3, 4), [0, 1, 2], True),
    "int32_axis1": reduce(P, I32, (3, 4), [1], False, values=np.arange(-6, 6, dtype=np.int32).reshape(3, 4)),
    "int32_wraps": reduce(P, I32, (2, 5), [1], False, values=np.full((2, 5), 1000, np.int32)),
    "int64_keep": reduce(P, I64, (3, 4), [0], True, values=np.arange(-6, 6, dtype=np.int64).reshape(3, 4)),
    "int8_unquantized": reduce(P, I8, (2, 3, 4), [1], False),
    "uint8_unquantized": reduce(P, U8, (2, 3, 4), [2], True),
    "int8": reduce(P, I8, (3, 4, 2), [1], False, (0.02, -3), (0.001, 5)),
    "int8_two_axes": reduce(P, I8, (2, 3, 2, 2), [1, 3], True, (0.1, 0), (0.05, -128)),
    "int8_many_rows": reduce(P, I8, (60, 3), [1], False, (0.02, 0), (0.0004, -7)),
    "int8_long_rows": reduce(P, I8, (5, 9), [1], False, (0.01, 3), (1e-9, 0)),
    "int8_one_value": reduce(P, I8, (3, 1, 4), [1], False, (0.05, 10), (0.1, -20)),
    "int16": reduce(P, I16, (4, 3), [1], False, (0.001, 0), (0.000001, 0)),
    "int16_long_rows": reduce(P, I16, (5, 6), [1], False, (0.01, 0), (1e-9, 0)),
    "int16_one_value": reduce(P, I16, (4, 1), [1], False, (0.001, 0), (0.002, 0)),
}
LAYERS = OpLayers(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


@pytest.mark.parametrize("case", ["int8_one_value", "int16_one_value"])
def test_a_one_value_product_is_copied_by_the_builtin_kernel_only(case):
    # every reduced axis has size 1: the optimized kernel copies the integers, the reference one
    # rescales them by MBQM64(x − zp) + out_zp (the scales differ here)
    assert prepared(LAYERS, case).copy and not prepared(LAYERS, case, "reference").copy
    assert LAYERS.differing_variants(case) > 0


def test_longer_products_agree_in_both_builds():
    assert all(LAYERS.differing_variants(c) == 0 for c in CASES if not c.endswith("one_value"))


def test_the_speed_layer_runs_the_quantized_product():
    from workbench.interpreter import Interpreter

    it = Interpreter(model=LAYERS.build("int8")[0])
    it.allocate_tensors()
    assert it.prepared()[0][1] == "reduce_prod/numba"


@pytest.mark.parametrize("case", sorted(c for c in CASES if c.startswith(("int8", "int16")) and "unquantized" not in c))
def test_quantized_product_is_the_scalar_chain(case):
    """The vectorised teaching layer against the chain written one output and one value at a time with
    the scalar int64 MBQM of the quant package."""
    from workbench.interpreter import quant
    from workbench.interpreter.kernels._reduce import reduced_rows

    x = LAYERS.build(case)[1][0]
    for variant in ("litert-x86", "reference"):
        d = prepared(LAYERS, case, variant)
        if d.copy:
            want = x.reshape(d.output_shape)
        else:
            lo, hi = quant.quantized_range(x.dtype)
            mbqm = quant.multiply_by_quantized_multiplier_int64
            out = []
            for row in reduced_rows(x, d.axes):
                p = int(row[0]) - d.input_zero_point
                for v in row[1:]:
                    p = mbqm(p * (int(v) - d.input_zero_point), d.multiplier, d.shift)
                out.append(min(max(mbqm(p, d.multiplier, d.shift) + d.output_zero_point, lo), hi))
            want = np.array(out, np.int64).astype(x.dtype).reshape(d.output_shape)
        np.testing.assert_array_equal(LAYERS.run(case, reference=True, variant=variant)[0], want, variant)
