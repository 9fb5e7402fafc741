"""DEPTH_TO_SPACE: the teaching layer (kernels/depth_to_space.py; no speed layer) is bit-exact with
LiteRT's builtin kernels and with its BUILTIN_REF kernels (a copy: one variant) — which have no
version 2 (int8; that refusal is pinned down below); float32, uint8, int8, int32, int64."""

from __future__ import annotations

import pytest

from helpers.misc_cases import F32, I8, I32, I64, U8, depth_to_space, litert_one
from helpers.op_layers import OpLayers

QUANT = {F32: None, U8: (0.1, 3), I8: (0.1, -3), I32: None, I64: None}
CASES = {f"{dt.name}_block2": depth_to_space(dt, (1, 2, 3, 8), 2, q) for dt, q in QUANT.items()}
CASES["float32_block3_batch2"] = depth_to_space(F32, (2, 1, 2, 18), 3)
CASES["uint8_block1"] = depth_to_space(U8, (1, 2, 2, 3), 1, (0.1, 0))
LAYERS = OpLayers(CASES)
NOT_IN_BUILTIN_REF = ["int8_block2"]          # DEPTH_TO_SPACE version 2


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(set(CASES) - set(NOT_IN_BUILTIN_REF)))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


def test_litert_builtin_ref_has_no_int8_depth_to_space():
    status, message = litert_one(LAYERS, "int8_block2")
    assert status == "error" and "Didn't find op for builtin opcode 'DEPTH_TO_SPACE' version '2'" in message


def test_both_builds_move_alike():
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)
