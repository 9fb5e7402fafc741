"""L2_NORMALIZATION: the teaching layer (kernels/l2_normalization.py; no speed layer) is bit-exact with
LiteRT's builtin kernels by default and with LiteRT's BUILTIN_REF kernels under the reference variant;
float32 (including rows below the epsilon), uint8 and int8."""

from __future__ import annotations

import pytest

from helpers import activation_cases
from helpers.op_layers import OpLayers

CASES = activation_cases.L2_NORMALIZATION
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


def test_both_builds_normalize_alike():
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)
