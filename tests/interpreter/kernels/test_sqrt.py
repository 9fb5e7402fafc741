"""SQRT: float32, int8 and int16.

The teaching layer (kernels/sqrt.py) and the speed layer (fast/unary.py: value tables) compute the same
bits, the default interpreter is bit-exact with LiteRT's builtin kernels and the reference variant with
LiteRT's BUILTIN_REF kernels; float32, int8 (zero points inside and at the top) and int16 (every non-
negative value)."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import I8, I16, differing_bits, float_case, int_case
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.SQRT),
    "int8": int_case(B.SQRT, I8, (0.05, -10), (0.04, -128), lo=-10),
    "int8_high_zero_point": int_case(B.SQRT, I8, (0.013, 100), (0.02, 50), lo=100),
    "int8_truncation": int_case(B.SQRT, I8, (0.0031, -128), (0.0117, -128), lo=-128),
    "int16": int_case(B.SQRT, I16, (0.001, 0), (0.0004, 0), lo=0),
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


def test_both_builds_agree():
    # one quantized SQRT kernel (sqrtf, a truncating cast) and std::sqrt in both builds
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
