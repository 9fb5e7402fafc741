"""LOG_SOFTMAX: the teaching layer (kernels/log_softmax.py, kernels/_softmax.py) and the speed layer
(fast/softmax.py) compute the same bits under both variants, the default interpreter is bit-exact with
LiteRT's builtin kernels and the reference variant with LiteRT's BUILTIN_REF kernels; float32, uint8
and int8.  The float32 sweep is tests/interpreter/test_float_softmax_bitexact.py."""

from __future__ import annotations

import pytest

from helpers import activation_cases
from helpers.op_layers import OpLayers
from workbench.interpreter import Interpreter
from workbench.interpreter.kernels.log_softmax import LogSoftmaxFixedPointData, LogSoftmaxQuantizedData

CASES = activation_cases.LOG_SOFTMAX
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


def test_the_variants_differ():
    # float32: Eigen's row expression (packet exp, packet sum) against expf and a left-to-right sum
    assert LAYERS.differing_variants("float32_64x37") > 0
    # int8: −125 is below the fixed-point kernel's diff_min (output −128); the float table gives −124
    assert LAYERS.differing_variants("int8_table_vs_fixed_point") > 0


def test_prepare_follows_the_variant():
    model, _ = LAYERS.build("uint8")
    kinds = {}
    for variant in ("litert-x86", "reference"):
        it = Interpreter(model=model, variant=variant)
        it.allocate_tensors()
        kinds[variant] = it.prepared()[0][2]
    assert type(kinds["litert-x86"]) is LogSoftmaxQuantizedData
    d = kinds["reference"]
    assert type(d) is LogSoftmaxFixedPointData and d.output_zero_point == 255
    assert d.diff_min < 0 < d.reverse_scaling_divisor and d.reverse_scaling_right_shift >= 0
