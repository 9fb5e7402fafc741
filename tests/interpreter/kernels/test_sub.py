"""SUB: the teaching layer (kernels/sub.py, _binary.py, _binary_plain.py) and the speed layer
(fast/binary.py) compute the same bits, the default interpreter is bit-exact with LiteRT's builtin
kernels and the reference variant with LiteRT's BUILTIN_REF kernels — float32, int32, int64, uint8,
int8, int16 (general and power-of-two scales), broadcasts, output multipliers ≥ 1 — and the variants
part only where litert's builtin int16 SUB broadcast runs a vectorised loop (Variant.neon_narrowing)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.binary_cases import F32, I8, I16, I32, I64, U8, binary, differing_bits, fast_path_of, prepared_data
from helpers.op_layers import OpLayers
from workbench.schema import ActivationFunctionType as Act
from workbench.schema import BuiltinOperator as B
from workbench.schema import SubOptions

GENERAL16 = SubOptions(pot_scale_int16=False)
POW15_8BIT = float(np.float32(0.1 / 2 ** 20 / (0.75 * 2 ** 15)))      # an output multiplier of 2^15 · 0.75
POW15_16BIT = float(np.float32(0.002 / 2 ** 15 / (0.75 * 2 ** 15)))

CASES = {
    "float32": binary(B.SUB, F32, (2, 3, 40), (2, 3, 40), options=SubOptions()),
    "float32_broadcast_relu": binary(B.SUB, F32, (2, 3, 40), (40,),
                                     options=SubOptions(fused_activation_function=Act.RELU)),
    "int32_wraps_relu6": binary(B.SUB, I32, (3, 40), (3, 40), options=SubOptions(fused_activation_function=Act.RELU6)),
    "int64_broadcast": binary(B.SUB, I64, (3, 40), (3, 1), options=SubOptions()),
    "uint8_every_pair": binary(B.SUB, U8, None, None, (0.05, 3), (0.02, 200), (0.01, 4), SubOptions()),
    "int8_every_pair": binary(B.SUB, I8, None, None, (0.05, 3), (0.02, -100), (0.03, 7), SubOptions()),
    "uint8_broadcast_relu6": binary(B.SUB, U8, (2, 3, 8), (8,), (0.05, 3), (0.02, 200), (0.03, 0),
                                    SubOptions(fused_activation_function=Act.RELU6)),
    "uint8_tiny_output_scale": binary(B.SUB, U8, None, None, (0.05, 3), (0.02, 200), (2e-7, 4), SubOptions()),
    "int8_output_multiplier_2_pow_15": binary(B.SUB, I8, None, None, (0.05, 3), (0.05, -7), (POW15_8BIT, 2),
                                              SubOptions()),
    "uint8_output_multiplier_2_pow_15_broadcast": binary(B.SUB, U8, (2, 3, 22), (22,), (0.05, 130), (0.05, 120),
                                                         (POW15_8BIT, 128), SubOptions()),
    "int16_general": binary(B.SUB, I16, (2, 3, 40), (2, 3, 40), (0.001, 0), (0.0007, 0), (0.0015, 0), GENERAL16),
    "int16_general_broadcast": binary(B.SUB, I16, (3, 1000), (3, 1), (1e-5, 0), (3e-5, 0), (2e-5, 0), GENERAL16),
    "int16_output_multiplier_2_pow_15": binary(B.SUB, I16, (2, 37), (2, 37), (0.001, 0), (0.001, 0),
                                               (POW15_16BIT, 0), GENERAL16),
    "int16_output_multiplier_2_pow_15_runs_of_22": binary(B.SUB, I16, (2, 3, 22), (22,), (0.001, 0), (0.001, 0),
                                                          (POW15_16BIT, 0), GENERAL16),
    "int16_output_multiplier_2_pow_15_last_dim_broadcast": binary(B.SUB, I16, (3, 21), (3, 1), (0.001, 0),
                                                                  (0.001, 0), (POW15_16BIT, 0), GENERAL16),
    "int16_pot": binary(B.SUB, I16, (2, 3, 40), (2, 3, 40), (2 ** -12, 0), (2 ** -14, 0), (2 ** -12, 0),
                        SubOptions(pot_scale_int16=True)),
    "int16_pot_broadcast": binary(B.SUB, I16, (2, 3, 40), (3, 1), (2 ** -13, 0), (2 ** -11, 0), (2 ** -11, 0),
                                  SubOptions(pot_scale_int16=True)),
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


def test_int16_sub_broadcast_is_vectorised_only_in_the_builtin_kernel():
    # an output multiplier ≥ 1 makes the final shift count negative (undefined in C): the compiler's
    # vectorisation of a loop leaves only the sign (zero point ± 1), its scalar loop takes the count mod
    # 32.  litert's builtin int16 SUB broadcast vectorises every run of shared trailing dimensions (20 of
    # each 22 here); the reference kernel (BroadcastQuantSubSlow) runs scalar
    assert differing_bits(LAYERS, "int16_output_multiplier_2_pow_15_runs_of_22") > 0
    assert prepared_data(LAYERS, "int16_output_multiplier_2_pow_15_runs_of_22", "reference").vector_mask is None


@pytest.mark.parametrize("case", ["int8_output_multiplier_2_pow_15", "int16_output_multiplier_2_pow_15",
                                  "uint8_output_multiplier_2_pow_15_broadcast",
                                  "int16_output_multiplier_2_pow_15_last_dim_broadcast", "uint8_every_pair",
                                  "int16_general", "int16_pot_broadcast", "float32_broadcast_relu"])
def test_variants_agree_elsewhere(case):
    # equal shapes run the same compiler-vectorised loop in both builds (its outputs marked in both
    # variants), 8-bit broadcasts and a broadcast last dimension the scalar one; no NEON loop of SUB
    # narrows anything
    assert differing_bits(LAYERS, case) == 0


def test_the_vectorised_outputs_are_marked_in_both_variants():
    for variant in ("litert-x86", "reference"):
        d = prepared_data(LAYERS, "int8_output_multiplier_2_pow_15", variant)
        assert d.output_shift == 15 and d.vector_mask.sum() == 65548 and not d.vector_mask.reshape(-1)[-1]
    assert fast_path_of(LAYERS, "int8_output_multiplier_2_pow_15").vector_table is not None
    assert prepared_data(LAYERS, "int16_general").vector_mask is None           # a multiplier < 1: no difference
