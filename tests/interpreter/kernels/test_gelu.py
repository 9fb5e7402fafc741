"""GELU (exact and approximate): the teaching layer (kernels/gelu.py) and the speed layer
(fast/activations.py) compute the same bits under both variants, the default interpreter is bit-exact
with LiteRT's builtin kernels and the reference variant with LiteRT's BUILTIN_REF kernels; float32,
uint8, int8 and int16.  The float32 sweep is tests/interpreter/test_float_unary_bitexact.py."""

from __future__ import annotations

import pytest

from helpers import activation_cases
from helpers.op_layers import OpLayers
from helpers.quantized_cases import assert_same

CASES = activation_cases.GELU
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


def test_both_builds_compute_gelu_alike():
    # TFLite has one GELU kernel (an Eigen expression for float32, LUTs for integers); bit patterns
    # compared, as the specials' NaNs (GELU(−inf)) are equal bits but never equal values
    for case in CASES:
        assert_same(LAYERS.run(case), LAYERS.run(case, variant="reference"), case)
