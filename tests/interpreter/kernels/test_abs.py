"""ABS: float32, int32, int8, int16 quantized and plain.

The teaching layer (kernels/abs.py) and the speed layer (fast/unary.py: value tables for int8 / int16)
compute the same bits, the default interpreter is bit-exact with LiteRT's builtin kernels and the reference
variant with LiteRT's BUILTIN_REF kernels; float32 (specials, −0.0), int32 (INT32_MIN), int8 (rescaled and
equal scales), int16 quantized and plain."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import I8, I16, I32, builtin_ref_outcome, differing_bits, float_case, int_case, values_case
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.ABS),
    "int32": values_case(B.ABS, I32, [[-2 ** 31, -2 ** 31 + 1, -5, -1, 0, 1, 7, 2 ** 31 - 1, -77, 3, 12]]),
    "int8": int_case(B.ABS, I8, (0.05, -10), (0.04, -128)),
    "int8_same_scale": int_case(B.ABS, I8, (0.05, 3), (0.05, -100)),
    "int16": int_case(B.ABS, I16, (0.001, 0), (0.0004, 0)),
    "int16_plain": int_case(B.ABS, I16),
}
LAYERS = OpLayers(CASES)
# LiteRT's BUILTIN_REF resolver registers ABS up to version 3: plain int16 (4) and int32 (5) are builtin-only
REF_FAILS = {"int16_plain": "Didn't find op for builtin opcode 'ABS' version '4'",
             "int32": "Didn't find op for builtin opcode 'ABS' version '5'"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(set(CASES) - set(REF_FAILS)))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


@pytest.mark.parametrize("case", sorted(REF_FAILS))
def test_builtin_ref_cannot_run(case):
    status, message = builtin_ref_outcome(LAYERS, case)
    assert status == "error" and REF_FAILS[case] in message, (status, message)


def test_both_builds_agree():
    # AbsEval is the same code in both builds
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
