"""Our op registry against ai-edge-litert's builtin op resolver, (op, version) by (op, version).

The probe (``tests/helpers/litert_op_probe.py``, shared with ``dev/litert_op_coverage.py``) hands litert
one-operator models for every builtin op and version 1..16 and the custom ops its
BuiltinOpResolver adds, in child processes.  Then:

  (i)  every (op, version) our BuiltinOpResolver registers, litert registers too — except our own
       custom ops (MediaPipe's and workbench-offload);
  (ii) every (op, version) litert registers and we lack is in KNOWN_GAPS below, with its reason;
  (iii) nothing in KNOWN_GAPS is registered by us (the table shrinks when work lands) and every
       entry is still registered by litert (no stale rows).

Reasons, by kind:
  b  — the version exists for a tensor type this interpreter cannot hold in numpy (int4, int2,
       uint4, bfloat16): left unregistered, so a model asking for it fails at allocate;
  c  — no op_version rule we could read produces the version (the newest copy read, LiteRT's
       tflite/converter/tools/versioning/op_version.cc @119ae633, stops below it), or the rule is
       a known trap, or litert's kernel refuses what the version means at prepare;
  exotic — an op (or a legacy format) nobody's models use, or one this workbench does not
       implement at all;
  not ours — implementable, but the kernel file belongs to another area of the project.
"""

from __future__ import annotations

import pytest

from helpers.litert_op_probe import litert_registered, our_registered
from workbench.interpreter.registry import format_versions
from workbench.schema import BuiltinOperator as B

# our own custom ops, which litert cannot know
OUR_CUSTOM_OPS = {"Convolution2DTransposeBias", "Landmarks2TransformMatrix", "TransformLandmarks",
                  "TransformTensorBilinear", "workbench-offload"}

INT4 = "b: int4 tensors — a type this interpreter cannot hold"
INT2 = "b: int2 tensors — a type this interpreter cannot hold"
UINT4 = "b: uint4 tensors — a type this interpreter cannot hold"
BF16 = "b: bfloat16 tensors — a type this interpreter cannot hold"
NO_RULE = "c: no op_version rule we could read produces this version (LiteRT op_version.cc @119ae633 stops below)"


def _op(name, reason, versions=(1,)):
    return {(name, v): reason for v in versions}


