"""LOGISTIC and TANH, one set of tests run for each op.

The teaching layer (kernels/logistic.py, kernels/tanh.py) and the speed layer (fast/activations.py) compute
the same bits under both variants, the default interpreter is bit-exact with LiteRT's builtin kernels and the
reference variant with LiteRT's BUILTIN_REF kernels; float32, uint8, int8 and int16 (power-of-two and general
input scales).  The float32 sweep is tests/interpreter/test_float_unary_bitexact.py.  Test ids are
``OP-case``."""

from __future__ import annotations

import pytest

from helpers import activation_cases
from helpers.op_layers import OpLayers

LAYERS = {"LOGISTIC": OpLayers(activation_cases.LOGISTIC), "TANH": OpLayers(activation_cases.TANH)}
OP_CASES = [pytest.param(op, case, id=f"{op}-{case}") for op, layers in LAYERS.items() for case in sorted(layers.cases)]

# where the variants differ, and the cases where the same kernel runs in both builds
DIFFERING = {
    # float32: Eigen's logistic (exp(x/2)² polynomial on packets) against 1/(1 + expf(−x)) with cut-offs;
    # int16 with input scale 2^-12: gemmlowp's fixed-point logistic against the sigmoid table
    "LOGISTIC": ("float32", "int16_pot"),
    # float32: Eigen's [9/8] rational tanh against the C library's tanhf;
    # int16 with input scale 2^-12: gemmlowp's fixed-point tanh against the sigmoid table
    "TANH": ("float32", "int16_pot"),
}
AGREEING = {
    # the 8-bit LUT and the general int16 scales take the same kernel in both builds
    "LOGISTIC": ("uint8", "int8", "int16_general", "int16_coarse"),
    # the 8-bit LUT and the general int16 scales (2^-13 is not a power-of-two case) agree
    "TANH": ("uint8", "int8", "int16_general", "int16_pot_shift1"),
}


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
def test_the_variants_differ(op):
    assert all(LAYERS[op].differing_variants(c) > 0 for c in DIFFERING[op])
    assert all(LAYERS[op].differing_variants(c) == 0 for c in AGREEING[op])
