"""PAD and PADV2 (one family: kernels/_pad.py, no speed layer): the teaching layer is bit-exact with
LiteRT's builtin kernels and with its BUILTIN_REF kernels (a copy: one variant); float32, uint8, int8,
int16, int32, int64 and bool, quantized pads with the output's zero point, PADV2's constant."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import F32, I8, I16, I32, I64, U8, pad
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

QUANT = {F32: None, U8: (0.1, 255), I8: (0.1, 7), I16: (0.001, 0), I32: None, I64: None, np.dtype(np.bool_): None}
CASES = {f"pad_{dt.name}": pad(B.PAD, dt, (2, 3, 2), [[1, 0], [0, 2], [1, 1]], q) for dt, q in QUANT.items()}
CASES.update({
    "pad_int8_output_zero_point_differs": pad(B.PAD, I8, (2, 3), [[1, 1], [0, 2]], (0.1, 7), (0.2, -5)),
    "pad_float32_rank5": pad(B.PAD, F32, (1, 2, 2, 2, 1), [[0, 0], [1, 0], [0, 1], [1, 1], [0, 0]]),
    "pad_float32_nothing": pad(B.PAD, F32, (2, 3), [[0, 0], [0, 0]]),
    "padv2_float32": pad(B.PADV2, F32, (2, 3), [[1, 1], [0, 2]], constant=-7.5),
    "padv2_uint8": pad(B.PADV2, U8, (2, 3), [[1, 1], [0, 2]], (0.1, 100), constant=250),
    "padv2_int8": pad(B.PADV2, I8, (2, 3), [[1, 1], [0, 2]], (0.1, -3), constant=-128),
    "padv2_int16": pad(B.PADV2, I16, (2, 3), [[1, 1], [0, 2]], (0.001, 0), constant=-32768),
})
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


def test_both_builds_pad_alike():
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)
