"""The converter-made sample models in ``sample_models/`` (made by ``dev/convert_sample_models.py``).

These files were written by the current TFLite converter (TensorFlow 2.21, see the manifest; the
``*_aeq_*`` files then quantized by the AI Edge Quantizer 0.10.0), so they are the acceptance test
of the version rules: for every builtin operator of every file, the version today's rules compute
equals the version the converter stored — and where it does not, the difference is listed below,
as data, with the reason.  The rules are never bent to make a file match; a new difference must be
added here, with its explanation, by a person.

Three kinds of difference exist:

* SHARED_CODE — not a rule deviation.  The converter writes one OperatorCode per builtin op and
  stamps it with the highest version over the operators that use it (its UpdateOpVersion only
  raises a code's version; ``op_version.cc``), so an operator whose own version is lower shows
  its code's higher version.  For these files the per-code maximum of the computed versions equals
  the stored version exactly (``test_each_operator_code_stores_the_max_computed_version``).
* INT16X8 — a converter deviation.  For 16x8 quantization TensorFlow's ``lite.py`` does not use
  the MLIR quantizer (``_quantize``: ``experimental_new_quantizer and activations_type != int16``);
  it calibrates and quantizes the already-converted flatbuffer with the older flatbuffer-level
  quantizer, which stamps each op with the version of its operator-property table — the int8
  versions (CONV_2D 3, FULLY_CONNECTED 4, MAX_POOL_2D 2, SOFTMAX 2; QUANTIZE 1 and DEQUANTIZE 2 as
  inserted) — and re-runs neither the version pass nor the minimum-runtime pass: the file keeps the
  float model's ``min_runtime_version`` "1.5.0".  Today's rules see int16 activations (and the
  explicitly stored ``quantized_bias_type=INT64``) and compute the 16x8 versions — or, where
  TFLite has no int16 rule for an op (DEPTHWISE_CONV_2D, TILE, TRANSPOSE_CONV), a lower one.
* AEQ — a quantizer deviation.  The AI Edge Quantizer (``ai-edge-quantizer``, the ``*_aeq_*``
  files) rewrites the tensors of a converted float file to int8 / int16 (or adds int8 weights for
  its dynamic recipe) but never touches the OperatorCodes: every code keeps the float file's
  version, and the file keeps the float file's ``min_runtime_version``.  LiteRT runs such files
  because its kernels dispatch on tensor types, not on the version.

The one-feature files list their differences per operator (EXPECTED_DIFFERENCES); the realistic
models (MobileNet / EfficientNet / ResNet blocks, U-Net, transformer, audio, LSTM, GRU, SSD head;
see ``dev/convert_sample_models.py``) and the architectures ``dev/quantized_sweep.py`` found
(SWEEP_ARCHITECTURES: ASPP, YOLO head, CRNN, bidirectional LSTM, decoders, grouped convolutions,
pixel plumbing) list them as counts per (op, stored, computed) (EXPECTED_DIFFERENCE_COUNTS), since a
quantizer deviation touches most operators of a file.

Every model also runs in the workbench's interpreter and in ai-edge-litert on the same seeded
inputs: float outputs within ``rtol=1e-4`` (``atol=1e-6``) of LiteRT's, the outputs of quantized
files (full int8, 16x8, the quantizer's static recipes) bitwise equal; and every node of a
quantized file, fed LiteRT's own input tensors, gives LiteRT's integer outputs bitwise (equal final
outputs can hide a one-off inside).  What does not hold yet is listed, never skipped:
NOT_YET_RUNNABLE (the op and types that stop a file; the refusal must be a typed WorkbenchError,
never garbage or a raw numpy error), KNOWN_OUTPUT_MISMATCHES and KNOWN_KERNEL_MISMATCHES.  Each of
these tests fails as soon as a listed problem is gone, so the entry gets deleted.

No TensorFlow is needed here: only the committed files, the workbench and ai-edge-litert (run in
a child process by ``litert_runner.py``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import sys
import zlib
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

import workbench
from helpers import litert_runner
from helpers.sample_model_facts import (
    AEQ,
    DEVIATIONS,
    ENTRIES,
    EXPECTED_DIFFERENCE_COUNTS,
    EXPECTED_DIFFERENCES,
    INT16X8,
    NAMES,
    ROOT,
    SAMPLES,
    SHARED_CODE,
    _deviation_ops,
    _rows,
)
from workbench.errors import WorkbenchError
from workbench.interpreter import Interpreter
from workbench.schema import BuiltinOperator as B
from workbench.schema import builtin_code, op_name
from workbench.versioning import (
    computed_versions,
    min_runtime,
    read_min_runtime_metadata,
    update_versions,
)

# model → (min_runtime_version metadata, from stored versions, from computed versions, ops driving computed)
EXPECTED_MIN_RUNTIME: dict[str, tuple[str, str, str, set[str]]] = {
    "batch_matmul": ("2.3.0", "2.3.0", "2.3.0", {"BATCH_MATMUL"}),
    "digits_cnn_float": ("1.6.0", "1.6.0", "1.6.0", {"MEAN"}),
    "dilated_depthwise_float": ("1.12.0", "1.12.0", "1.12.0", {"DEPTHWISE_CONV_2D"}),
    "fc_variants_float": ("2.0.0", "2.0.0", "2.0.0", {"FULLY_CONNECTED"}),
    "float16_weights": ("1.15.0", "1.15.0", "1.15.0", {"DEQUANTIZE"}),
    "gather_batch_dims": ("2.5.0", "2.5.0", "2.5.0", {"GATHER"}),
    "hybrid_fc_conv": ("2.17.0", "2.17.0", "2.17.0", {"FULLY_CONNECTED"}),
    # INT16X8: the metadata is the float model's; stored versions give 1.14.0; the 16x8 versions 2.15.0
    "int16x8_conv_fc": ("1.5.0", "1.14.0", "2.15.0", {"CONV_2D", "FULLY_CONNECTED"}),
    "int8_cnn": ("2.2.0", "2.2.0", "2.2.0", {"RESIZE_BILINEAR"}),
    "int8_float_io": ("2.0.0", "2.0.0", "2.0.0", {"FULLY_CONNECTED"}),
    "resize_half_pixel": ("2.3.0", "2.3.0", "2.3.0", {"RESIZE_NEAREST_NEIGHBOR"}),
    "resource_variable": ("2.6.0", "2.6.0", "2.6.0", {"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"}),
    "strided_slice_masks": ("2.6.0", "2.6.0", "2.6.0", {"STRIDED_SLICE"}),
    "string_ops": ("2.5.0", "2.5.0", "2.5.0", {"STRIDED_SLICE"}),
    "transpose_conv": ("2.13.0", "2.13.0", "2.13.0", {"TRANSPOSE_CONV"}),
    "uint8_legacy_cnn": ("2.2.0", "2.2.0", "2.2.0", {"RESIZE_BILINEAR"}),
    "while_loop": ("1.15.0", "1.15.0", "1.15.0", {"WHILE"}),
    # the realistic models; the metadata of the INT16X8 and AEQ files is their float model's
    "audio_conv1d_dynamic": ("2.4.0", "2.4.0", "2.4.0", {"CONV_2D"}),
    "audio_conv1d_float": ("2.3.0", "2.3.0", "2.3.0", {"BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND"}),
    "audio_conv1d_int16x8": ("2.3.0", "2.3.0", "2.15.0", {"CONV_2D", "FULLY_CONNECTED"}),
    "audio_conv1d_int8": ("2.3.0", "2.3.0", "2.3.0", {"BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND"}),
    "efficientnet_block_float": ("1.14.0", "1.14.0", "1.14.0", {"LOGISTIC"}),
    "efficientnet_block_int16x8": ("1.14.0", "1.14.0", "2.15.0", {"CONV_2D", "FULLY_CONNECTED"}),
    "efficientnet_block_int8": ("1.14.0", "1.14.0", "1.14.0", {"ADD", "CONV_2D", "DEPTHWISE_CONV_2D",
                                                               "FULLY_CONNECTED", "LOGISTIC", "MEAN", "MUL",
                                                               "SOFTMAX"}),
    "gru_tiny_dynamic": ("2.17.0", "2.17.0", "2.17.0", {"FULLY_CONNECTED"}),
    "gru_tiny_float": ("2.0.0", "2.0.0", "2.0.0", {"FULLY_CONNECTED"}),
    "kws_lstm_dynamic": ("2.3.0", "2.3.0", "2.3.0", {"UNIDIRECTIONAL_SEQUENCE_LSTM"}),
    "kws_lstm_float": ("1.13.1", "1.13.1", "1.13.1", {"UNIDIRECTIONAL_SEQUENCE_LSTM"}),
    "kws_lstm_int8": ("1.14.0", "1.14.0", "1.14.0", {"FULLY_CONNECTED", "SOFTMAX", "STRIDED_SLICE"}),
    "mobilenet_v3_block_aeq_a16w8": ("1.15.0", "1.15.0", "2.15.0", {"CONV_2D", "FULLY_CONNECTED"}),
    "mobilenet_v3_block_dynamic": ("2.4.0", "2.4.0", "2.4.0", {"CONV_2D"}),
    "mobilenet_v3_block_float": ("1.15.0", "1.15.0", "1.15.0", {"HARD_SWISH"}),
    "mobilenet_v3_block_int8": ("1.15.0", "1.15.0", "1.15.0", {"HARD_SWISH"}),
    "resnet_block_aeq_dynamic": ("1.6.0", "1.6.0", "2.17.0", {"FULLY_CONNECTED"}),
    "resnet_block_dynamic": ("2.4.0", "2.4.0", "2.4.0", {"CONV_2D"}),
    "resnet_block_float": ("1.6.0", "1.6.0", "1.6.0", {"MEAN"}),
    "resnet_block_int16x8": ("1.6.0", "1.14.0", "2.15.0", {"CONV_2D", "FULLY_CONNECTED"}),
    "resnet_block_int8": ("1.14.0", "1.14.0", "1.14.0",
                         {"ADD", "CONV_2D", "FULLY_CONNECTED", "MAX_POOL_2D", "MEAN", "PAD", "SOFTMAX"}),
    "ssd_head_float": ("1.14.0", "1.14.0", "1.14.0", {"LOGISTIC"}),
    "ssd_head_int16x8": ("1.14.0", "1.15.0", "2.15.0", {"CONV_2D"}),
    "ssd_head_int8": ("1.14.0", "1.14.0", "1.14.0", {"CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "LOGISTIC"}),
    "transformer_tiny_aeq_a16w8": ("2.9.0", "2.9.0", "2.15.0", {"CONV_2D", "FULLY_CONNECTED", "RSQRT"}),
    "transformer_tiny_aeq_a8w8": ("2.9.0", "2.9.0", "2.9.0", {"GELU"}),
    "transformer_tiny_dynamic": ("2.17.0", "2.17.0", "2.17.0", {"FULLY_CONNECTED"}),
    "transformer_tiny_float": ("2.9.0", "2.9.0", "2.9.0", {"GELU"}),
    "transformer_tiny_int8": ("2.9.0", "2.9.0", "2.9.0", {"GELU"}),
    "unet_tiny_float": ("2.2.0", "2.2.0", "2.2.0", {"RESIZE_BILINEAR"}),
    "unet_tiny_int16x8": ("2.2.0", "2.8.0", "2.15.0", {"CONV_2D"}),
    "unet_tiny_int8": ("2.8.0", "2.8.0", "2.8.0", {"TILE"}),
    # the sweep's architectures
    "aspp_int8": ("2.2.0", "2.2.0", "2.2.0", {"RESIZE_BILINEAR"}),
    "bilstm_int8": ("2.5.0", "2.5.0", "2.5.0", {"REVERSE_V2"}),
    "crnn_gru_16x8": ("1.14.0", "2.3.0", "2.15.0", {"CONV_2D", "FULLY_CONNECTED"}),
    "grouped_conv_aeq_static_wi8_ai8": ("2.9.0", "2.9.0", "2.9.0", {"CONV_2D"}),
    "grouped_conv_dynamic": ("2.9.0", "2.9.0", "2.9.0", {"CONV_2D"}),
    "grouped_conv_float": ("2.9.0", "2.9.0", "2.9.0", {"CONV_2D"}),
    "pixel_ops_int8": ("2.5.0", "2.5.0", "2.5.0", {"DEPTH_TO_SPACE", "SQUARED_DIFFERENCE"}),
    "tconv_decoder_dynamic": ("2.13.0", "2.13.0", "2.13.0", {"TRANSPOSE_CONV"}),
    "yolo_head_int8": ("2.12.0", "2.12.0", "2.12.0", {"EXP"}),
}

# The architectures dev/quantized_sweep.py found missing (dev/convert_sample_models.py's SWEEP_MADE): each
# comes as the quantized variant that brought operators, options or dtypes no other sample model has
# (grouped_conv_float only as the AI Edge Quantizer's input), not as a float / quantized family.
SWEEP_ARCHITECTURES = frozenset({"aspp", "bilstm", "crnn_gru", "grouped_conv", "pixel_ops", "tconv_decoder",
                                 "yolo_head"})

# Trained models: made by their own script (real data, committed with their held-out split), not by
# dev/convert_sample_models.py; tests/sample_models/ checks their accuracy.
TRAINED = {"digits_cnn_float": "dev/train_digits.py"}

# Models the LiteRT comparison cannot use, and why.
LITERT_NOT_COMPARED = {
    "strided_slice_masks": "its input has unknown rank (that is what keeps the masks in the file); the runner "
                           "feeds the shape the interpreter reports, [] (a scalar), and slicing a scalar "
                           "with these masks reads outside the tensor, so the outputs are not defined",
}
# Models whose inputs the runner cannot make (it makes numeric inputs only): inputs given here.
CUSTOM_INPUTS = {
    "string_ops": {"input_0": np.array([[b"alpha", b"beta", b"gamma", b"delta"], [b"x", b"e", b"", b"h"]])},
}

# Files the workbench's interpreter cannot run YET (kernels or dtypes still missing), with what stops
# them: the first refusal, as the registry / the kernel words it.  Not hidden: each is checked to fail
# with a typed WorkbenchError, and that test fails once the file runs — then delete its entry here,
# and the comparison with LiteRT below takes it over.
NOT_YET_RUNNABLE: dict[str, str] = {
}

# Float outputs: within FLOAT_RTOL of LiteRT's (plus FLOAT_ATOL for elements near zero).  Outputs of
# files whose activations are quantized (full int8, 16x8, the quantizer's static recipes): bitwise equal.
FLOAT_RTOL, FLOAT_ATOL = 1e-4, 1e-6
QUANTIZED_MODES = ("full-integer", "16x8", "static_wi8", "quantization-aware")

# Files that run but whose outputs differ from LiteRT's today (on the test's seed), with why.  The
# comparison test expects them to differ and fails once they match: then delete the entry.
KNOWN_OUTPUT_MISMATCHES: dict[str, str] = {
}

# Kernel-level differences from LiteRT known today, found by feeding every node of a quantized file
# LiteRT's own input tensors: model → {"node:OP": what differs}.  Equal final outputs can hide them
# (a softmax absorbs a one-off).  The node-by-node test fails when this set changes: delete fixed ones.
KNOWN_KERNEL_MISMATCHES: dict[str, dict[str, str]] = {
}


def _path(name: str) -> Path:
    return SAMPLES / f"{name}.tflite"


def _load(name: str):
    return workbench.load(_path(name))


def _builtin_versions(model):
    return [v for v in computed_versions(model) if v.signature.op != B.CUSTOM]


# --------------------------------------------------------------------------------------------
# the files and their manifest


def test_expectations_cover_every_sample_model():
    files = sorted(p.stem for p in SAMPLES.glob("*.tflite"))
    assert files == NAMES
    assert not set(EXPECTED_DIFFERENCES) & set(EXPECTED_DIFFERENCE_COUNTS)
    assert set(EXPECTED_DIFFERENCES) | set(EXPECTED_DIFFERENCE_COUNTS) == set(NAMES) == set(EXPECTED_MIN_RUNTIME)
    assert set(NOT_YET_RUNNABLE) <= set(NAMES) and not set(NOT_YET_RUNNABLE) & set(LITERT_NOT_COMPARED)
    assert set(KNOWN_KERNEL_MISMATCHES) <= set(NAMES) - set(NOT_YET_RUNNABLE)
    assert set(KNOWN_OUTPUT_MISMATCHES) <= set(KNOWN_KERNEL_MISMATCHES) | {n for n in NAMES if not _quantized(n)}
    assert 40 <= len(NAMES) <= 60
    assert sum(_path(n).stat().st_size for n in NAMES) < 2_000_000


def _arch_variant(name: str) -> tuple[str, str]:
    arch, _, variant = name.rpartition("_aeq_") if "_aeq_" in name else name.rpartition("_")
    return arch, variant


def _architectures() -> dict[str, set[str]]:
    """Architecture → its variants, for the models listed by counts (the realistic and the sweep's)."""
    arches = defaultdict(set)
    for name in EXPECTED_DIFFERENCE_COUNTS:
        arch, variant = _arch_variant(name)
        arches[arch].add(variant)
    return arches


def test_realistic_models_come_in_float_and_quantized_variants():
    """Every realistic architecture has a float file and at least one quantized one (int8 / 16x8 / dynamic /
    AEQ)."""
    arches = {arch: v for arch, v in _architectures().items() if arch not in SWEEP_ARCHITECTURES}
    assert len(arches) == 9
    for arch, variants in arches.items():
        assert "float" in variants and len(variants) >= 2, (arch, variants)
        assert _path(f"{arch}_float").stat().st_size <= 150_000


def test_sweep_architectures_come_as_quantized_files():
    """The sweep's architectures are here for one quantized variant each (a float file only as the AI Edge
    Quantizer's input), every one of them run node by node against LiteRT."""
    arches = _architectures()
    assert SWEEP_ARCHITECTURES <= set(arches)
    for arch in SWEEP_ARCHITECTURES:
        names = [n for n in NAMES if _arch_variant(n)[0] == arch]
        quantized = [n for n in names if not n.endswith("_float")]
        assert quantized, arch
        for n in names:
            assert _path(n).stat().st_size < 300_000, n
            if n.endswith("_float"):
                parents = {ENTRIES[q]["made_by"]["settings"].get("float_model") for q in quantized}
                assert f"{n}.tflite" in parents, n


@pytest.mark.parametrize("name", NAMES)
def test_manifest_entry_is_complete(name):
    e = ENTRIES[name]
    data = _path(name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == e["sha256"]
    assert len(data) == e["bytes"] < 1 << 20
    made = e["made_by"]
    assert made["script"] == TRAINED.get(name, "dev/convert_sample_models.py") and (ROOT / made["script"]).is_file()
    assert made["tensorflow"] and made["settings"]["mode"]
    if "_aeq_" in name:  # quantized from a committed float file by the AI Edge Quantizer
        assert made["converter"].startswith("ai_edge_quantizer") and made["settings"]["recipe"]
        assert made["settings"]["float_model"][: -len(".tflite")] in ENTRIES
    elif "_legacy" in name:  # the TF1 graph converter of quantization-aware training's uint8 models
        assert made["converter"].startswith("tf.compat.v1.lite.TFLiteConverter")
        assert made["settings"]["inference_type"] == "uint8"
    else:
        assert made["converter"].startswith("TFLiteConverter")
    assert e["demonstrates"]
    assert e["used_by"] and all((ROOT / u).is_file() for u in e["used_by"])


@pytest.mark.parametrize("name", NAMES)
def test_file_loads_without_notes(name):
    model = _load(name)
    assert not model.load_notes
    assert _builtin_versions(model), "no builtin operators?"


# --------------------------------------------------------------------------------------------
# versions


def _differences(model) -> dict:
    return {(v.signature.subgraph, v.signature.op_index): (v.op, v.stored, v.number, v.reason)
            for v in _builtin_versions(model) if v.number != v.stored}


@pytest.mark.parametrize("name", NAMES)
def test_every_builtin_operator_has_its_stored_version_or_a_listed_difference(name):
    model = _load(name)
    if name in EXPECTED_DIFFERENCES:
        expected = {k: v[:4] for k, v in EXPECTED_DIFFERENCES[name].items()}
        assert _differences(model) == expected
    else:
        got = Counter((op, stored, computed) for op, stored, computed, _ in _differences(model).values())
        assert got == {key: n for key, (n, _) in _rows(name).items()}


def test_most_operators_match_exactly():
    """The acceptance figure, printed by ``pytest -rA``: operators whose computed version equals the
    stored one; every other operator is a listed SHARED_CODE, INT16X8 or AEQ difference.  In the files
    of the converter's own (MLIR) path every difference is a SHARED_CODE one."""
    total = same = 0
    for name in NAMES:
        versions = _builtin_versions(_load(name))
        total += len(versions)
        same += sum(v.number == v.stored for v in versions)
    by_kind: Counter = Counter()
    for name in NAMES:
        for n, kind in _rows(name).values():
            by_kind[kind] += n
        if not _deviation_ops(name):
            assert {kind for _, kind in _rows(name).values()} <= {SHARED_CODE}
    listed = sum(by_kind.values())
    assert same + listed == total
    assert total >= 900 and by_kind[SHARED_CODE] <= 40
    print(f"{same}/{total} builtin operators: computed == stored; listed differences: "
          f"{by_kind[SHARED_CODE]} shared code, {by_kind[INT16X8]} 16x8, {by_kind[AEQ]} AI Edge Quantizer")


@pytest.mark.parametrize("name", NAMES)
def test_each_operator_code_stores_the_max_computed_version(name):
    """What the converter's UpdateOpVersion does: per OperatorCode, the stored version is the max of
    its operators' versions.  Exact for every code, except the codes of INT16X8 ops (they hold the
    quantizer's stamped version: a different one) and of AEQ ops (they hold the float file's version,
    see ``test_ai_edge_quantizer_files_keep_the_float_files_versions``)."""
    model = _load(name)
    best: dict[int, int] = defaultdict(int)
    for v in _builtin_versions(model):
        idx = model.subgraphs[v.signature.subgraph].operators[v.signature.op_index].opcode_index
        best[idx] = max(best[idx], v.number)
    deviating = _deviation_ops(name)
    for idx, computed in best.items():
        code = model.operator_codes[idx]
        if op_name(code) not in deviating:
            assert computed == code.version, (op_name(code), code.version, computed)
        elif "_aeq_" not in name:
            assert computed != code.version, (op_name(code), code.version, computed)


@pytest.mark.parametrize("name", NAMES)
def test_shared_code_differences_are_below_their_code(name):
    model = _load(name)
    users = Counter(o.opcode_index for sg in model.subgraphs for o in sg.operators)
    kinds = {key: kind for key, (_, kind) in _rows(name).items()}
    for (s, i), (op, stored, computed, _) in _differences(model).items():
        kind = kinds[(op, stored, computed)]
        if kind == SHARED_CODE:
            assert computed < stored
            assert users[model.subgraphs[s].operators[i].opcode_index] > 1, \
                f"{op} [{s}, {i}] does not share its OperatorCode"
        else:
            assert kind in DEVIATIONS and computed != stored
            assert kind == (AEQ if "_aeq_" in name else INT16X8)


def test_min_runtime_of_the_16x8_file_from_its_metadata_is_too_low():
    """The INT16X8 deviation seen from the minimum runtime: metadata 1.5.0 < stored 1.14.0 < computed 2.15.0."""
    model = _load("int16x8_conv_fc")
    stored, computed = min_runtime(model), min_runtime(model, computed=True)
    assert read_min_runtime_metadata(model) == "1.5.0"
    assert {e.op for e in stored.drivers} == {"QUANTIZE", "CONV_2D", "MAX_POOL_2D", "FULLY_CONNECTED", "SOFTMAX",
                                              "DEQUANTIZE"}
    assert {(e.op, e.version) for e in computed.drivers} == {("CONV_2D", 8), ("FULLY_CONNECTED", 11)}


@pytest.mark.parametrize("name", NAMES)
def test_min_runtime_matches_the_metadata(name):
    model = _load(name)
    meta, stored, computed, drivers = EXPECTED_MIN_RUNTIME[name]
    assert read_min_runtime_metadata(model) == meta
    assert min_runtime(model).version == stored
    got = min_runtime(model, computed=True)
    assert got.version == computed
    assert {e.op for e in got.drivers} == drivers
    if not _deviation_ops(name):
        assert meta == stored == computed  # the converter's own figure, from our table and our rules
    elif "_aeq_" in name:
        assert meta == stored  # the float file's figure, for the float file's versions (computed may be higher)


@pytest.mark.parametrize("name", [n for n in NAMES if "_aeq_" in n])
def test_ai_edge_quantizer_files_keep_the_float_files_versions(name):
    """The AEQ deviation: every OperatorCode the float file has keeps its version, the codes the
    quantizer adds (QUANTIZE / DEQUANTIZE) are version 1, and the metadata is the float file's."""
    model = _load(name)
    source = _load(ENTRIES[name]["made_by"]["settings"]["float_model"][: -len(".tflite")])
    before = {op_name(c): c.version for c in source.operator_codes}
    after = {op_name(c): c.version for c in model.operator_codes}
    assert set(before) <= set(after)
    assert {op: v for op, v in after.items() if op in before} == before
    assert {op: v for op, v in after.items() if op not in before} == {op: 1 for op in set(after) - set(before)}
    assert read_min_runtime_metadata(model) == read_min_runtime_metadata(source)
    # yet the tensors did change: int8 or int16 activations, or int8 weights
    types = {t.type.name for sg in model.subgraphs for t in sg.tensors}
    assert types & {"INT8", "INT16"} and not {"INT8", "INT16"} & {t.type.name for sg in source.subgraphs
                                                                   for t in sg.tensors}


def _reset_versions(model):
    """The model with every builtin OperatorCode at version 1 (as the MLIR exporter first writes them)."""
    codes = tuple(c if builtin_code(c) == B.CUSTOM else dataclasses.replace(c, version=1)
                  for c in model.operator_codes)
    return dataclasses.replace(model, operator_codes=codes)


@pytest.mark.parametrize("name", NAMES)
def test_update_versions_restores_the_stored_versions(name):
    model = _load(name)
    reset = _reset_versions(model)
    restored = update_versions(reset)
    got = {(i, op_name(c)): c.version for i, c in enumerate(restored.operator_codes)}
    want = {(i, op_name(c)): c.version for i, c in enumerate(model.operator_codes)}
    # a deviating code gets the max of its operators' computed versions, not the version a tool stamped
    deviating = _deviation_ops(name)
    best: dict[int, int] = defaultdict(int)
    for v in _builtin_versions(model):
        if v.op in deviating:
            idx = model.subgraphs[v.signature.subgraph].operators[v.signature.op_index].opcode_index
            best[idx] = max(best[idx], v.number)
    for idx, computed in best.items():
        want[(idx, op_name(model.operator_codes[idx]))] = computed
    assert got == want
    assert update_versions(restored) is restored  # a fixed point


# --------------------------------------------------------------------------------------------
# round trip


@pytest.mark.parametrize("name", NAMES)
def test_round_trip_keeps_the_model(name):
    original = _load(name)
    first = workbench.dump(original)
    again = workbench.load(first)
    assert again == original
    assert workbench.dump(again) == first


def test_models_left_out_of_the_litert_comparison_have_an_input_of_unknown_rank():
    for name in LITERT_NOT_COMPARED:
        model = _load(name)
        sg = model.subgraphs[0]
        assert [sg.tensors[i].shape for i in sg.inputs] == [()]
        assert not any(sg.tensors[i].has_rank for i in sg.inputs)


@pytest.fixture(scope="module")
def litert_runs(tmp_path_factory) -> dict:
    """name → (inputs .npz, LiteRT's run of the committed file, LiteRT's run of our re-written copy) for every
    sample model LiteRT is compared on, all in one child process.  Seeded inputs (crc32 of the name) made
    by the runner for the original, read by the copy; or CUSTOM_INPUTS."""
    root = tmp_path_factory.mktemp("litert_runs")
    names = [n for n in NAMES if n not in LITERT_NOT_COMPARED]
    items = []
    for name in names:
        inputs, rewritten = root / f"{name}.inputs.npz", root / f"{name}.rewritten.tflite"
        rewritten.write_bytes(workbench.dump(_load(name)))
        seed = None
        if name in CUSTOM_INPUTS:
            np.savez(inputs, **CUSTOM_INPUTS[name])
        else:
            seed = zlib.crc32(name.encode())
        items += [(_path(name), inputs, root / f"{name}.out.npz", seed),
                  (rewritten, inputs, root / f"{name}.rewritten_out.npz", None)]
    results = litert_runner.run_batch(items)
    return {name: (root / f"{name}.inputs.npz", results[2 * k], results[2 * k + 1]) for k, name in enumerate(names)}


@pytest.fixture(scope="module")
def litert_original(litert_runs):
    """name → (inputs .npz, LiteRT's run of the committed file on them)."""
    return lambda name: litert_runs[name][:2]


@pytest.mark.parametrize("name", [n for n in NAMES if n not in LITERT_NOT_COMPARED])
def test_rewritten_model_runs_identically_in_litert(name, litert_runs):
    _, a, b = litert_runs[name]
    assert a.ok, f"LiteRT could not run the original:\n{a.describe()}"
    assert a.outputs
    assert b.ok, f"LiteRT could not run the re-written model:\n{b.describe()}"
    assert sorted(a.outputs) == sorted(b.outputs)
    for key in a.outputs:
        x, y = a.outputs[key], b.outputs[key]
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes(), f"{key} differs bitwise"


def _run_ours(name: str, inputs: Path) -> dict:
    """The workbench interpreter on the inputs LiteRT got, outputs named as the runner names them."""
    it = Interpreter(model_path=_path(name))
    it.allocate_tensors()
    with np.load(inputs) as z:
        for k, d in enumerate(it.get_input_details()):
            it.set_tensor(d["index"], z[f"input_{k}"])
    it.invoke()
    return {f"output_{k}": np.array(it.get_tensor(d["index"])) for k, d in enumerate(it.get_output_details())}


def _quantized(name: str) -> bool:
    return any(mode in ENTRIES[name]["made_by"]["settings"]["mode"] for mode in QUANTIZED_MODES)


def test_quantized_modes_pick_the_quantized_files():
    assert {n for n in NAMES if _quantized(n)} == {
        "int8_cnn", "int8_float_io", "int16x8_conv_fc", "mobilenet_v3_block_aeq_a16w8", "transformer_tiny_aeq_a8w8",
        "transformer_tiny_aeq_a16w8", "uint8_legacy_cnn", "crnn_gru_16x8", "grouped_conv_aeq_static_wi8_ai8",
        *(n for n in NAMES if n.endswith(("_int8", "_int16x8")))}


@pytest.mark.parametrize("name", [n for n in NAMES if n not in LITERT_NOT_COMPARED and n not in NOT_YET_RUNNABLE])
def test_interpreter_matches_litert(name, litert_original):
    """Our interpreter against LiteRT's builtin kernels on the same inputs: quantized files bitwise,
    float outputs within FLOAT_RTOL."""
    inputs, theirs = litert_original(name)
    assert theirs.ok, f"LiteRT could not run the original:\n{theirs.describe()}"
    ours = _run_ours(name, inputs)
    assert sorted(ours) == sorted(theirs.outputs)
    problems = []
    for key, want in theirs.outputs.items():
        got = ours[key]
        assert got.dtype == want.dtype and got.shape == want.shape, (key, got.dtype, got.shape, want.dtype, want.shape)
        if _quantized(name) or want.dtype.kind != "f":
            equal = int(np.sum(got == want))
            if equal != want.size:
                problems.append(f"{key}: {equal}/{want.size} elements bitwise equal")
        elif not np.allclose(got, want, rtol=FLOAT_RTOL, atol=FLOAT_ATOL):
            worst = float(np.max(np.abs(got.astype(np.float64) - want) / (FLOAT_ATOL + np.abs(want))))
            problems.append(f"{key}: not within rtol {FLOAT_RTOL} (worst |diff| / (atol + |litert|) = {worst:.3g})")
    if name in KNOWN_OUTPUT_MISMATCHES:
        assert problems, f"{name} matches LiteRT now: delete it from KNOWN_OUTPUT_MISMATCHES"
    else:
        assert not problems, "; ".join(problems)


# Run in a child process: every tensor LiteRT kept (experimental_preserve_all_tensors) after one invoke.
_LITERT_ALL_TENSORS = """
import sys, numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
it = Interpreter(model_path=sys.argv[1], experimental_preserve_all_tensors=True,
                 experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
it.allocate_tensors()
with np.load(sys.argv[2]) as z:
    for k, d in enumerate(it.get_input_details()):
        it.set_tensor(d["index"], z[f"input_{k}"])
it.invoke()
out = {}
for t in it.get_tensor_details():
    try:
        value = it.get_tensor(t["index"])
    except ValueError:
        continue
    if value.size and value.dtype.kind in "biuf":
        out[f"t{t['index']}"] = value
np.savez(sys.argv[3], **out)
"""


@pytest.mark.parametrize("name", [n for n in NAMES if _quantized(n) and n not in NOT_YET_RUNNABLE])
def test_quantized_kernels_match_litert_node_by_node(name, litert_original, tmp_path):
    """Each executed node of a quantized file, fed LiteRT's own input tensors, gives LiteRT's integer
    outputs bitwise — except the KNOWN_KERNEL_MISMATCHES, exactly those."""
    inputs, theirs = litert_original(name)
    assert theirs.ok, theirs.describe()
    dump = tmp_path / "tensors.npz"
    proc = subprocess.run([sys.executable, "-c", _LITERT_ALL_TENSORS, str(_path(name)), str(inputs), str(dump)],
                          capture_output=True, text=True, timeout=litert_runner.DEFAULT_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with np.load(dump) as z:
        litert = {key: z[key] for key in z.files}
    it = Interpreter(model_path=_path(name), keep_intermediates=True)
    it.allocate_tensors()
    with np.load(inputs) as z:
        for k, d in enumerate(it.get_input_details()):
            it.set_tensor(d["index"], z[f"input_{k}"])
    it.invoke()
    # LiteRT's variable tensors (an LSTM's states) hold their values AFTER the invoke: such a node starts
    # from reset variables, as it did in the invoke, and only its other inputs come from LiteRT
    variable = {t for t, tensor in enumerate(_load(name).subgraphs[0].tensors) if tensor.is_variable}
    checked, mismatched = 0, {}
    for node, _, _, folded in it.prepared():
        if folded:
            continue
        if variable & set(node.inputs):
            it.reset_all_variables()
        feed = {t: it.get_tensor(t) if t in variable else litert[f"t{t}"]
                for t in node.inputs if t >= 0 and (t in variable or f"t{t}" in litert)}
        for t, got in zip(node.outputs, it.invoke_node(node.index, feed)):
            want = litert.get(f"t{t}")
            if want is None or want.dtype.kind not in "iu":
                continue
            checked += 1
            if got.shape != want.shape or not np.array_equal(got, want):
                mismatched[f"{node.index}:{node.op_name}"] = f"{int(np.sum(got != want))}/{want.size} elements differ"
    assert checked >= len(it.nodes) // 2
    assert set(mismatched) == set(KNOWN_KERNEL_MISMATCHES.get(name, {})), mismatched


def test_not_yet_runnable_models_are_refused_with_a_typed_error(litert_original):
    """Each NOT_YET_RUNNABLE file runs in LiteRT, and our interpreter refuses it with a WorkbenchError
    (a raw numpy error fails here).  A file that runs now fails this test: delete its entry."""
    runs_now = []
    for name, reason in NOT_YET_RUNNABLE.items():
        inputs, theirs = litert_original(name)
        assert theirs.ok, f"LiteRT could not run {name}:\n{theirs.describe()}"
        try:
            _run_ours(name, inputs)
        except WorkbenchError as exc:
            assert str(exc), name
        else:
            runs_now.append(f"{name} (listed as: {reason})")
    assert not runs_now, "these run now — delete them from NOT_YET_RUNNABLE: " + "; ".join(runs_now)


def test_string_model_computes_what_it_says():
    """The string model really ran on strings: EQUAL(words[:, 1:3], "beta"), EQUAL(gather, "e") -- in
    litert and in the workbench interpreter alike."""
    import tempfile

    from workbench.interpreter import Interpreter

    with tempfile.TemporaryDirectory() as tmp:
        inputs = Path(tmp) / "in.npz"
        np.savez(inputs, **CUSTOM_INPUTS["string_ops"])
        r = litert_runner.run(_path("string_ops"), inputs, Path(tmp) / "out.npz")
    assert r.ok, r.describe()
    outs = sorted(r.outputs.values(), key=lambda a: a.shape)
    assert [o.tolist() for o in outs] == [[[True, False], [False, False]], [True, False, False]]
    it = Interpreter(model_path=_path("string_ops"))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], CUSTOM_INPUTS["string_ops"]["input_0"])
    it.invoke()
    ours = [it.get_tensor(d["index"]) for d in it.get_output_details()]
    assert [o.tolist() for o in ours] == [r.outputs[f"output_{k}"].tolist() for k in range(len(ours))]
