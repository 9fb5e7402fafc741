"""GATHER: the teaching layer (kernels/gather.py; no speed layer) is bit-exact with LiteRT's builtin
kernels and with its BUILTIN_REF kernels (a copy: one variant); every params type, int16 / int32 /
int64 indices, an axis past 0, batch_dims, indices given at run time, and against the plain loop it
replaced."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import F32, I8, I16, I32, I64, U8, gather
from helpers.op_layers import OpLayers

QUANT = {F32: None, np.dtype(np.float16): None, I32: None, I64: None, U8: (0.1, 3), I8: (0.1, -3),
         np.dtype(np.bool_): None, I16: (0.01, 0)}
CASES = {f"{dt.name}": gather(dt, (4, 3, 2), np.array([3, 0, 0, 2], np.int32), q=q) for dt, q in QUANT.items()}
CASES.update({
    "float32_axis1_int64_indices": gather(F32, (2, 5, 3), np.array([[4, 0], [1, 1]], np.int64), axis=1),
    "float32_negative_axis": gather(F32, (2, 5, 3), np.array([2, 0], np.int32), axis=-1),
    "float32_batch_dims": gather(F32, (2, 5, 3), np.array([[4, 0, 2], [1, 1, 3]], np.int32), axis=1, batch_dims=1),
    "int8_int16_indices": gather(I8, (6, 2), np.array([5, 1], np.int16), q=(0.1, 0)),
    "float32_indices_at_run_time": gather(F32, (6, 2), np.array([5, 1, 0], np.int32), const_indices=False),
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


@pytest.mark.parametrize("axis, batch_dims", [(0, 0), (1, 0), (2, 0), (1, 1), (2, 1), (2, 2)])
def test_gather_is_the_plain_loop(axis, batch_dims):
    """The fancy indexing over [batch, outer, axis, inner] against the obvious loop over every index."""
    from workbench.interpreter.kernels.gather import GatherData
    from workbench.interpreter.kernels.gather import gather as gather_fn

    rng = np.random.default_rng(axis * 3 + batch_dims)
    params = rng.integers(0, 100, (2, 3, 4, 2))
    indices = rng.integers(0, params.shape[axis], params.shape[:batch_dims] + (2, 3))
    shape = params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]
    want = np.empty(shape, params.dtype)
    for b in np.ndindex(*params.shape[:batch_dims]):
        for o in np.ndindex(*params.shape[batch_dims:axis]):
            for k in np.ndindex(*indices.shape[batch_dims:]):
                want[b + o + k] = params[b + o + (int(indices[b + k]),)]
    blocks = (int(np.prod(params.shape[:batch_dims])), int(np.prod(params.shape[batch_dims:axis])),
              params.shape[axis], int(np.prod(params.shape[axis + 1:])))
    d = GatherData(axis, batch_dims, shape, blocks)
    assert np.array_equal(gather_fn(params, indices, d), want)
