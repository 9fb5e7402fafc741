"""HARD_SWISH: the teaching layer (kernels/hard_swish.py) and the speed layer (fast/activations.py)
compute the same bits under both variants, the default interpreter is bit-exact with LiteRT's builtin
kernels and the reference variant with LiteRT's BUILTIN_REF kernels; float32, uint8 and int8."""

from __future__ import annotations

import pytest

from helpers import activation_cases
from helpers.op_layers import OpLayers

CASES = activation_cases.HARD_SWISH
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
    # float32: (x·(1/6))·relu6(x + 3) in 4 lanes, then (x·relu6)·(1/6), against x·relu6(x + 3)/6
    assert LAYERS.differing_variants("float32") > 0
    # uint8 / int8: litert's x86 build gives the reference kernel's fixed-point results
    assert all(LAYERS.differing_variants(c) == 0 for c in CASES if not c.startswith("float32"))
