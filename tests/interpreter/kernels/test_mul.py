"""MUL: the teaching layer (kernels/mul.py, _binary.py, _binary_plain.py) and the speed layer
(fast/binary.py) compute the same bits, the default interpreter is bit-exact with LiteRT's builtin
kernels and the reference variant with LiteRT's BUILTIN_REF kernels — float32, float16, int32, int64,
uint32, complex64, uint8, int8, int16 (→ int16, int8, uint8), unquantized int16, broadcasts — and the
variants part where litert's NEON 8-bit MUL narrows its product to int16 (Variant.neon_narrowing)."""

from __future__ import annotations

import pytest

from binary_cases import (
    C64, F16, F32, I8, I16, I32, I64, U8, U32, binary, builtin_ref_outcome, differing_bits, fast_path_of,
    prepared_data, scalar_broadcast_pairs,
)
from op_layers import OpLayers
from workbench.schema import ActivationFunctionType as Act, BuiltinOperator as B, MulOptions

RELU = MulOptions(fused_activation_function=Act.RELU)

CASES = {
    "float32": binary(B.MUL, F32, (2, 3, 40), (2, 3, 40), options=MulOptions()),
    "float32_broadcast_relu": binary(B.MUL, F32, (2, 3, 40), (3, 1), options=RELU),
    "float16_broadcast": binary(B.MUL, F16, (3, 40), (40,), options=MulOptions()),
    "int32_wraps_relu": binary(B.MUL, I32, (3, 40), (3, 40), options=RELU),
    "int64_broadcast": binary(B.MUL, I64, (3, 40), (40,), options=MulOptions()),
    "uint32_relu_n1_to_1": binary(B.MUL, U32, (3, 40), (3, 40),
                                  options=MulOptions(fused_activation_function=Act.RELU_N1_TO_1)),
    "complex64": binary(B.MUL, C64, (3, 40), (40,), options=MulOptions()),
    "uint8_every_pair": binary(B.MUL, U8, None, None, (0.05, 3), (0.02, 200), (0.0011, 4), MulOptions()),
    "int8_every_pair": binary(B.MUL, I8, None, None, (0.05, 3), (0.02, -100), (0.003, -5), MulOptions()),
    "uint8_multiplier_above_one": binary(B.MUL, U8, None, None, (0.05, 3), (0.02, 200), (0.0002, 4), MulOptions()),
    "int8_multiplier_above_one": binary(B.MUL, I8, None, None, (0.05, 3), (0.02, -100), (0.0002, 4), MulOptions()),
    "uint8_broadcast_relu": binary(B.MUL, U8, (2, 4, 3), (1, 3), (0.05, 3), (0.02, 200), (0.0009, 30), RELU),
    "uint8_overflow_scalar_broadcast": binary(B.MUL, U8, (5, 40), (5, 1), (0.05, 3), (0.02, 200), (0.0002, 4),
                                              MulOptions()),
    "uint8_overflow_fivefold": binary(B.MUL, U8, (2, 1, 3, 17), (2, 4, 1, 1), (0.05, 3), (0.02, 200), (0.0002, 4),
                                      MulOptions()),
    "int8_overflow_not_fivefold": binary(B.MUL, I8, (2, 1, 3, 1, 19), (1, 4, 1, 5, 19), (0.05, 3), (0.02, -100),
                                         (0.0002, 4), MulOptions()),
    "uint8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.MUL, U8, (0.05, 3), (0.02, 200), (0.0002, 4),
                                                                MulOptions()),
    "int8_scalar_broadcast_every_pair": scalar_broadcast_pairs(B.MUL, I8, (0.05, 3), (0.02, -100), (0.0002, 4),
                                                               MulOptions(), swap=True),
    "int16": binary(B.MUL, I16, (3, 40), (3, 40), (0.001, 0), (0.002, 0), (0.00003, 0), MulOptions()),
    "int16_broadcast_relu_n1_to_1": binary(B.MUL, I16, (3, 40), (40,), (0.001, 0), (0.002, 0), (0.00003, 0),
                                           MulOptions(fused_activation_function=Act.RELU_N1_TO_1)),
    "int16_to_int8": binary(B.MUL, I16, (3, 40), (3, 40), (2 ** -15, 0), (2 ** -15, 0), (1 / 128, 5), MulOptions(),
                            out_dt=I8),
    "int16_to_uint8_relu": binary(B.MUL, I16, (3, 40), (3, 40), (2 ** -15, 0), (2 ** -15, 0), (1 / 128, 130), RELU,
                                  out_dt=U8),
    "int16_plain": binary(B.MUL, I16, (3, 40), (3, 40), options=MulOptions()),
    "int16_plain_relu": binary(B.MUL, I16, (3, 40), (40,), options=RELU),
}
LAYERS = OpLayers(CASES)
# LiteRT's BUILTIN_REF resolver registers MUL up to version 7: float16 (version 8) is builtin-only
REF_FAILS = {"float16_broadcast": "Didn't find op for builtin opcode 'MUL' version '8'"}


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


@pytest.mark.parametrize("case", ["int8_multiplier_above_one", "uint8_multiplier_above_one",
                                  "uint8_overflow_scalar_broadcast", "uint8_overflow_fivefold",
                                  "uint8_scalar_broadcast_every_pair", "int8_scalar_broadcast_every_pair"])
def test_neon_narrowing_changes_products_beyond_int16(case):
    # s1·s2/s_out > 1 lets the requantized product leave int16: litert's NEON loop narrows it saturating
    # (vqmovn; uint8's scalar-broadcast loop truncating) and adds the zero point in int16, wrapping; the
    # reference saturates to the 8-bit type directly
    assert LAYERS.differing_variants(case) > 0


@pytest.mark.parametrize("case", ["uint8_every_pair", "int8_every_pair", "int8_overflow_not_fivefold", "int16",
                                  "int16_to_int8", "float32_broadcast_relu", "complex64"])
def test_variants_agree_elsewhere(case):
    # products that fit int16 narrow to themselves; a broadcast that is not "five-fold" and int16 run the
    # reference loop in both builds
    assert differing_bits(LAYERS, case) == 0


def test_the_vector_loops_are_only_emulated_where_they_change_values():
    """Moved from test_quantized_elementwise.py: litert's NEON MUL only differs when the int16
    intermediate overflows; the OpData marks the outputs of its loops (8- or 16-wide blocks per run of
    ProcessBroadcastShapes's dispatch) and the speed layer keeps their table only where it differs."""
    assert prepared_data(LAYERS, "uint8_every_pair").vector_mask is not None
    assert fast_path_of(LAYERS, "uint8_every_pair").vector_table is None          # the same values
    assert fast_path_of(LAYERS, "uint8_multiplier_above_one").vector_table is not None
    assert prepared_data(LAYERS, "int8_overflow_not_fivefold").vector_mask is None          # the reference loop
    d = prepared_data(LAYERS, "uint8_overflow_fivefold")          # (2,1,3,17)·(2,4,1,1): scalar runs of 3·17 = 51
    runs = d.vector_mask.reshape(-1, 51)
    assert d.vector_scalar_broadcast and runs[:, :48].all() and not runs[:, 48:].any()
    assert prepared_data(LAYERS, "uint8_overflow_fivefold", "reference").vector_mask is None
