"""MEAN: the teaching layer (kernels/mean.py; no speed layer) gives the same bits under both variants
whatever runs it, the default interpreter is bit-exact with LiteRT's builtin kernels and the reference
variant with its BUILTIN_REF kernels; float32 (the order of the additions: sequential, or Eigen's
packets over trailing axes), uint8, int8 and int16 (the optimized 4-D H, W mean and the reference
QuantizedMeanOrSum)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import F32, I8, I16, U8, prepared, reduce
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

M = B.MEAN
NEG_ZERO = np.full((3, 2), -0.0, np.float32)
CASES = {
    # float32: sequential sums (H, W of a 4-D tensor; a leading axis; everything), Eigen's packets
    # (trailing axes after dropping size-1 dimensions), sums of −0
    "float32_hw_keep": reduce(M, F32, (2, 5, 4, 3), [1, 2], True),
    "float32_hw_keep_big": reduce(M, F32, (1, 14, 14, 64), [1, 2], True),
    "float32_axis0": reduce(M, F32, (300, 7), [0], False),
    "float32_all": reduce(M, F32, (3, 50, 41), [0, 1, 2], False),
    "float32_one_row": reduce(M, F32, (1, 128), [-1], False),
    "float32_last_axis": reduce(M, F32, (2, 5, 40), [-1], False),
    "float32_last_two_axes": reduce(M, F32, (3, 6, 7), [1, 2], True),
    "float32_last_axis_rows_of_13": reduce(M, F32, (3, 7, 13), [-1], False),
    "float32_last_axis_rows_of_3": reduce(M, F32, (4, 3), [1], False),
    "float32_hw_one_channel": reduce(M, F32, (2, 5, 4, 1), [1, 2], True),
    "float32_negative_zeros_first_axis": reduce(M, F32, (3, 2), [0], False, values=NEG_ZERO),
    "float32_negative_zeros_last_axis": reduce(M, F32, (2, 3), [1], True, values=NEG_ZERO.reshape(2, 3)),
    # uint8 / int8: the 4-D H, W mean (optimized in the builtin build) and the others
    "uint8_hw_keep": reduce(M, U8, (2, 5, 4, 19), [1, 2], True, (0.05, 128), (0.02, 3)),
    "uint8_hw_keep_same_q": reduce(M, U8, (1, 6, 6, 40), [2, 1], True, (0.05, 128)),
    "uint8_hw_no_keep": reduce(M, U8, (1, 3, 3, 40), [1, 2], False, (0.0235, 0), (0.0114, 255)),
    "uint8_last_axis": reduce(M, U8, (2, 5, 12), [-1], False, (0.05, 128), (0.02, 7)),
    "uint8_same_q_axis1": reduce(M, U8, (3, 7, 4), [1], True, (0.1, 3)),
    "int8_hw_negative_axes": reduce(M, I8, (1, 5, 6, 18), [1, -2], True, (0.05, -3), (0.03, 9)),
    "int8_hw_same_q": reduce(M, I8, (1, 4, 4, 48), [1, 2], True, (0.05, -3)),
    "int8_hw_ties": reduce(M, I8, (1, 7, 7, 48), [1, 2], True, (0.05, -3), (0.05, -3)),
    "int8_repeated_axis": reduce(M, I8, (2, 4, 3, 17), [1, 2, 2], True, (0.05, -128), (0.02, 0)),
    "int8_axis1": reduce(M, I8, (2, 9, 17), [1], False, (0.05, -128), (0.02, 0)),
    "int16_hw_keep_v3": reduce(M, I16, (1, 5, 4, 7), [1, 2], True, (0.001, 0), (0.0004, 0)),
    "int16_axes_0_2": reduce(M, I16, (3, 4, 5), [0, 2], False, (0.002, 0), (0.0005, 0)),
    "int16_all_axes": reduce(M, I16, (3, 4, 5), [0, 1, 2], False, (0.002, 0), (0.00001, 0)),
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


@pytest.mark.parametrize("case", ["float32_last_axis", "float32_last_two_axes", "float32_last_axis_rows_of_13"])
def test_eigen_packets_sum_trailing_axes_in_another_order(case):
    # the builtin kernel sums a mean over trailing axes with Eigen's 4-lane packets, the reference
    # kernel one value after the other: long rows round differently
    assert LAYERS.differing_variants(case) > 0


@pytest.mark.parametrize("case", ["float32_negative_zeros_first_axis", "float32_negative_zeros_last_axis"])
def test_the_reference_kernel_starts_its_sums_from_zero(case):
    # 0 + (−0) = +0: the reference mean of −0s is +0, the optimized kernel's (which starts from the
    # first value) −0
    ref = LAYERS.run(case, variant="reference")[0]
    x86 = LAYERS.run(case)[0]
    assert not np.signbit(ref).any() and np.signbit(x86).all()


@pytest.mark.parametrize("case", ["uint8_hw_keep", "int8_hw_same_q", "int8_hw_ties"])
def test_the_optimized_hw_mean_rounds_differently(case):
    # optimized_(integer_)ops::Mean: one float32 multiplier with the 1/count inside and NEON's ties-up
    # shift, against the reference kernel's folded fixed-point multiplier
    assert LAYERS.differing_variants(case) > 0


def test_which_quantized_algorithm_each_build_takes():
    assert prepared(LAYERS, "uint8_hw_keep").algorithm.startswith("optimized")
    assert prepared(LAYERS, "int8_hw_negative_axes").algorithm.startswith("optimized")    # [1, -2] is {1, 2}
    assert prepared(LAYERS, "uint8_hw_keep", "reference").algorithm.startswith("reference")
    assert prepared(LAYERS, "uint8_hw_no_keep").algorithm.startswith("reference")         # keep_dims false
    assert prepared(LAYERS, "int16_hw_keep_v3").algorithm.startswith("reference")         # int16 never


@pytest.mark.parametrize("case", sorted(c for c in CASES if not c.startswith("float")))
def test_quantized_mean_is_the_scalar_formula(case):
    """The vectorised teaching layer against the recipes of the module docstring written one output at
    a time with the scalar fixed-point functions of the quant package."""
    from workbench.interpreter import quant
    from workbench.interpreter.kernels._reduce import reduced_rows

    for variant in ("litert-x86", "reference"):
        d = prepared(LAYERS, case, variant)
        x = LAYERS.build(case)[1][0]
        lo, hi = quant.quantized_range(x.dtype)
        want = []
        for c, row in enumerate(reduced_rows(x, d.axes)):
            acc = sum(int(v) for v in row)
            if d.algorithm.startswith("optimized"):
                channel = c % d.output_shape[-1]
                ties_up = channel < d.output_shape[-1] // 16 * 16
                mbqm = quant.multiply_by_quantized_multiplier_ruy if ties_up else quant.multiply_by_quantized_multiplier
                v = mbqm(acc, d.output_multiplier, d.output_shift) + d.bias
            else:
                shifted = quant._wrap_int32(acc - d.input_zero_point * d.count)
                v = quant.multiply_by_quantized_multiplier(shifted, d.output_multiplier, d.output_shift)
                v += d.output_zero_point
            want.append(min(max(v, lo), hi))
        got = LAYERS.run(case, reference=True, variant=variant)[0]
        np.testing.assert_array_equal(got, np.array(want, np.int64).astype(x.dtype).reshape(d.output_shape))
