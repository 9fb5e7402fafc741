"""NEG: float32, int32, int64, int8 and int16 (plain integers: −(−128) = −128).

The teaching layer (kernels/neg.py) and the speed layer (none: numpy's negative is the kernel) compute the
same bits, the default interpreter is bit-exact with LiteRT's builtin kernels and the reference variant with
LiteRT's BUILTIN_REF kernels; every type TFLite's NEG takes."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import I8, I16, I32, I64, differing_bits, float_case, int_case, values_case
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.NEG),
    "int32": values_case(B.NEG, I32, [[-2 ** 31, -2 ** 31 + 1, -5, -1, 0, 1, 7, 2 ** 31 - 1, 12]]),
    "int64": values_case(B.NEG, I64, [[-2 ** 63, -5, -1, 0, 1, 2 ** 63 - 1, 12]]),
    "int8": int_case(B.NEG, I8, (0.1, 0), (0.1, 0)),
    "int16": int_case(B.NEG, I16, (0.1, 0), (0.1, 0)),
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


def test_both_builds_agree():
    # reference_ops::Negate in both builds
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
