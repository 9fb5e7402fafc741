"""LEAKY_RELU: the teaching layer (kernels/leaky_relu.py) and the speed layer (fast/activations.py)
compute the same bits under both variants, the default interpreter is bit-exact with LiteRT's builtin
kernels and the reference variant with LiteRT's BUILTIN_REF kernels; float32, uint8, int8 and int16,
alphas below and above 1 and negative."""

from __future__ import annotations

import pytest

from helpers import activation_cases
from helpers.op_layers import OpLayers

CASES = activation_cases.LEAKY_RELU
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


def test_both_builds_compute_leaky_relu_alike():
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)
