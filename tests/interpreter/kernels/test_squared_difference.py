"""SQUARED_DIFFERENCE: the teaching layer (kernels/squared_difference.py) and the speed layer
(fast/binary.py) compute the same bits, the default interpreter is bit-exact with LiteRT's builtin
kernels and the reference variant with LiteRT's BUILTIN_REF kernels — float32, int32 and int8 (every
pair of values, broadcasts); both builds compute alike, so the variants agree."""

from __future__ import annotations

import pytest

from helpers.binary_cases import F32, I8, I32, binary, differing_bits, fast_path_of
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": binary(B.SQUARED_DIFFERENCE, F32, (2, 3, 40), (2, 3, 40)),
    "float32_broadcast": binary(B.SQUARED_DIFFERENCE, F32, (2, 3, 40), (3, 1)),
    "int32_broadcast": binary(B.SQUARED_DIFFERENCE, I32, (3, 40), (40,)),
    "int8_every_pair": binary(B.SQUARED_DIFFERENCE, I8, None, None, (0.05, 3), (0.02, -100), (0.1, -128)),
    "int8_broadcast": binary(B.SQUARED_DIFFERENCE, I8, (2, 3, 40), (3, 1), (0.01, 3), (0.03, -10), (0.001, 0)),
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


def test_both_builds_compute_alike():
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
    assert fast_path_of(LAYERS, "int8_broadcast").name == "table" and fast_path_of(LAYERS, "float32") is None
