"""QUANTIZE: the teaching layer (kernels/quantize.py) and the speed layer (fast/quantize.py) compute
the same bits, the default interpreter is bit-exact with LiteRT's builtin kernels and the reference
variant with LiteRT's BUILTIN_REF kernels — float32 → uint8 / int8 / int16 per tensor (exact ties in
the blocks of 8 and the tail, NaN / ±inf / huge values) and per channel, and every integer → integer
pair quantize.cc makes — and the variants part where litert's NEON blocks round differently:
ties to even of x·(1/scale) (Variant.quantize_block), ties up in requantization (Variant.requantize_block).
(Named test_quantize_kernel.py: tests/delegate/test_quantize.py holds the basename.)"""

from __future__ import annotations

import pytest

from helpers.binary_cases import (
    I8,
    I16,
    I32,
    U8,
    differing_bits,
    fast_path_of,
    float_quantize,
    prepared_data,
    requantize,
)
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

Q = B.QUANTIZE
CASES = {
    "float_to_int8": float_quantize(Q, I8, (3, 111), (0.02, -3)),
    "float_to_uint8": float_quantize(Q, U8, (3, 111), (0.0173, 120)),
    "float_to_int16": float_quantize(Q, I16, (3, 111), (0.00037, 0)),
    "float_to_int16_zp": float_quantize(Q, I16, (2, 101), (0.00037, 33)),
    "float_to_int8_specials": float_quantize(Q, I8, (1, 45), (0.02, 5), ties=False, specials=True),
    "float_to_uint8_specials_negative_zp": float_quantize(Q, U8, (1, 45), (0.02, -3), ties=False, specials=True),
    "float_to_uint8_division_ties": float_quantize(Q, U8, (5, 21), (0.0173, 120), ties=False, division_ties=True),
    "float_per_channel_int8": float_quantize(Q, I8, (3, 5), ([0.01, 0.02, 0.015, 0.03, 0.05], [0, -3, 5, 0, 1]), 1),
    "float_per_channel_uint8": float_quantize(Q, U8, (3, 5), ([0.01, 0.02, 0.015], [128, 3, 250]), 0),
    "float_per_channel_int16": float_quantize(Q, I16, (3, 5), ([1e-4, 2e-4, 3e-4, 5e-5, 1e-3], [0] * 5), 1),
    "int8_to_uint8": requantize(Q, I8, U8, (0.05, 4), (0.03, 130)),
    "int8_to_uint8_shift_only": requantize(Q, I8, U8, (0.05, 4), (0.05, 132)),
    "int8_to_int8_ties": requantize(Q, I8, I8, (0.01, 0), (0.04, 0), n=19, ties=True),
    "uint8_to_uint8_ties": requantize(Q, U8, U8, (0.01, 100), (0.04, 100), n=37, ties=True),
    "uint8_to_int8": requantize(Q, U8, I8, (0.01, 28), (0.04, -100)),
    "int16_to_int8": requantize(Q, I16, I8, (0.001, 7), (0.05, 3)),
    "int16_to_int8_ties": requantize(Q, I16, I8, (0.01, 0), (0.04, 0), n=37, ties=True),
    "int16_to_int16": requantize(Q, I16, I16, (0.001, 0), (0.0003, 0)),
    "int16_to_int32": requantize(Q, I16, I32, (0.001, 0), (0.00001, 0)),
    "int32_to_int8": requantize(Q, I32, I8, (0.001, 0), (0.5, 3)),
    "int32_to_int16": requantize(Q, I32, I16, (0.001, 10), (0.02, 0)),
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


@pytest.mark.parametrize("case", ["float_to_int8", "float_to_uint8", "float_to_int16", "float_to_int16_zp"])
def test_quantize_blocks_round_ties_to_even(case):
    # optimized_ops::AffineQuantize's blocks of 8 compute x·(1/scale) and round ties to even (2.5 → 2);
    # the reference divides and rounds ties away from zero (2.5 → 3)
    assert LAYERS.differing_variants(case) > 0
    assert prepared_data(LAYERS, case).block == 8 and prepared_data(LAYERS, case, "reference").block == 0


def test_the_quantize_tail_divides_in_double():
    # x / scale rounded in float32 lands on k + ½ where the exact quotient is a little below: the
    # reference (float32 division) rounds it away, litert's scalar tail (double division) does not
    assert LAYERS.differing_variants("float_to_uint8_division_ties") > 0


@pytest.mark.parametrize("case", ["int8_to_int8_ties", "uint8_to_uint8_ties", "uint8_to_int8"])
def test_requantize_blocks_round_ties_up(case):
    # optimized_ops::Requantize between 8-bit types: blocks of 16 whose rounding shift sends −2.5 to −2;
    # the reference (and litert's tail) sends it to −3
    assert LAYERS.differing_variants(case) > 0
    assert fast_path_of(LAYERS, case).block_table is not None


@pytest.mark.parametrize("case", ["float_per_channel_int8", "int16_to_int8_ties", "int32_to_int16",
                                  "float_to_int8_specials", "int8_to_uint8_shift_only"])
def test_variants_agree_elsewhere(case):
    # per-channel quantization and requantization from int16 / int32 run the reference loop in both
    # builds; NaN and ±inf become INT32_MIN + zero point in both; a shift-only requantization has no ties
    assert differing_bits(LAYERS, case) == 0


def test_integer_inputs_read_a_table():
    assert fast_path_of(LAYERS, "int16_to_int16").name == "table"
    assert fast_path_of(LAYERS, "int16_to_int16").block_table is None
    assert fast_path_of(LAYERS, "float_to_int8") is None and fast_path_of(LAYERS, "int32_to_int8") is None
