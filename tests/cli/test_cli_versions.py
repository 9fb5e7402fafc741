"""`workbench versions`: stored vs computed versions, minimum runtime and a runtime's verdict.

Run in-process (``main([...])``) and as ``python -m workbench.cli``, on tiny models built in code
(a dilated DEPTHWISE_CONV_2D is v2 and needs TFLite 1.12.0), on the converter-made sample models
and on the real-model corpus (where the MediaPipe files' float16 DEQUANTIZE difference shows).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import workbench
from helpers.cli_helpers import run_inprocess, run_subprocess, strict_json
from helpers.sample_model_facts import TOOL_STAMPED
from helpers.versioning_corpus_facts import EXPECTED_BELOW
from workbench.cli import EXIT_CANNOT_RUN
from workbench.schema import CLASSES, BuiltinOperator, Padding
from workbench.schema.builder import ModelBuilder
from workbench.versioning import (
    computed_versions,
    min_runtime,
    read_min_runtime_metadata,
    write_min_runtime_metadata,
)
from workbench.versioning.runtime import op_not_found_text

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"
SAMPLE_NAMES = sorted(p.stem for p in SAMPLES.glob("*.tflite"))
DEPTHWISE_V2_ERROR = op_not_found_text("DEPTHWISE_CONV_2D", 2)








def versions_json(capsys, path, *extra) -> tuple[int, dict]:
    code, out, err = run_inprocess(capsys, "versions", path, "--json", *extra)
    assert err == "", err
    return code, strict_json(out)


# ------------------------------------------------------------------------------------------------
# tiny models


def _depthwise_model(*, dilations=(2,), stored: int = 2, metadata: str | None = "1.12.0"):
    """One DEPTHWISE_CONV_2D per entry of ``dilations``, all sharing one OperatorCode of version ``stored``."""
    b = ModelBuilder("tiny versions model")
    x = b.input("x", [1, 8, 8, 2])
    w = b.constant("w", np.ones((1, 3, 3, 2), np.float32))
    bias = b.constant("bias", np.zeros(2, np.float32))
    for k, d in enumerate(dilations):
        y = b.tensor(f"y{k}", [1, 8, 8, 2])
        b.op(BuiltinOperator.DEPTHWISE_CONV_2D, [x, w, bias], [y],
             CLASSES["DepthwiseConv2DOptions"](padding=Padding.SAME, stride_w=1, stride_h=1, depth_multiplier=1,
                                               dilation_w_factor=d, dilation_h_factor=d), version=stored)
        b.output(y)
    model = b.build()
    if metadata is not None:
        model = write_min_runtime_metadata(model, metadata)
    return model


@pytest.fixture(scope="module")
def dilated_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("versions") / "dilated.tflite"
    path.write_bytes(workbench.dump(_depthwise_model()))
    return path


def _write(tmp_path, model, name="m.tflite") -> Path:
    path = tmp_path / name
    path.write_bytes(workbench.dump(model))
    return path


def test_depthwise_dilation_2_is_v2_and_needs_1_12(dilated_path, capsys):
    code, doc = versions_json(capsys, dilated_path)
    assert code == 0
    assert doc["file"] == str(dilated_path)
    (op,) = doc["operators"]
    assert op == {"subgraph": 0, "index": 0, "op": "DEPTHWISE_CONV_2D", "opcode_index": 0, "stored_version": 2,
                  "computed_version": 2, "reason": "v2: dilation_w_factor=2 ≠ 1", "note": None}
    assert doc["differences"] == 0
    mr = doc["min_runtime"]
    assert (mr["computed"], mr["stored"], mr["from_stored_versions"]) == ("1.12.0", "1.12.0", "1.12.0")
    assert mr["drivers"] == [{"subgraph": 0, "index": 0, "op": "DEPTHWISE_CONV_2D", "version": 2,
                              "runtime": "1.12.0"}]
    assert "findings" not in doc and "runtime" not in doc  # only with --runtime


def test_runtime_1_5_finds_the_dilated_depthwise(dilated_path, capsys):
    code, doc = versions_json(capsys, dilated_path, "--runtime", "1.5.0")
    assert code == EXIT_CANNOT_RUN == 1
    assert doc["runtime"] == "1.5.0" and doc["can_run"] is False
    by_kind = {f["kind"]: f for f in doc["findings"]}
    assert set(by_kind) == {"op-version", "min-runtime-metadata"}
    f = by_kind["op-version"]
    assert (f["subgraph"], f["index"], f["op"], f["version"], f["computed_version"]) == \
        (0, 0, "DEPTHWISE_CONV_2D", 2, 2)
    assert f["error"] == DEPTHWISE_V2_ERROR
    assert "dilation_w_factor=2 ≠ 1" in f["reason"] and "1.12.0" in f["reason"]
    meta = by_kind["min-runtime-metadata"]
    assert meta["subgraph"] is None and "1.12.0" in meta["error"]


@pytest.mark.parametrize("release, status",
                         [("1.11.0", 1), ("1.12.0", 0), ("1.12", 0), ("1.11", 1), ("2.3.0", 0), ("3", 0)])
def test_exit_status_follows_the_release(dilated_path, capsys, release, status):
    code, doc = versions_json(capsys, dilated_path, "--runtime", release)
    assert code == status
    assert doc["can_run"] is (status == 0)
    assert (doc["findings"] == []) is (status == 0)


def test_text_view_shows_versions_min_runtime_and_verdict(dilated_path, capsys):
    code, out, err = run_inprocess(capsys, "versions", dilated_path, "--runtime", "1.5.0")
    assert code == 1 and err == ""
    assert "DEPTHWISE_CONV_2D" in out and "v2: dilation_w_factor=2 ≠ 1" in out
    assert "minimum runtime" in out
    lines = out.splitlines()
    computed = next(line for line in lines if line.strip().startswith("computed"))
    assert "1.12.0" in computed and "DEPTHWISE_CONV_2D v2 at 0:0" in computed
    assert any("min_runtime_version metadata" in line and "agrees with computed" in line for line in lines)
    assert "TFLite 1.5.0: cannot run this model (1 finding)" in out
    assert "min-runtime-metadata: model" in out  # advisory: TFLite refuses op by op, not by metadata
    assert f"error: {DEPTHWISE_V2_ERROR}" in out
    assert "why:   v2: dilation_w_factor=2 ≠ 1; DEPTHWISE_CONV_2D v2 first ran in TFLite 1.12.0" in out

    code, out, _ = run_inprocess(capsys, "versions", dilated_path, "--runtime", "1.12.0")
    assert code == 0 and "TFLite 1.12.0: can run this model" in out


def test_a_version_stored_too_low_is_marked(tmp_path, capsys):
    path = _write(tmp_path, _depthwise_model(stored=1, metadata="1.5.0"))
    code, doc = versions_json(capsys, path, "--runtime", "1.5.0")
    (op,) = doc["operators"]
    assert (op["stored_version"], op["computed_version"]) == (1, 2)
    assert op["note"].startswith("computed above stored")
    assert doc["differences"] == 1
    mr = doc["min_runtime"]
    assert (mr["computed"], mr["stored"], mr["from_stored_versions"]) == ("1.12.0", "1.5.0", "1.5.0")
    # TFLite looks up the stored version: 1.5.0 has DEPTHWISE_CONV_2D v1, so it loads the file
    assert code == 0 and doc["can_run"] is True and doc["findings"] == []
    code, out, _ = run_inprocess(capsys, "versions", path, "--runtime", "1.5.0")
    row = next(line for line in out.splitlines() if "DEPTHWISE_CONV_2D" in line and "v1" in line)
    assert row.lstrip().startswith("≠")
    assert "≠ computed 1.12.0" in out
    assert "note: today's rules compute versions that first ran in TFLite 1.12.0" in out


def test_a_shared_operator_code_is_explained(tmp_path, capsys):
    path = _write(tmp_path, _depthwise_model(dilations=(2, 1)))
    _, doc = versions_json(capsys, path)
    dilated, plain = doc["operators"]
    assert (dilated["computed_version"], dilated["note"]) == (2, None)
    assert (plain["stored_version"], plain["computed_version"]) == (2, 1)
    assert plain["note"] == "OperatorCode 0 is shared by 2 operators and stores their highest version, v2"


def test_model_without_metadata_has_null_stored(tmp_path, capsys):
    path = _write(tmp_path, _depthwise_model(metadata=None))
    code, doc = versions_json(capsys, path, "--runtime", "1.12.0")
    assert code == 0 and doc["min_runtime"]["stored"] is None
    code, out, _ = run_inprocess(capsys, "versions", path)
    assert "min_runtime_version metadata  (absent)" in out


def _custom_model(name: str, version: int = 1):
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    y = b.tensor("y", [1, 4])
    b.op(None, [x], [y], custom_code=name, version=version)
    b.output(y)
    return b.build()


def test_custom_op_has_no_computed_version_and_stops_a_stock_release(tmp_path, capsys):
    path = _write(tmp_path, _custom_model("MyOp", 3))
    code, doc = versions_json(capsys, path, "--runtime", "1.5.0")
    (op,) = doc["operators"]
    assert (op["op"], op["stored_version"], op["computed_version"]) == ("MyOp", 3, None)
    assert "custom op" in op["reason"]
    assert doc["min_runtime"]["computed"] is None and doc["min_runtime"]["drivers"] == []
    # a custom op no stock release registers: LiteRT's words, and why
    assert code == 1 and doc["can_run"] is False
    (f,) = doc["findings"]
    assert (f["kind"], f["op"], f["version"], f["refuses"]) == ("custom-op", "MyOp", 3, True)
    assert f["error"].startswith("Encountered unresolved custom op: MyOp.")
    assert "Node number 0 (MyOp) failed to prepare." in f["error"] and "must register" in f["reason"]


def test_flex_op_needs_the_select_tf_ops_delegate(tmp_path, capsys):
    path = _write(tmp_path, _custom_model("FlexRFFT"))
    code, doc = versions_json(capsys, path, "--runtime", "2.16.1")
    (f,) = doc["findings"]
    assert code == 1 and doc["can_run"] is False and f["kind"] == "flex-op"
    assert f["error"].startswith("Select TensorFlow op(s), included in the given model, is(are) not supported")
    assert "Select TF ops (Flex) delegate" in f["reason"] and "RFFT" in f["reason"]
    code, out, _ = run_inprocess(capsys, "versions", path, "--runtime", "2.16.1")
    assert code == 1 and "cannot run this model" in out and "flex-op: [0:0] FlexRFFT v1" in out


def test_stock_custom_ops_run_from_the_release_that_registered_them(tmp_path, capsys):
    path = _write(tmp_path, _custom_model("TFLite_Detection_PostProcess"))
    code, doc = versions_json(capsys, path, "--runtime", "2.16.1")
    assert code == 0 and doc["can_run"] is True and doc["findings"] == []
    code, doc = versions_json(capsys, path, "--runtime", "1.9.0")
    assert code == 1 and [f["kind"] for f in doc["findings"]] == ["custom-op"]
    assert "from 1.10.0 on" in doc["findings"][0]["reason"]


def test_limit_caps_the_operator_table(tmp_path, capsys):
    path = _write(tmp_path, _depthwise_model(dilations=(2, 1, 1, 2)))
    code, out, _ = run_inprocess(capsys, "versions", path, "--limit", "1")
    assert code == 0 and "… 3 more" in out
    _, doc = versions_json(capsys, path, "--limit", "1")
    assert len(doc["operators"]) == 4


# ------------------------------------------------------------------------------------------------
# errors: as in `inspect`


def assert_one_line_error(code: int, out: str, err: str, *fragments: str) -> None:
    assert code == 2, (code, out, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    for f in fragments:
        assert f in lines[0], (f, lines[0])


def test_missing_file_is_one_line_error(tmp_path, capsys):
    missing = tmp_path / "missing.tflite"
    assert_one_line_error(*run_inprocess(capsys, "versions", missing, "--runtime", "2.3.0"), str(missing))


def test_malformed_file_is_one_line_error(dilated_path, tmp_path, capsys):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(dilated_path.read_bytes()[:40])
    assert_one_line_error(*run_inprocess(capsys, "versions", bad, "--json"), str(bad))
    wrong = tmp_path / "wrong.tflite"
    wrong.write_bytes(b"\x08\x00\x00\x00NOPE" + b"\x00" * 32)
    assert_one_line_error(*run_subprocess("versions", wrong), str(wrong), "TFL3")


@pytest.mark.parametrize("release", ["abc", "2.x", "", "-1.0", "2..3"])
def test_bad_runtime_argument_exits_2(dilated_path, capsys, release):
    code, out, err = run_inprocess(capsys, "versions", dilated_path, "--runtime", release)
    assert code == 2 and out == "" and "--runtime" in err and "Traceback" not in err


def test_versions_is_listed_in_help(capsys):
    code, out, _ = run_inprocess(capsys, "--help")
    assert code == 0 and "versions" in out and "inspect" in out


# ------------------------------------------------------------------------------------------------
# subprocess


def test_subprocess_and_inprocess_agree(dilated_path, capsys):
    for extra in (["--json", "--runtime", "1.5.0"], ["--runtime", "1.5.0"], []):
        a = run_inprocess(capsys, "versions", dilated_path, *extra)
        b = run_subprocess("versions", dilated_path, *extra)
        assert a == b


def test_subprocess_exit_1_when_the_runtime_cannot_run(capsys):
    path = SAMPLES / "hybrid_fc_conv.tflite"
    code, out, err = run_subprocess("versions", path, "--runtime", "2.16.0", "--json")
    assert code == 1 and err == ""
    doc = strict_json(out)
    assert {(f["op"], f["version"]) for f in doc["findings"] if f["kind"] == "op-version"} == {("FULLY_CONNECTED", 12)}
    code, out, err = run_subprocess("versions", path, "--runtime", "2.17.0")
    assert code == 0 and "TFLite 2.17.0: can run this model" in out


# ------------------------------------------------------------------------------------------------
# the converter-made sample models


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_model_json_agrees_with_the_library(name, capsys):
    path = SAMPLES / f"{name}.tflite"
    model = workbench.load(path)
    code, doc = versions_json(capsys, path)
    assert code == 0
    want = [(v.signature.subgraph, v.signature.op_index, v.op, v.stored, v.number, v.reason)
            for v in computed_versions(model)]
    got = [(o["subgraph"], o["index"], o["op"], o["stored_version"], o["computed_version"], o["reason"])
           for o in doc["operators"]]
    assert got == want
    mr = doc["min_runtime"]
    assert mr["computed"] == min_runtime(model, computed=True).version
    assert mr["from_stored_versions"] == min_runtime(model).version
    assert mr["stored"] == read_min_runtime_metadata(model)
    # the version differences are explained: a shared OperatorCode, or (16x8 only) a higher computed version
    for o in doc["operators"]:
        if o["computed_version"] != o["stored_version"]:
            assert o["note"] is not None
            if name in TOOL_STAMPED:    # a 16x8 or AI Edge Quantizer file: the tool's version, above or below
                assert o["note"]
            elif o["computed_version"] < o["stored_version"]:
                assert o["note"].startswith(f"OperatorCode {o['opcode_index']} is shared by")
            else:
                pytest.fail(f"{name}: {o['op']} computes above its stored version")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_model_runs_on_its_computed_min_runtime_and_not_below(name, capsys):
    path = SAMPLES / f"{name}.tflite"
    _, doc = versions_json(capsys, path)
    release = doc["min_runtime"]["computed"]
    code, at = versions_json(capsys, path, "--runtime", release)
    assert code == 0 and at["can_run"], at["findings"]
    # for a tool-stamped file TFLite checks the stored versions, not the computed ones (int16x8_conv_fc:
    # computed 2.15.0, stored 1.14.0)
    base = doc["min_runtime"]["from_stored_versions"] if name in TOOL_STAMPED else release
    major, minor, patch = (int(x) for x in base.split("."))
    below = f"{major}.{minor - 1}.0" if minor else f"{major - 1}.15.0"
    code, at = versions_json(capsys, path, "--runtime", below)
    assert code == 1 and not at["can_run"]
    # the ops that drive the minimum are refused: an unregistered version, or an op the release lacks
    refused = {f["op"] for f in at["findings"] if f["kind"] in ("op-version", "builtin-code")}
    assert {d["op"] for d in doc["min_runtime"]["stored_version_drivers"]} <= refused


def test_16x8_sample_metadata_claims_a_release_that_cannot_run_it(capsys):
    """The 16x8 converter path keeps the float model's min_runtime_version (1.5.0); the stored
    versions already need 1.14.0 (QUANTIZE did not exist before), and today's rules 2.15.0."""
    path = SAMPLES / "int16x8_conv_fc.tflite"
    code, doc = versions_json(capsys, path, "--runtime", "1.5.0")
    assert code == 1
    mr = doc["min_runtime"]
    assert (mr["stored"], mr["from_stored_versions"], mr["computed"]) == ("1.5.0", "1.14.0", "2.15.0")
    assert {(d["op"], d["version"]) for d in mr["drivers"]} == {("CONV_2D", 8), ("FULLY_CONNECTED", 11)}
    kinds = {f["kind"] for f in doc["findings"]}
    assert kinds == {"builtin-code", "op-version"}  # no metadata finding: the metadata says 1.5.0
    code, out, _ = run_inprocess(capsys, "versions", path, "--runtime", "2.3.0")
    assert code == 0
    assert "note: today's rules compute versions that first ran in TFLite 2.15.0" in out


