"""RELU6: float32, uint8, int8 and int16.

The teaching layer (kernels/relu6.py) and the speed layer (fast/unary.py: value tables) compute the same
bits, the default interpreter is bit-exact with LiteRT's builtin kernels and the reference variant with
LiteRT's BUILTIN_REF kernels; float32 (NaN), uint8, int8, int16."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import I8, I16, U8, differing_bits, float_case, int_case
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.RELU6),
    "uint8": int_case(B.RELU6, U8, (0.05, 255), (0.03, 0)),
    "int8": int_case(B.RELU6, I8, (0.06, 0), (0.025, -128)),
    "int16": int_case(B.RELU6, I16, (0.001, 0), (0.0007, 0)),
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
    # QuantizedReluX in both builds
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
