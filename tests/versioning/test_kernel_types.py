"""The kernel type table (workbench.versioning.kernel_types) against real kernels.

* every accepted combination the builder can make prepares in the workbench interpreter — except
  the ones in WORKBENCH_GAPS (LiteRT has a kernel, the workbench does not yet), which must still be
  refused, so the list shrinks when work lands;
* every accepted combination prepares and invokes in ai-edge-litert (child processes): the table's
  source of facts;
* signatures no kernel takes — among them three that fall through op_version.cc to v1 — are refused by the workbench
  and (except where LiteRT's prepare does not look) by LiteRT, and the table says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.kernel_type_models import HOLDABLE, build, feeds, recipes
from workbench import load
from workbench.errors import WorkbenchError
from workbench.interpreter import Interpreter
from workbench.schema import BuiltinOperator as B
from workbench.schema import TensorType as T
from workbench.versioning import signature_of
from workbench.versioning.kernel_types import KERNEL_TYPES, VOCABULARY, type_verdict

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
F32, F16, I8, U8, I16, I32, I64, BOOL = T.FLOAT32, T.FLOAT16, T.INT8, T.UINT8, T.INT16, T.INT32, T.INT64, T.BOOL

F16_GAP = "float16: LiteRT's kernel takes it, the workbench's does not (yet)"
BOOL_GAP = "bool: LiteRT's kernel moves the bytes, the workbench's does not take bool"
WORKBENCH_GAPS: dict[tuple, str] = {
    (B.FULLY_CONNECTED, (U8, U8, I16)): "uint8 in, int16 out (the LSTM format): not implemented by the workbench",
    (B.FULLY_CONNECTED, (I16, I16, I16)): "int16 weights (FULLY_CONNECTED v7): the workbench asks for a "
                                           "quantized_bias_type the converter's int16 graphs set",
    (B.DIV, (I32, I32, I32)): "int32 DIV: not implemented by the workbench",
    (B.MAXIMUM, (F16, F16, F16)): F16_GAP, (B.MINIMUM, (F16, F16, F16)): F16_GAP,
    (B.PRELU, (I16, I16, I16)): "int16 PRELU with an int16 alpha: the workbench takes an int8 alpha only",
    (B.TANH, (F16, F16)): F16_GAP, (B.LOGISTIC, (F16, F16)): F16_GAP, (B.GELU, (F16, F16)): F16_GAP,
    (B.QUANTIZE, (I8, I16)): "int8 → int16 requantization: not implemented by the workbench",
    (B.QUANTIZE, (U8, I16)): "uint8 → int16 requantization: not implemented by the workbench",
    (B.MEAN, (I32, I32)): "integer MEAN: not implemented by the workbench",
    (B.MEAN, (I64, I64)): "integer MEAN: not implemented by the workbench",
    (B.PAD, (F16, F16)): F16_GAP, (B.PADV2, (F16, F16)): F16_GAP, (B.MIRROR_PAD, (BOOL, BOOL)): BOOL_GAP,
    (B.SPACE_TO_BATCH_ND, (F16, F16)): F16_GAP, (B.SPACE_TO_BATCH_ND, (BOOL, BOOL)): BOOL_GAP,
    (B.BATCH_TO_SPACE_ND, (F16, F16)): F16_GAP, (B.BATCH_TO_SPACE_ND, (BOOL, BOOL)): BOOL_GAP,
    (B.RESIZE_NEAREST_NEIGHBOR, (F16, F16)): F16_GAP, (B.RESIZE_NEAREST_NEIGHBOR, (BOOL, BOOL)): BOOL_GAP,
}

# type combinations no TFLite kernel takes: (op, {slot: type}, does LiteRT's prepare notice?)
REFUSED = [
    # "v1: no rule applies" to these, and the (op, version) lookup alone would call them runnable
    (B.CONV_2D, {"in0": U8, "in1": I8, "out0": I16}, True),
    (B.DEPTHWISE_CONV_2D, {"in0": I16, "in1": I16, "out0": I16}, False),  # LiteRT reads the filter as int8
    (B.DEPTHWISE_CONV_2D, {"in0": I16, "in1": F32, "out0": I16}, False),
    (B.ADD, {"in0": I16, "in1": F32, "out0": I16}, True),  # the explorer's ADD with only the input set to int16
    (B.ADD, {"in0": I16, "in1": I16, "out0": I8}, False),  # LiteRT's ADD dispatches on the output type alone
    # a few more, one per kernel family
    (B.CONV_2D, {"in0": I16, "in1": I16, "out0": I16}, True),  # the int16×int16 trap row never matches
    (B.CONV_2D, {"in0": I8, "in1": F32, "out0": I8}, True),
    (B.FULLY_CONNECTED, {"in0": I8, "in1": F32, "out0": I8}, True),
    (B.TRANSPOSE_CONV, {"in2": I16, "in1": I16, "out0": I16}, True),
    (B.SUB, {"in0": F16, "in1": F16, "out0": F16}, True),
    (B.SQUARED_DIFFERENCE, {"in0": I16, "in1": I16, "out0": I16}, True),
    (B.HARD_SWISH, {"in0": I16, "out0": I16}, True),
    (B.EXP, {"in0": U8, "out0": U8}, True),
    (B.ABS, {"in0": U8, "out0": U8}, True),
    (B.DEPTH_TO_SPACE, {"in0": I16, "out0": I16}, True),
    (B.RANGE, {"in0": I16, "out0": I16}, True),
]


def _combos():
    for op, entry in sorted(KERNEL_TYPES.items(), key=lambda kv: kv[0].name):
        for got in entry.combinations():
            yield op, dict(zip(entry.slots, got))


def _buildable(op, types: dict) -> bool:
    return op in recipes() and all(t in HOLDABLE and t in VOCABULARY for t in types.values())


ACCEPTED = [(op, types) for op, types in _combos() if _buildable(op, types)]


def _key(op, types):
    return (op, tuple(types[s] for s in KERNEL_TYPES[op].slots))


def _prepare(data: bytes):
    Interpreter(model_content=data).allocate_tensors()


# ---------------------------------------------------------------------------------------------
# the table itself
# ---------------------------------------------------------------------------------------------
def test_every_rule_op_with_type_rows_and_every_explorer_op_has_a_block():
    from workbench.versioning import RULES
    from workbench.versioning.walkthrough import EXPLORER_OPS
    type_words = (" is ", "int8 op", "int16 op", "hybrid", "16x8", "int4", "in/out")
    typed_rules = {op for op, rows in RULES.items() if any(w in r.predicate.name for r in rows for w in type_words)}
    unknown_here = {B.LSTM, B.UNIDIRECTIONAL_SEQUENCE_LSTM, B.BIDIRECTIONAL_SEQUENCE_LSTM, B.RNN,
                    B.UNIDIRECTIONAL_SEQUENCE_RNN, B.BIDIRECTIONAL_SEQUENCE_RNN, B.SVDF}
    missing = sorted(op.name for op in (typed_rules | set(EXPLORER_OPS)) - set(KERNEL_TYPES) - unknown_here)
    assert not missing, missing


def test_rows_are_well_formed():
    for op, entry in KERNEL_TYPES.items():
        assert len(set(entry.slots)) == len(entry.slots) and len(entry.roles) == len(entry.slots), op
        assert all(s[:2] == "in" or s[:3] == "out" for s in entry.slots), op
        assert entry.rows and entry.combinations(), op
        assert entry.header and entry.describe(), op


def test_the_builder_covers_every_op_of_the_table():
    assert set(KERNEL_TYPES) <= recipes()


def test_types_outside_the_vocabulary_get_no_verdict():
    from workbench.versioning.walkthrough import OpConfig, build_op_model
    m = build_op_model(OpConfig(B.CONV_2D, input="int8", weights="int8", output="int8"))
    assert type_verdict(signature_of(m, 0, 0)).ok
    strings = load(SAMPLES / "string_ops.tflite")  # EQUAL, GATHER, STRIDED_SLICE of STRING tensors
    ops = [(s, i) for s, sg in enumerate(strings.subgraphs) for i in range(len(sg.operators))]
    string_ops = [signature_of(strings, s, i) for s, i in ops
                  if any(t.type == T.STRING for t in signature_of(strings, s, i).inputs)]
    assert string_ops and all(type_verdict(sig) is None for sig in string_ops)


# ---------------------------------------------------------------------------------------------
# against the workbench interpreter's kernels
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", sorted({op for op, _ in ACCEPTED}, key=lambda o: o.name), ids=lambda o: o.name)
def test_accepted_combinations_prepare_in_the_workbench(op):
    refused = []
    for o, types in ACCEPTED:
        if o != op or _key(o, types) in WORKBENCH_GAPS:
            continue
        data = build(op, types)
        assert type_verdict(signature_of(load(data), 0, 0)).ok, types
        try:
            _prepare(data)
        except WorkbenchError as exc:
            refused.append(f"{ {k: v.name for k, v in types.items()} }: {exc}")
    assert not refused, "\n".join(refused)


def test_workbench_gaps_are_accepted_rows_the_workbench_still_refuses():
    accepted = {_key(op, types) for op, types in ACCEPTED}
    assert set(WORKBENCH_GAPS) <= accepted, set(WORKBENCH_GAPS) - accepted
    for (op, got), why in WORKBENCH_GAPS.items():
        with pytest.raises(WorkbenchError):
            _prepare(build(op, dict(zip(KERNEL_TYPES[op].slots, got))))


@pytest.mark.parametrize("op,types,litert_notices", REFUSED,
                         ids=[f"{op.name}-" + "-".join(t.name.lower() for t in ty.values()) for op, ty, _ in REFUSED])
def test_refused_combinations_have_no_row_and_the_workbench_refuses_them(op, types, litert_notices):
    data = build(op, types)
    verdict = type_verdict(signature_of(load(data), 0, 0))
    assert verdict is not None and not verdict.ok
    assert verdict.types_text() == ", ".join(f"{r} {types[s].name}" for r, s in zip(verdict.entry.roles,
                                                                                   verdict.entry.slots))
    with pytest.raises(WorkbenchError):
        _prepare(data)


def test_the_all_int16_add_runs_whatever_pot_scale_int16_says():
    """ADD int16 with pot_scale_int16: LiteRT (and TFLite since 1.10.0, whose ADD gained an int16 kernel)
    runs it — through the power-of-two path when the scales are powers of two, the general one otherwise."""
    from workbench.versioning.walkthrough import OpConfig, build_op_model
    for pot in (True, False):
        m = build_op_model(OpConfig(B.ADD, input="int16", weights="int16", output="int16", pot_scale_int16=pot))
        assert type_verdict(signature_of(m, 0, 0)).ok
        from workbench import dump
        _prepare(dump(m))


# ---------------------------------------------------------------------------------------------
# against ai-edge-litert, the source of the facts
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def litert_results():
    pytest.importorskip("ai_edge_litert")
    from helpers.litert_batch import run_many
    jobs = [(build(op, types), feeds(build(op, types))) for op, types in ACCEPTED]
    refused = [(build(op, types), feeds(build(op, types))) for op, types, notices in REFUSED if notices]
    out = run_many(jobs + refused)
    return out[:len(jobs)], out[len(jobs):]


def test_every_accepted_combination_runs_in_litert(litert_results):
    accepted, _ = litert_results
    bad = [f"{op.name} { {k: v.name for k, v in types.items()} }: {res[1][:160]}"
           for (op, types), res in zip(ACCEPTED, accepted) if res[0] != "ok"]
    assert not bad, "\n".join(bad)


def test_litert_refuses_the_refused_combinations(litert_results):
    _, refused = litert_results
    cases = [(op, types) for op, types, notices in REFUSED if notices]
    ran = [f"{op.name} { {k: v.name for k, v in types.items()} }" for (op, types), res in zip(cases, refused)
           if res[0] == "ok"]
    assert not ran, ran