# ------------------------------------------------------------------------------------------------
# the real-model corpus


def test_corpus_model_computed_is_never_below_stored(corpus_model, model_path, capsys):
    code, doc = versions_json(capsys, model_path)
    assert code == 0
    below = Counter((o["op"], o["stored_version"], o["computed_version"]) for o in doc["operators"]
                    if o["computed_version"] is not None and o["computed_version"] < o["stored_version"])
    assert dict(below) == EXPECTED_BELOW.get(corpus_model, {})      # TFLite's legacy quantizer's raised codes
    model = workbench.load(model_path)
    assert doc["min_runtime"]["computed"] == (min_runtime(model, computed=True).version or None)
    assert doc["min_runtime"]["stored"] == read_min_runtime_metadata(model)


def test_mediapipe_float16_dequantize_difference_shows(corpus_paths, capsys):
    path = corpus_paths["face_landmark"]
    code, doc = versions_json(capsys, path, "--runtime", "1.14.0")
    deq = [o for o in doc["operators"] if o["op"] == "DEQUANTIZE"]
    assert len(deq) == 113
    assert {(o["stored_version"], o["computed_version"], o["reason"]) for o in deq} == {(2, 3, "v3: in0=FLOAT16")}
    assert doc["differences"] == 113
    assert doc["min_runtime"]["computed"] == "1.15.0" and doc["min_runtime"]["from_stored_versions"] == "1.14.0"
    assert code == 0 and doc["can_run"]  # 1.14.0 has DEQUANTIZE v2, the version the file stores
    code, out, err = run_subprocess("versions", path)
    assert code == 0 and err == ""
    marked = [line for line in out.splitlines() if line.lstrip().startswith("≠")]
    assert len(marked) == 113 and all("DEQUANTIZE" in line and "v3: in0=FLOAT16" in line for line in marked)
    code, out, _ = run_subprocess("versions", path, "--runtime", "1.13.1")
    assert code == 1 and op_not_found_text("DEQUANTIZE", 2) in out


