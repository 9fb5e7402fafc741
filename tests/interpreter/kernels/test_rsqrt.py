"""RSQRT: float32, int8 and int16.

The teaching layer (kernels/rsqrt.py) and the speed layer (fast/unary.py: value tables) compute the same
bits, the default interpreter is bit-exact with LiteRT's builtin kernels and the reference variant with
LiteRT's BUILTIN_REF kernels; float32, int8 (fixed-point Newton-Raphson, tiny scales) and int16 (an
interpolated LUT)."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import I8, I16, differing_bits, float_case, int_case
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.RSQRT),
    "int8": int_case(B.RSQRT, I8, (0.05, -10), (0.04, -128), lo=-10),
    "int8_tiny_scales": int_case(B.RSQRT, I8, (0.001, -128), (0.2, 0)),
    "int16": int_case(B.RSQRT, I16, (0.001, 0), (0.0004, 0), lo=0),
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
    # one RSQRT kernel file (elementwise.cc) serves both builds
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
