"""SIN and COS: float32 and float16, one set of tests run for each op.

The teaching layer (kernels/sin.py and kernels/cos.py, glibc's sinf / cosf in numpy: kernels/_libm.py) and
the speed layer (fast/unary.py: numba's sinf / cosf) compute the same bits, the default interpreter is
bit-exact with LiteRT's builtin kernels and the reference variant with LiteRT's BUILTIN_REF kernels; float32
(a wide sweep: both range reductions, specials) and every float16 value.  Test ids are ``OP-case``."""

from __future__ import annotations

import pytest

from helpers.op_layers import OpLayers
from helpers.unary_cases import F16, builtin_ref_outcome, differing_bits, float_case
from workbench.schema import BuiltinOperator as B

OPS = {"SIN": B.SIN, "COS": B.COS}
LAYERS = {name: OpLayers({
    "float32": float_case(op),
    "float32_large": float_case(op, lo=-1e6, hi=1e6, n=3001),
    "float16_every_value": float_case(op, F16),
}) for name, op in OPS.items()}
CASES = sorted(LAYERS["SIN"].cases)
# LiteRT's BUILTIN_REF resolver registers SIN and COS version 1 only: float16 (version 2) is builtin-only
REF_FAILS = {"float16_every_value": "Didn't find op for builtin opcode '{op}' version '2'"}


def op_cases(cases) -> list:
    """(op, case) for every op and case, with the id ``OP-case``."""
    return [pytest.param(op, case, id=f"{op}-{case}") for op in OPS for case in sorted(cases)]


@pytest.mark.parametrize("op, case", op_cases(CASES))
def test_teaching_layer_is_the_speed_layer(op, case):
    LAYERS[op].check_layers(case)


@pytest.mark.parametrize("op, case", op_cases(CASES))
def test_bit_exact_with_litert_builtin(op, case):
    LAYERS[op].check_litert(case)


@pytest.mark.parametrize("op, case", op_cases(set(CASES) - set(REF_FAILS)))
def test_reference_variant_bit_exact_with_litert_builtin_ref(op, case):
    LAYERS[op].check_reference_variant(case)


@pytest.mark.parametrize("op, case", op_cases(REF_FAILS))
def test_builtin_ref_cannot_run(op, case):
    status, message = builtin_ref_outcome(LAYERS[op], case)
    assert status == "error" and REF_FAILS[case].format(op=op) in message, (status, message)


@pytest.mark.parametrize("op", OPS)
def test_both_builds_agree(op):
    # reference_ops::Sin / reference_ops::Cos in both builds: std::sin / std::cos per element
    assert all(differing_bits(LAYERS[op], case) == 0 for case in CASES)
