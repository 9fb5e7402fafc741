"""ELU: float32 and int8.

The teaching layer (kernels/elu.py, glibc's expm1f in numpy: kernels/_libm.py) and the speed layer
(fast/unary.py: numba's expm1f, a value table) compute the same bits, the default interpreter is bit-exact
with LiteRT's builtin kernels and the reference variant would be checked against LiteRT's BUILTIN_REF
kernels, which have no ELU (that refusal is pinned down below); float32 (a wide sweep, specials) and int8."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import I8, builtin_ref_outcome, differing_bits, float_case, int_case
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.ELU),
    "float32_small": float_case(B.ELU, lo=-3, hi=3, n=3001),
    "int8": int_case(B.ELU, I8, (0.05, -10), (0.03, 20)),
    "int8_negative_side": int_case(B.ELU, I8, (0.1, 127), (0.008, 127)),
}
LAYERS = OpLayers(CASES)
# LiteRT's BUILTIN_REF resolver registers no ELU at all (every case stays out of the reference check)
REF_FAILS = {case: "Didn't find op for builtin opcode 'ELU' version '1'" for case in CASES}


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(REF_FAILS))
def test_builtin_ref_cannot_run(case):
    status, message = builtin_ref_outcome(LAYERS, case)
    assert status == "error" and REF_FAILS[case] in message, (status, message)


def test_both_builds_agree():
    # both builds: value < 0 ? expm1f(value) : value per element, and the same LUT
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
