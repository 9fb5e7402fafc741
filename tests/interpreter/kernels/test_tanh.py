"""TANH: the teaching layer (kernels/tanh.py) and the speed layer (fast/activations.py) compute the
same bits under both variants, the default interpreter is bit-exact with LiteRT's builtin kernels and
the reference variant with LiteRT's BUILTIN_REF kernels; float32, uint8, int8 and int16 (power-of-two
and general input scales).  The float32 sweep is tests/interpreter/test_float_unary_bitexact.py."""

from __future__ import annotations

import pytest

import activation_cases
from op_layers import OpLayers

CASES = activation_cases.TANH
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
    # float32: Eigen's [9/8] rational tanh against the C library's tanhf
    assert LAYERS.differing_variants("float32") > 0
    # int16 with input scale 2^-12: gemmlowp's fixed-point tanh against the sigmoid table
    assert LAYERS.differing_variants("int16_pot") > 0
    # the 8-bit LUT and the general int16 scales (2^-13 is not a power-of-two case) agree
    assert all(LAYERS.differing_variants(c) == 0 for c in ("uint8", "int8", "int16_general", "int16_pot_shift1"))
