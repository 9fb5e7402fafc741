"""The op versions added to close gaps with ai-edge-litert's registry: tiny one-op models with the
version stamped, each run by our fast kernel, our reference (``reference=True``) and litert's
builtin kernels in a child process.

  ADD v4 / SUB v4 / MUL v5 (int64), MUL v6 (complex64), MUL v7 (uint32), ADD v6 / MUL v8 (float16),
  FLOOR_DIV v3 / FLOOR_MOD v2 (int8, int16), SIN v2 / COS v2 / SOFTMAX v4 (float16),
  TRANSPOSE v8 (rank 7 and 8) / v9 (float16), SLICE v8 / CONCATENATION v6 (float16),
  FULLY_CONNECTED v7 (int16 weights) and v8 (sparse weights: float32 random / 1x4, int8 1x16).

Every output element is equal to litert's (bit-exact, NaN included), the sparse float
FULLY_CONNECTED too (its speed layer adds the stored weights in litert's order).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from helpers.litert_batch import run_many
from helpers.version_gaps_cases import CASES, REFUSED, RULES
from workbench import dump
from workbench.errors import UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.registry import BuiltinOpResolver
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.versioning import update_versions

# ------------------------------------------------------------------------------------------------
# the tests


@pytest.fixture(scope="module")
def litert():
    names = list(CASES) + list(REFUSED)
    models = {**{n: m for n, (m, _) in CASES.items()}, **{n: m for n, (m, _, _) in REFUSED.items()}}
    feeds = {**{n: f for n, (_, f) in CASES.items()}, **{n: f for n, (_, f, _) in REFUSED.items()}}
    results = run_many([(dump(models[n]), feeds[n]) for n in names])
    return dict(zip(names, results))


def ours(model, feeds, reference=False):
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    for d, v in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], v)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


@pytest.mark.parametrize("name", list(CASES))
def test_equals_litert(name, litert):
    status, theirs = litert[name]
    assert status == "ok", f"litert: {theirs}"
    model, feeds = CASES[name]
    for reference in (False, True):
        mine = ours(model, feeds, reference)
        assert len(mine) == len(theirs)
        for k, (a, t) in enumerate(zip(mine, theirs)):
            assert a.dtype == t.dtype and a.shape == t.shape, (k, a.dtype, a.shape, t.dtype, t.shape)
            if a.tobytes() != t.tobytes():
                bad = np.flatnonzero(a.reshape(-1).view(np.uint8) != t.reshape(-1).view(np.uint8))
                pytest.fail(f"output {k} ({'reference' if reference else 'fast'}): {a.size} elements, bytes "
                            f"differ at {bad[:8].tolist()}\nours   {a.reshape(-1)[:10]}\nlitert {t.reshape(-1)[:10]}")


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused(name, litert):
    model, feeds, expect = REFUSED[name]
    if expect is not None:
        status, msg = litert[name]
        assert status == expect, f"litert: {status} {msg}"
    with pytest.raises(WorkbenchError) as info:
        ours(model, feeds)
    assert "node 0" in str(info.value)


@pytest.mark.parametrize("name", sorted(RULES))
def test_rules_compute_the_stamped_version(name):
    """Where workbench/versioning/rules.py has the rule, it computes the version the case stamps."""
    model = CASES[name][0]
    stamped = model.operator_codes[0].version
    code = dataclasses.replace(model.operator_codes[0], version=1)
    computed = update_versions(dataclasses.replace(model, operator_codes=(code,))).operator_codes[0].version
    assert computed == stamped == RULES[name]


def test_the_new_versions_are_registered_and_exercised():
    resolver = BuiltinOpResolver()
    seen = {(B(m.operator_codes[0].builtin_code), m.operator_codes[0].version) for m, _ in CASES.values()}
    for key in seen:
        assert key in resolver, key
    new = {(B.ADD, 4), (B.ADD, 6), (B.SUB, 4), (B.MUL, 5), (B.MUL, 6), (B.MUL, 8), (B.FLOOR_DIV, 3),
           (B.FLOOR_MOD, 2), (B.SIN, 2), (B.COS, 2), (B.SOFTMAX, 4), (B.TRANSPOSE, 8), (B.TRANSPOSE, 9),
           (B.SLICE, 8), (B.CONCATENATION, 6), (B.FULLY_CONNECTED, 7), (B.FULLY_CONNECTED, 8)}
    assert new <= seen, sorted(new - seen)


def test_plain_opdata_shows_the_clamps():
    model, _ = CASES["mul_uint32_act2"]
    it = Interpreter(model=model)
    it.allocate_tensors()
    data = it.prepared()[0][2]
    assert (data.output_activation_min, data.output_activation_max) == (2 ** 32 - 1, 1)   # −1 wrapped
    model, _ = CASES["add_float16_act0"]
    it = Interpreter(model=model)
    it.allocate_tensors()
    data = it.prepared()[0][2]
    assert (data.output_activation_min, data.output_activation_max) == (-65504.0, 65504.0)


def test_fc_v7_v8_opdata():
    it = Interpreter(model=CASES["fc_int16_weights_int64_bias_option"][0])
    it.allocate_tensors()
    data = it.prepared()[0][2]
    assert type(data).__name__ == "FullyConnectedInt16WeightsData"
    assert (data.bias_type, data.quantized_bias_type, data.per_channel) == ("int64", "int64", False)
    assert data.output_multiplier.shape == (5,) and it.prepared()[0][1].startswith("fully_connected/blas")
    model = CASES["fc_sparse_int8_1x16"][0]
    it = Interpreter(model=model)
    it.allocate_tensors()
    data = it.prepared()[0][2]
    assert data.sparse_format == "1x16 blocks" and data.stored_weights % 16 == 0
    from workbench.interpreter.kernels.densify import dense_positions

    w = model.subgraphs[0].tensors[model.subgraphs[0].operators[0].inputs[1]]
    flat, _, _ = dense_positions((data.units, data.depth), w.sparsity)
    assert flat.min() >= data.depth                    # the empty first row


def test_rank_above_8_and_sparse_int16_are_typed_errors():
    with pytest.raises(UnsupportedOpError, match="ranks 1 to 8"):
        ours(*REFUSED["transpose_rank9"][:2])
    with pytest.raises(UnsupportedOpError, match="sparse"):
        ours(*REFUSED["fc_sparse_hybrid"][:2])
