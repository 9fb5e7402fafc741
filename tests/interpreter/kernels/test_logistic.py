"""LOGISTIC: the teaching layer (kernels/logistic.py) and the speed layer (fast/activations.py) compute
the same bits under both variants, the default interpreter is bit-exact with LiteRT's builtin kernels
and the reference variant with LiteRT's BUILTIN_REF kernels; float32, uint8, int8 and int16 (power-of-two
and general input scales).  The float32 sweep is tests/interpreter/test_float_unary_bitexact.py."""

from __future__ import annotations

import pytest

import activation_cases
from op_layers import OpLayers

CASES = activation_cases.LOGISTIC
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


def test_the_variants_differ():
    # float32: Eigen's logistic (exp(x/2)² polynomial on packets) against 1/(1 + expf(−x)) with cut-offs
    assert LAYERS.differing_variants("float32") > 0
    # int16 with input scale 2^-12: gemmlowp's fixed-point logistic against the sigmoid table
    assert LAYERS.differing_variants("int16_pot") > 0
    # the 8-bit LUT and the general int16 scales take the same kernel in both builds
    assert all(LAYERS.differing_variants(c) == 0 for c in ("uint8", "int8", "int16_general", "int16_coarse"))
