"""The six comparisons (one family, one teaching file: kernels/_compare.py with equal.py, not_equal.py,
less.py, less_equal.py, greater.py, greater_equal.py): the teaching layer and the speed layer
(fast/binary.py, rescaled types) compute the same bits, the default interpreter is bit-exact with
LiteRT's builtin kernels and the reference variant with LiteRT's BUILTIN_REF kernels — float32,
float16, int32, int64, bool, string, int8 / uint8 (always rescaled), int16 (raw, or rescaled by EQUAL /
NOT_EQUAL when quantized), broadcasts; both builds compare alike, so the variants agree."""

from __future__ import annotations

import pytest

from helpers.binary_cases import BOOL, F16, F32, I8, I16, I32, I64, STR, U8, comparison, differing_bits, fast_path_of
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

ORDERED = (B.LESS, B.LESS_EQUAL, B.GREATER, B.GREATER_EQUAL)
CASES = {}
for _op in (B.EQUAL, B.NOT_EQUAL) + ORDERED:
    _n = _op.name.lower()
    CASES.update({
        f"{_n}_float32": comparison(_op, F32, (2, 3, 40), (2, 3, 40)),
        f"{_n}_int32_broadcast": comparison(_op, I32, (3, 40), (40,)),
        f"{_n}_int8_rescaled": comparison(_op, I8, (3, 40), (3, 40), (0.5, 0), (0.25, -125)),
        f"{_n}_uint8_rescaled_broadcast": comparison(_op, U8, (2, 3, 40), (3, 1), (0.011, 7), (0.013, 200)),
        f"{_n}_int16_quantized": comparison(_op, I16, (3, 40), (3, 40), (0.001, 0), (0.0007, 0)),
    })
CASES.update({
    "equal_float16": comparison(B.EQUAL, F16, (3, 40), (3, 40)),
    "less_float16_broadcast": comparison(B.LESS, F16, (3, 40), (40,)),
    "equal_int64_broadcast": comparison(B.EQUAL, I64, (3, 40), (3, 1)),
    "greater_int64": comparison(B.GREATER, I64, (3, 40), (3, 40)),
    "equal_bool": comparison(B.EQUAL, BOOL, (3, 40), (3, 40)),
    "not_equal_bool_broadcast": comparison(B.NOT_EQUAL, BOOL, (3, 40), (40,)),
    "equal_string": comparison(B.EQUAL, STR, (3, 8), (3, 8)),
    "not_equal_string_broadcast": comparison(B.NOT_EQUAL, STR, (3, 8), (3, 1)),
    "equal_int16_plain": comparison(B.EQUAL, I16, (3, 40), (3, 40)),
    "less_int16_plain": comparison(B.LESS, I16, (3, 40), (40,)),
})
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


def test_both_builds_compare_alike():
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)


def test_rescaled_comparisons_read_a_table():
    assert fast_path_of(LAYERS, "less_int8_rescaled").name == "lut"
    assert fast_path_of(LAYERS, "equal_int16_quantized").name == "lut"       # EQUAL rescales quantized int16
    assert fast_path_of(LAYERS, "less_int16_quantized") is None              # LESS compares raw int16
    assert fast_path_of(LAYERS, "equal_float32") is None and fast_path_of(LAYERS, "equal_string") is None
