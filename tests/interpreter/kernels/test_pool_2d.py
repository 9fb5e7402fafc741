"""AVERAGE_POOL_2D and MAX_POOL_2D, one set of tests run for each op.

The teaching layer (kernels/average_pool_2d.py, kernels/max_pool_2d.py) and the speed layer (fast/pool.py)
compute the same bits, the default interpreter is bit-exact with LiteRT's builtin kernels, and the reference
variant with LiteRT's BUILTIN_REF kernels; float32, uint8, int8 and int16, SAME and VALID, fused
activations.  Test ids are ``OP-case``."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.pool_cases import pool_cases
from workbench.schema import BuiltinOperator as B

LAYERS = {op.name: OpLayers(pool_cases(op)) for op in (B.AVERAGE_POOL_2D, B.MAX_POOL_2D)}
OP_CASES = [pytest.param(op, case, id=f"{op}-{case}") for op, layers in LAYERS.items() for case in sorted(layers.cases)]


@pytest.mark.parametrize("op, case", OP_CASES)
def test_teaching_layer_is_the_speed_layer(op, case):
    LAYERS[op].check_layers(case)


@pytest.mark.parametrize("op, case", OP_CASES)
def test_bit_exact_with_litert_builtin(op, case):
    LAYERS[op].check_litert(case)


@pytest.mark.parametrize("op, case", OP_CASES)
def test_reference_variant_bit_exact_with_litert_builtin_ref(op, case):
    LAYERS[op].check_reference_variant(case)


@pytest.mark.parametrize("op", LAYERS)
def test_both_builds_pool_alike(op):
    # pools round nothing that differs between TFLite's builds: the two variants agree everywhere
    assert all(LAYERS[op].differing_variants(case) == 0 for case in LAYERS[op].cases)
