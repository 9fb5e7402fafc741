"""DEQUANTIZE: the teaching layer (kernels/dequantize.py; no speed layer: numpy is the kernel) is
bit-exact with LiteRT's builtin kernels by default and with LiteRT's BUILTIN_REF kernels under the
reference variant — uint8, int8, int16 per tensor, int8 / uint8 per channel, float16 (a constant,
folded at allocate time) — and the variants part where litert's blocks of 8 compute
q·scale + (−zp·scale) with two roundings (Variant.quantize_block)."""

from __future__ import annotations

import pytest

from helpers.binary_cases import F16, I8, I16, U8, dequantize, differing_bits, prepared_data
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

D = B.DEQUANTIZE
CASES = {
    "uint8": dequantize(D, U8, (2, 165), (0.0371, 120)),
    "int8": dequantize(D, I8, (3, 37), (0.0173, -5)),
    "int16": dequantize(D, I16, (2, 165), (0.000371, 0)),
    "int8_per_channel": dequantize(D, I8, (4, 3, 7), ([0.01, 0.02, 0.0371, 0.5], [0, 3, -5, 0]), axis=0),
    "uint8_per_channel_last_axis": dequantize(D, U8, (3, 2, 5), ([0.01, 0.02, 0.0371, 0.5, 0.0173],
                                                                 [128, 3, 250, 0, 1]), axis=2),
    "float16_constant": dequantize(D, F16, (3, 40), None, const=True),
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


@pytest.mark.parametrize("case", ["uint8", "int8"])
def test_dequantize_blocks_round_twice(case):
    # optimized_ops::Dequantize: q·scale and + (−zp·scale) each rounded to float32 in the blocks of 8;
    # the reference rounds scale·(q − zp) once
    assert LAYERS.differing_variants(case) > 0
    assert prepared_data(LAYERS, case).block == 8 and prepared_data(LAYERS, case, "reference").block == 0


@pytest.mark.parametrize("case", ["int16", "int8_per_channel", "uint8_per_channel_last_axis", "float16_constant"])
def test_variants_agree_elsewhere(case):
    # a zero point of 0 leaves one rounding in the blocks too; per-channel and float16 run the reference
    assert differing_bits(LAYERS, case) == 0
