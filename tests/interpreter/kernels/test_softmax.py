"""SOFTMAX: the teaching layer (kernels/softmax.py, kernels/_softmax.py) and the speed layer
(fast/softmax.py) compute the same bits under both variants, the default interpreter is bit-exact with
LiteRT's builtin kernels and the reference variant with LiteRT's BUILTIN_REF kernels; float32, float16,
uint8 → uint8 / int16, int8 → int8 / int16 and int16 → int16.  The float32 sweep (row lengths, betas,
specials, NaN rows) is tests/interpreter/test_float_softmax_bitexact.py."""

from __future__ import annotations

import pytest

from helpers import activation_cases, litert_batch
from helpers.op_layers import OpLayers
from workbench import dump
from workbench.interpreter import Interpreter
from workbench.interpreter.kernels.softmax import SoftmaxFixedPointData, SoftmaxInt8Data

CASES = activation_cases.SOFTMAX
LAYERS = OpLayers(CASES)
# LiteRT 2.3's BUILTIN_REF resolver registers SOFTMAX up to version 3 (float16 is version 4)
REF_CANNOT_RUN = {"float16_2d": "Didn't find op for builtin opcode 'SOFTMAX' version '4'"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(set(CASES) - set(REF_CANNOT_RUN)))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


@pytest.mark.parametrize("case", sorted(REF_CANNOT_RUN))
def test_builtin_ref_still_cannot_run(case):
    model, inputs = LAYERS.build(case)
    [(status, message)] = litert_batch.run_many([(dump(model), inputs)], resolver="BUILTIN_REF")
    assert status == "error" and REF_CANNOT_RUN[case] in message, (status, message)


def test_the_variants_differ():
    # float32: Eigen's packet exp and packet sums and e·(1/sum) against expf, a left-to-right sum and e/sum
    assert LAYERS.differing_variants("float32_64x37") > 0
    # int8: the float table rounds round(p·256) − 128 to −1 where the fixed-point kernel gets 0
    assert LAYERS.differing_variants("int8_table_vs_fixed_point") > 0
    # int8 → int16: the reference kernel writes steps of 1/65536 from −32768, whatever the output scale
    assert LAYERS.differing_variants("int8_to_int16") > 0
    # int16 and float16 run TFLite's reference kernels in both builds
    assert LAYERS.differing_variants("int16") == LAYERS.differing_variants("float16_2d") == 0


def test_prepare_follows_the_variant():
    model, _ = LAYERS.build("int8")
    data = {}
    for variant in ("litert-x86", "reference"):
        it = Interpreter(model=model, variant=variant)
        it.allocate_tensors()
        data[variant] = it.prepared()[0][2]
    assert type(data["litert-x86"]) is SoftmaxInt8Data and data["litert-x86"].table.shape == (256,)
    d = data["reference"]
    assert type(d) is SoftmaxFixedPointData
    # beta·in_scale·2^26 with in_scale the float32 nearest 0.1: multiplier ≈ 0.8·2^31, left shift 23;
    # diff_min = −⌊31·2^26 / 2^23⌋
    assert (d.input_multiplier, d.input_left_shift, d.diff_min) == (1717986944, 23, -248)
