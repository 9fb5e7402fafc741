"""LOG: float32, int8 and int16.

The teaching layer (kernels/log.py, glibc's logf in numpy: kernels/_libm.py) and the speed layer
(fast/unary.py: numba's logf, value tables) compute the same bits, the default interpreter is bit-exact with
LiteRT's builtin kernels and the reference variant with LiteRT's BUILTIN_REF kernels; float32 (negatives,
±0, subnormals, NaN payloads), int8 and int16."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import I8, I16, differing_bits, float_case, int_case
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.LOG),
    "float32_positive": float_case(B.LOG, lo=0, hi=1e4, n=3001),
    "int8": int_case(B.LOG, I8, (0.05, -128), (0.04, 30)),
    "int8_zero_point_inside": int_case(B.LOG, I8, (0.03, 5), (0.1, 0)),
    "int16": int_case(B.LOG, I16, (0.001, 0), (0.0004, 0)),
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
    # reference_ops::Log in both builds: std::log per element, and the same LUTs
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