def test_legacy_quantizer_versions_and_stale_metadata_are_explained(corpus_paths, capsys):
    """mltk_anomaly_detection went through TFLite's legacy post-training quantizer: its int32
    STRIDED_SLICE and PACK are stored v2 (that quantizer stamps them so), and its metadata (1.11.0)
    is below the 1.14.0 its int8 FULLY_CONNECTED v4 needs."""
    path = corpus_paths["mltk_anomaly_detection"]
    code, doc = versions_json(capsys, path)
    assert code == 0
    notes = {o["op"]: o["note"] for o in doc["operators"] if o["computed_version"] != o["stored_version"]}
    assert set(notes) == {"STRIDED_SLICE", "PACK"}
    assert all("legacy post-training quantizer" in n and "v2" in n for n in notes.values())
    assert doc["min_runtime"]["stored"] == "1.11.0" and doc["min_runtime"]["from_stored_versions"] == "1.14.0"
    code, out, err = run_subprocess("versions", path)
    assert code == 0 and err == ""
    assert "below the 1.14.0 the stored versions need, so TFLite 1.11.0 would still refuse" in out
    # a float model's STRIDED_SLICE at v2 would not be blamed on the quantizer
    from workbench.schema import BuiltinOperator as B
    from workbench.versioning.writers import legacy_quantizer_note
    assert legacy_quantizer_note(B.STRIDED_SLICE, 2, 1, quantized_model=False) is None
    assert legacy_quantizer_note(B.STRIDED_SLICE, 3, 1, quantized_model=True) is None
    assert legacy_quantizer_note(B.CONV_2D, 3, 1, quantized_model=True) is not None
