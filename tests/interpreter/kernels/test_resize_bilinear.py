"""RESIZE_BILINEAR: the teaching layer (kernels/resize_bilinear.py; no speed layer) gives the same bits
under both variants whatever runs it, the default interpreter is bit-exact with LiteRT's builtin
kernels and the reference variant with its BUILTIN_REF kernels; float32, uint8, int8 and int16, with
align_corners, half_pixel_centers, up and down, and the builtin kernel's own shapes (float 2x, uint8
exact 8x)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import F32, I8, I16, U8, prepared, resize
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

RB = B.RESIZE_BILINEAR
QUANT = {F32: None, U8: (0.05, 128), I8: (0.05, -3), I16: (0.001, 0)}
SHAPES = {
    "up": ((1, 4, 5, 3), (8, 7), {}),
    "2x": ((2, 3, 4, 2), (6, 8), {}),
    "2x_deep": ((1, 3, 4, 37), (6, 8), {}),
    "align": ((1, 4, 5, 2), (7, 9), {"align_corners": True}),
    "half_pixel": ((2, 5, 4, 3), (10, 8), {"half_pixel_centers": True}),
    "down": ((1, 9, 8, 2), (4, 3), {}),
    "down_half_pixel": ((1, 9, 8, 2), (4, 3), {"half_pixel_centers": True}),
    "8x_half_pixel": ((1, 2, 3, 8), (16, 24), {"half_pixel_centers": True}),
    "8x_half_pixel_depth3": ((1, 2, 2, 3), (16, 16), {"half_pixel_centers": True}),
    "big": ((1, 7, 9, 16), (33, 20), {}),
    "big_half_pixel": ((1, 7, 9, 16), (33, 20), {"half_pixel_centers": True}),
}
CASES = {f"{dt.name}_{name}": resize(RB, dt, shape, size, QUANT[dt], **opts)
         for dt in QUANT for name, (shape, size, opts) in SHAPES.items()}
CASES["uint8_8x_half_pixel_depth16_batch2"] = resize(RB, U8, (2, 3, 1, 16), (24, 8), QUANT[U8], half_pixel_centers=True)
CASES["int16_up_extremes"] = resize(RB, I16, (1, 2, 2, 2), (5, 3), QUANT[I16],
                                    values=np.array([-32768, 32767] * 4, np.int16).reshape(1, 2, 2, 2))
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


@pytest.mark.parametrize("case", ["float32_big", "float32_half_pixel", "float32_2x", "uint8_big"])
def test_the_builds_add_the_corners_differently(case):
    # the reference kernel multiplies each corner by (1 − dy) then by (1 − dx); the optimized one
    # multiplies the two weights first and adds the corners in another order (float 2x: halved sums)
    assert LAYERS.differing_variants(case) > 0


@pytest.mark.parametrize("case", sorted(c for c in CASES if c.startswith(("int8", "int16"))))
def test_integer_types_resize_alike_in_both_builds(case):
    # ResizeBilinearInteger in both: no rounding differs
    assert LAYERS.differing_variants(case) == 0


def test_the_uint8_8x_kernel_is_the_builtin_builds_own():
    assert prepared(LAYERS, "uint8_8x_half_pixel").exact_8x
    assert prepared(LAYERS, "uint8_8x_half_pixel_depth16_batch2").exact_8x
    assert not prepared(LAYERS, "uint8_8x_half_pixel_depth3").exact_8x          # depth not a multiple of 8
    assert not prepared(LAYERS, "uint8_8x_half_pixel", variant="reference").exact_8x
