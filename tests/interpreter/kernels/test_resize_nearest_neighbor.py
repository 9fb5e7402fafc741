"""RESIZE_NEAREST_NEIGHBOR: the teaching layer (kernels/resize_nearest_neighbor.py; no speed layer) is
bit-exact with LiteRT's builtin kernels and with its BUILTIN_REF kernels (one variant: nothing is
rounded); float32, int32, uint8, int8 and int16, with align_corners, half_pixel_centers, up and down."""

from __future__ import annotations

import pytest

from helpers.misc_cases import F32, I8, I16, I32, U8, resize
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

RN = B.RESIZE_NEAREST_NEIGHBOR
QUANT = {F32: None, I32: None, U8: (0.1, 128), I8: (0.1, -3), I16: (0.001, 0)}
SHAPES = {
    "up": ((1, 3, 4, 2), (7, 9), {}),
    "align": ((1, 4, 5, 3), (7, 8), {"align_corners": True}),
    "half_pixel": ((2, 5, 4, 2), (3, 9), {"half_pixel_centers": True}),
    "down": ((1, 9, 8, 2), (4, 3), {}),
    "down_align": ((1, 9, 8, 1), (4, 3), {"align_corners": True}),
    "up_half_pixel": ((1, 4, 3, 1), (8, 7), {"half_pixel_centers": True}),
}
CASES = {f"{dt.name}_{name}": resize(RN, dt, shape, size, QUANT[dt], **opts)
         for dt in QUANT for name, (shape, size, opts) in SHAPES.items()}
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


def test_both_builds_pick_the_same_pixels():
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)
