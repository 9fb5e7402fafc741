"""DENSIFY: the teaching layer (kernels/densify.py; no speed layer: one numpy scatter, evaluated once at
allocate) is bit-exact with LiteRT's builtin kernels and, under the reference variant, with LiteRT's
BUILTIN_REF kernels — float32, float16 and int8 constants stored as CSR rows, in 1x4 and 1x16 blocks,
with an empty row."""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np
import pytest

from helpers.op_layers import OpLayers
from helpers.version_gaps_cases import sparse_levels
from workbench.interpreter.kernels.densify import densify
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder


def densify_case(shape, dtype, block, density=0.3):
    def build(name):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if np.dtype(dtype).kind == "f":
            dense = rng.standard_normal(shape).astype(dtype)
        else:
            dense = rng.integers(-127, 128, shape).astype(dtype)
        keep = np.repeat(rng.random((shape[0], shape[1] // block)) < density, block, axis=1)
        keep[1] = False                                          # a row with nothing stored
        stored, sparsity = sparse_levels(np.where(keep, dense, 0).astype(dtype), block)
        b = ModelBuilder()
        w = b.constant("sparse", stored)
        b.tensors[w] = dataclasses.replace(b.tensors[w], shape=shape, sparsity=sparsity)
        y = b.tensor("dense", shape, dtype)
        b.op(B.DENSIFY, [w], [y])
        b.output(y)
        return b, {}
    return build


CASES = {
    "float32_csr": densify_case((6, 16), np.float32, 1),
    "float32_1x4_blocks": densify_case((8, 32), np.float32, 4),
    "float16_1x4_blocks": densify_case((4, 16), np.float16, 4, density=0.6),
    "int8_1x16_blocks": densify_case((5, 64), np.int8, 16, density=0.5),
    "int8_csr": densify_case((3, 7), np.int8, 1, density=0.5),
}
LAYERS = OpLayers(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_runs_in_both_modes(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


def test_both_builds_densify_alike():
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)


def test_densify_function_places_every_stored_value():
    model, _ = LAYERS.build("float32_1x4_blocks")
    t = model.subgraphs[0].tensors[0]
    stored = np.frombuffer(bytes(model.buffers[t.buffer].data), np.float32)
    dense = densify(stored, tuple(t.shape), t.sparsity)
    assert np.count_nonzero(dense) == np.count_nonzero(stored) and not dense[1].any()
    assert sorted(dense[dense != 0].tolist()) == sorted(stored[stored != 0].tolist())