KNOWN_GAPS: dict[tuple[str, int], str] = {
    # ---- whole ops
    **_op("HASHTABLE_LOOKUP", "exotic: TF 1.x string-hash lookup"),
    **_op("LSH_PROJECTION", "exotic: locality-sensitive hashing of TF 1.x text models"),
    **_op("SKIP_GRAM", "exotic: n-gram extraction of TF 1.x text models"),
    **_op("EMBEDDING_LOOKUP_SPARSE", "exotic: sparse embedding combiner of TF 1.x"),
    **_op("FAKE_QUANT", "exotic: a training-time op that converters fold away", (1, 2)),
    **_op("CONV_3D", "exotic: 3-D convolution, not implemented by the workbench"),
    **_op("CONV_3D_TRANSPOSE", "exotic: 3-D transposed convolution, not implemented by the workbench"),
    **_op("HASHTABLE", "exotic: resource hash table"),
    **_op("HASHTABLE_FIND", "exotic: resource hash table"),
    **_op("HASHTABLE_IMPORT", "exotic: resource hash table"),
    **_op("HASHTABLE_SIZE", "exotic: resource hash table"),
    **_op("RANDOM_STANDARD_NORMAL", "exotic: random op (Philox stream), nothing to compare bit for bit"),
    **_op("RANDOM_UNIFORM", "exotic: random op (Philox stream), nothing to compare bit for bit"),
    **_op("MULTINOMIAL", "exotic: random op (Philox stream), nothing to compare bit for bit"),
    **_op("BITCAST", "exotic: reinterprets bytes between types, not implemented"),
    **_op("DILATE", "exotic: StableHLO-derived op"),
    **_op("REDUCE_WINDOW", "exotic: StableHLO-derived op"),
    **{k: "exotic: StableHLO op" for name in ("STABLEHLO_ADD", "STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM",
                                              "STABLEHLO_AND", "STABLEHLO_MINIMUM", "STABLEHLO_SCATTER",
                                              "STABLEHLO_PAD", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_GATHER",
                                              "STABLEHLO_RNG_BIT_GENERATOR", "STABLEHLO_COMPOSITE",
                                              "STABLEHLO_SHIFT_LEFT", "STABLEHLO_CASE")
       for k in _op(name, "")},
    **_op("Mfcc", "exotic: TF audio custom op, not implemented"),
    **_op("AudioSpectrogram", "exotic: TF audio custom op, not implemented"),
    **_op("NumericVerify", "exotic: custom op of TFLite's quantization debugger"),
    **_op("aeq.hadamard_rotation", "exotic: LiteRT-internal custom op"),
    # ---- versions of ops we have
    ("CONCATENATION", 5): INT4,
    ("CONCATENATION", 7): NO_RULE,
    ("CONV_2D", 4): "c: trap row — the int16×int16 rule tests outputs[1], which a CONV_2D does not have",
    ("CONV_2D", 7): INT4 + " (int8 × int4 weights)",
    ("DEPTHWISE_CONV_2D", 4): "c: per-tensor hybrid depthwise — litert's prepare refuses it (one scale, C "
                              "channels)",
    ("DEPTHWISE_CONV_2D", 5): "c: trap row — the int16×int16 rule tests outputs[1], which a DEPTHWISE has not",
    ("DEPTHWISE_CONV_2D", 7): INT4 + " (int8 × int4 weights)",
    ("DEQUANTIZE", 4): "c: no rule ever produces DEQUANTIZE v4 (op_version.cc)",
    ("DEQUANTIZE", 8): UINT4,
    ("DEQUANTIZE", 9): NO_RULE,
    ("EMBEDDING_LOOKUP", 4): "not ours: int4 tables (b) or per-channel int8 tables (implementable; "
                             "embedding_lookup.py is outside the version-gap files)",
    ("EMBEDDING_LOOKUP", 5): INT2,
    ("FULLY_CONNECTED", 2): "exotic: SHUFFLED4x16INT8 weights (uint8 in, int16 out, a workspace output), a "
                            "legacy Android format no converter emits any more",
    ("FULLY_CONNECTED", 10): INT4 + " (int8 × int4 weights)",
    ("FULLY_CONNECTED", 13): INT4 + " (int16 × int4 weights)",
    ("FULLY_CONNECTED", 14): INT2 + " (int2 weights)",
    ("LSTM", 2): "not ours: kernel_type BASIC (the 4-input basic LSTM cell); lstm.py is outside the "
                 "version-gap files",
    ("PAD", 6): NO_RULE + "; litert's kernel takes float16 at any version (_pad.py is not in this area)",
    ("PADV2", 6): NO_RULE + "; litert's kernel takes float16 at any version (_pad.py is not in this area)",
    ("GATHER", 7): INT4,
    ("GATHER", 8): NO_RULE,
    ("TRANSPOSE", 7): INT4,
    ("SPLIT", 5): NO_RULE + "; litert's kernel refuses float16, bfloat16, int4",
    ("SPLIT_V", 3): NO_RULE + "; litert's kernel refuses float16, bfloat16, int4",
    ("PACK", 5): NO_RULE + "; litert's kernel refuses float16, bfloat16, int4",
    ("UNPACK", 6): NO_RULE,
    ("REVERSE_V2", 4): NO_RULE,
    ("GATHER_ND", 6): NO_RULE + "; float16 params run at any registered version",
    ("BROADCAST_TO", 4): NO_RULE,
    ("FILL", 5): NO_RULE,
    ("GELU", 3): NO_RULE + "; litert's kernel also takes float16 at any version (not implemented here)",
    ("CAST", 6): INT4 + " (int4 → float32)",
    ("CAST", 7): BF16,
    ("CAST", 8): INT2 + " / uint4",
    ("CAST", 9): NO_RULE,
    ("SLICE", 7): INT4,
    ("QUANTIZE", 4): INT4,
    ("QUANTIZE", 5): UINT4,
    ("QUANTIZE", 6): "c: no rule ever produces QUANTIZE v6 (op_version.cc)",
    ("DYNAMIC_UPDATE_SLICE", 5): INT4,
    ("DYNAMIC_UPDATE_SLICE", 6): BF16,
}


def _label(op) -> str:
    return op if isinstance(op, str) else B(op).name


@pytest.fixture(scope="module")
def registries():
    theirs = {_label(op): vs for op, vs in litert_registered().items()}
    ours = {_label(op): vs for op, vs in our_registered().items()}
    return theirs, ours


def test_we_register_nothing_litert_lacks(registries):
    theirs, ours = registries
    extra = {name: sorted(vs - theirs.get(name, set())) for name, vs in ours.items()
             if name not in OUR_CUSTOM_OPS}
    extra = {k: format_versions(v) for k, v in extra.items() if v}
    assert not extra, f"registered by us, not by litert: {extra}"


def test_our_custom_ops_are_registered_and_unknown_to_litert(registries):
    theirs, ours = registries
    assert OUR_CUSTOM_OPS <= set(ours), OUR_CUSTOM_OPS - set(ours)
    assert not OUR_CUSTOM_OPS & set(theirs)


def test_every_gap_is_a_known_gap(registries):
    theirs, ours = registries
    gaps = {(name, v) for name, vs in theirs.items() for v in vs if v not in ours.get(name, set())}
    unknown = sorted(gaps - set(KNOWN_GAPS))
    assert not unknown, ("litert registers these and we do not; implement them or add them to KNOWN_GAPS with a "
                         f"reason: {unknown}")


def test_known_gaps_are_not_registered_by_us(registries):
    _, ours = registries
    closed = sorted(k for k in KNOWN_GAPS if k[1] in ours.get(k[0], set()))
    assert not closed, f"now registered by us — remove them from KNOWN_GAPS: {closed}"


def test_known_gaps_are_still_registered_by_litert(registries):
    theirs, _ = registries
    stale = sorted(k for k in KNOWN_GAPS if k[1] not in theirs.get(k[0], set()))
    assert not stale, f"litert does not register these (any more): {stale}"


def test_every_known_gap_has_a_one_line_reason():
    for key, reason in KNOWN_GAPS.items():
        assert reason and "\n" not in reason, key
        assert reason.split(":")[0] in ("b", "c", "exotic", "not ours", "in progress"), (key, reason)
