"""SEGMENT_SUM and UNSORTED_SEGMENT_{SUM,PROD,MAX,MIN} (one family: kernels/_segment.py, no speed
layer): the teaching layer gives the same bits whatever runs it, the default interpreter is bit-exact
with LiteRT's builtin kernels and the reference variant with its BUILTIN_REF kernels — which have no
SEGMENT_SUM (that refusal is pinned down below); float32 and int32."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import F32, I32, litert_one, segment_sum, unsorted_segment
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

UNSORTED = {"sum": B.UNSORTED_SEGMENT_SUM, "prod": B.UNSORTED_SEGMENT_PROD, "max": B.UNSORTED_SEGMENT_MAX,
            "min": B.UNSORTED_SEGMENT_MIN}
CASES = {
    "segment_sum_float32": segment_sum(F32, (6, 3, 2), [0, 0, 1, 2, 2, 2]),
    "segment_sum_float32_long_segment": segment_sum(F32, (40, 3), [0] * 3 + [1] * 37),
    "segment_sum_int32": segment_sum(I32, (5, 4), [0, 1, 1, 1, 2]),
}
for kind, op in UNSORTED.items():
    CASES[f"unsorted_{kind}_float32"] = unsorted_segment(op, F32, (6, 3), [2, 0, 2, 1, 0, 2], 4)
    CASES[f"unsorted_{kind}_float32_negative_id"] = unsorted_segment(op, F32, (5, 2), [1, -1, 0, 1, 1], 3)
    CASES[f"unsorted_{kind}_int32_2d_ids"] = unsorted_segment(op, I32, (2, 3, 2), [[1, 0, 1], [3, 1, 0]], 5)
LAYERS = OpLayers(CASES)
NOT_IN_BUILTIN_REF = sorted(c for c in CASES if c.startswith("segment_sum"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(set(CASES) - set(NOT_IN_BUILTIN_REF)))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


def test_litert_builtin_ref_has_no_segment_sum():
    status, message = litert_one(LAYERS, "segment_sum_int32")
    assert status == "error" and "Didn't find op for builtin opcode 'SEGMENT_SUM' version '1'" in message


def test_both_builds_combine_alike():
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)


@pytest.mark.parametrize("kind", sorted(UNSORTED))
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_segment_reduce_is_the_plain_loop(kind, dtype):
    """``ufunc.at`` combines repeated ids one after another, as the row-by-row loop does (float sums
    in the same order)."""
    from workbench.interpreter.kernels._segment import UFUNC, identity, segment_reduce

    rng = np.random.default_rng(3)
    data = (rng.uniform(-3, 3, (50, 4)) if dtype is np.float32 else rng.integers(-3, 4, (50, 4))).astype(dtype)
    ids = rng.integers(-1, 7, 50).astype(np.int32)
    want = np.full((6, 4), identity(kind, np.dtype(dtype)), dtype)
    for i, s in enumerate(ids):
        if 0 <= s < 6:
            want[s] = UFUNC[kind](want[s], data[i])
    got = segment_reduce(kind, data, ids, 6)
    assert got.dtype == want.dtype and np.array_equal(got.view(np.uint32), want.view(np.uint32))
