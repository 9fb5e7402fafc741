"""RELU: float32, uint8, int8 and int16.

The teaching layer (kernels/relu.py) and the speed layer (fast/unary.py: value tables) compute the same
bits, the default interpreter is bit-exact with LiteRT's builtin kernels and the reference variant with
LiteRT's BUILTIN_REF kernels; float32 (NaN, −0.0), uint8, int8, int16 (multipliers above and below one)."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import I8, I16, U8, differing_bits, float_case, int_case
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.RELU),
    "uint8": int_case(B.RELU, U8, (0.05, 100), (0.03, 20)),
    "int8": int_case(B.RELU, I8, (0.05, -10), (0.07, -128)),
    "int8_same_scale": int_case(B.RELU, I8, (0.05, -10), (0.05, -10)),
    "int16": int_case(B.RELU, I16, (0.001, 0), (0.0007, 0)),
    "int16_multiplier_below_one": int_case(B.RELU, I16, (0.0001, 0), (0.0003, 0)),
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
    # QuantizedReluX (MultiplyByQuantizedMultiplier, ties away from zero) in both builds
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
