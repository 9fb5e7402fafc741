"""SIN: float32 and float16.

The teaching layer (kernels/sin.py, glibc's sinf in numpy: kernels/_libm.py) and the speed layer
(fast/unary.py: numba's sinf) compute the same bits, the default interpreter is bit-exact with LiteRT's
builtin kernels and the reference variant with LiteRT's BUILTIN_REF kernels; float32 (a wide sweep: both
range reductions, specials) and every float16 value."""

from __future__ import annotations

import pytest

from op_layers import OpLayers
from unary_cases import builtin_ref_outcome, F16, differing_bits, float_case
from workbench.schema import BuiltinOperator as B

CASES = {
    "float32": float_case(B.SIN),
    "float32_large": float_case(B.SIN, lo=-1e6, hi=1e6, n=3001),
    "float16_every_value": float_case(B.SIN, F16),
}
LAYERS = OpLayers(CASES)
# LiteRT's BUILTIN_REF resolver registers SIN version 1 only: float16 (version 2) is builtin-only
REF_FAILS = {"float16_every_value": "Didn't find op for builtin opcode 'SIN' version '2'"}


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
    # reference_ops::Sin in both builds: std::sin per element
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)
