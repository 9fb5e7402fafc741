"""AVERAGE_POOL_2D: the teaching layer (kernels/average_pool_2d.py) and the speed layer (fast/pool.py) compute the same bits,
the default interpreter is bit-exact with LiteRT's builtin kernels, and the reference variant with
LiteRT's BUILTIN_REF kernels; float32, uint8, int8 and int16, SAME and VALID, fused activations."""

from __future__ import annotations

import pytest

from op_layers import OpLayers
from pool_cases import pool_cases
from workbench.schema import BuiltinOperator

CASES = pool_cases(BuiltinOperator.AVERAGE_POOL_2D)
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


def test_both_builds_pool_alike():
    # pools round nothing that differs between TFLite's builds: the two variants agree everywhere
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)
