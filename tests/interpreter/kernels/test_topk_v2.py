"""TOPK_V2: the teaching layer (kernels/topk_v2.py; no speed layer) is bit-exact with LiteRT's builtin
kernels and with its BUILTIN_REF kernels (one kernel in both builds); float32, int32, int64, uint8,
int8 and int16, with many equal values (lower index first), and against the plain sort it replaced."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import F32, I8, I16, I32, I64, U8, topk
from helpers.op_layers import OpLayers

QUANT = {F32: None, I32: None, I64: None, U8: (0.1, 3), I8: (0.1, -3), I16: (0.01, 0)}
CASES = {}
for dt, q in QUANT.items():
    CASES[f"{dt.name}"] = topk(dt, (3, 11), 4, q)
    CASES[f"{dt.name}_ties"] = topk(dt, (4, 12), 5, q, ties=True)
CASES["float32_rank3_k_all"] = topk(F32, (2, 3, 6), 6)
CASES["float32_k0"] = topk(F32, (2, 5), 0)
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


def test_both_builds_pick_alike():
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)


@pytest.mark.parametrize("k", [1, 3, 7])
def test_top_k_is_the_plain_sort(k):
    """The stable argsort of the reversed row against sorting each row by (−value, index)."""
    from workbench.interpreter.kernels.topk_v2 import top_k

    rng = np.random.default_rng(k)
    x = rng.integers(-3, 4, (20, 9)).astype(np.float32)          # many ties
    want = [sorted(range(9), key=lambda i: (-float(row[i]), i))[:k] for row in x]
    assert top_k(x, k).tolist() == want
