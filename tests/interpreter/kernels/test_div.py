"""DIV: the teaching layer (kernels/div.py) and the speed layer (fast/binary.py) compute the same bits,
the default interpreter is bit-exact with LiteRT's builtin kernels and the reference variant with
LiteRT's BUILTIN_REF kernels — float32 (x/0, 0/0, broadcasts beyond rank 4), uint8, int8 and int16
with every pair of 8-bit values; both builds divide alike, so the variants agree."""

from __future__ import annotations

import pytest

from helpers.binary_cases import F32, I8, I16, U8, binary, differing_bits, fast_path_of
from helpers.op_layers import OpLayers
from workbench.errors import KernelError
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import DivOptions

CASES = {
    "float32": binary(B.DIV, F32, (2, 3, 40), (2, 3, 40), options=DivOptions()),
    "float32_broadcast_relu6": binary(B.DIV, F32, (2, 3, 40), (40,),
                                      options=DivOptions(fused_activation_function=Act.RELU6)),
    "float32_broadcast_rank5": binary(B.DIV, F32, (2, 1, 3, 1, 5), (1, 4, 1, 6, 5), options=DivOptions()),
    "uint8_every_pair": binary(B.DIV, U8, None, None, (0.05, 3), (0.05, 128), (0.5, 100), DivOptions(),
                               nonzero_b=128),
    "uint8_broadcast_relu": binary(B.DIV, U8, (3, 40), (40,), (0.05, 3), (0.02, 128), (0.01, 100),
                                   DivOptions(fused_activation_function=Act.RELU), nonzero_b=128),
    "int8_every_pair": binary(B.DIV, I8, None, None, (0.05, 3), (0.05, -5), (0.5, -10), DivOptions(), nonzero_b=-5),
    "int8_multiplier_above_one": binary(B.DIV, I8, (3, 40), (3, 1), (0.5, 3), (0.01, -5), (0.2, -10), DivOptions(),
                                        nonzero_b=-5),
    "int16": binary(B.DIV, I16, (3, 40), (3, 40), (0.001, 0), (0.002, 0), (0.01, 0), DivOptions(), nonzero_b=0),
    "int16_asymmetric": binary(B.DIV, I16, (3, 40), (3, 40), (0.001, 10), (0.002, -20), (0.01, 5), DivOptions(),
                               nonzero_b=-20),
    "int16_broadcast_relu6": binary(B.DIV, I16, (3, 40), (40,), (0.001, 0), (0.002, 0), (0.0001, 0),
                                    DivOptions(fused_activation_function=Act.RELU6), nonzero_b=0),
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


def test_both_builds_divide_alike():
    # DivElementwise is the one loop of both builds (its shifts beyond 31 taken mod 32 by x86 alike)
    assert all(differing_bits(LAYERS, case) == 0 for case in CASES)


@pytest.mark.parametrize("reference", [False, True])
def test_a_divisor_at_its_zero_point_stops_both_layers(reference):
    from workbench.interpreter import Interpreter

    model, inputs = LAYERS.build("uint8_broadcast_relu")
    b = inputs[1].copy()
    b[3] = 128                                              # the divisor's zero point: a real 0
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), (inputs[0], b)):
        it.set_tensor(d["index"], x)
    with pytest.raises(KernelError, match="zero point"):
        it.invoke()


def test_8bit_division_reads_a_table():
    assert fast_path_of(LAYERS, "uint8_broadcast_relu").name == "table"
    assert fast_path_of(LAYERS, "int16") is None and fast_path_of(LAYERS, "float32") is None
