"""CONCATENATION: the teaching layer (kernels/concatenation.py; no speed layer: numpy's concatenate is
the kernel) is bit-exact with LiteRT's builtin kernels by default and with LiteRT's BUILTIN_REF kernels
under the reference variant — float32, float16, int32, int64, bool, uint32, int8 and int16 (copied),
uint8 copied or rescaled (ConcatenationWithScaling), any axis; both builds compute alike."""

from __future__ import annotations

import pytest

from helpers.binary_cases import BOOL, F16, F32, I8, I16, I32, I64, U8, U32, concatenation, differing_bits
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

C = B.CONCATENATION
CASES = {
    "float32_axis1": concatenation(C, F32, [(2, 3, 5), (2, 4, 5), (2, 1, 5)], 1),
    "float32_last_axis": concatenation(C, F32, [(2, 3, 5), (2, 3, 2)], 2),
    "float16_axis0": concatenation(C, F16, [(2, 3), (1, 3)], 0),
    "int32_axis0": concatenation(C, I32, [(2, 3), (4, 3)], 0),
    "int64_axis1": concatenation(C, I64, [(2, 3), (2, 1)], 1),
    "bool_axis1": concatenation(C, BOOL, [(2, 3), (2, 5)], 1),
    "uint32_axis1": concatenation(C, U32, [(2, 3), (2, 2)], 1),
    "int8_same_parameters": concatenation(C, I8, [(1, 4, 4, 3), (1, 4, 4, 5)], 3, [(0.05, -3), (0.05, -3)],
                                          (0.05, -3)),
    "int16_scales_differ": concatenation(C, I16, [(2, 7), (2, 9)], 1, [(0.001, 0), (0.003, 0)], (0.002, 0)),
    "uint8_copied": concatenation(C, U8, [(2, 3, 4), (2, 3, 4)], 0, [(0.05, 128), (0.05, 128)], (0.05, 128)),
    "uint8_rescaled": concatenation(C, U8, [(1, 4, 4, 3), (1, 4, 4, 5), (1, 4, 4, 2)], 3,
                                    [(0.05, 128), (0.0173, 3), (0.1, 250)], (0.05, 128)),
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


def test_both_builds_concatenate_alike():
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
