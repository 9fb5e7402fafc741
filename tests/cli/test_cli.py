"""`workbench inspect`: run in-process (``main([...])``) and as ``python -m workbench.cli``.

The JSON document is checked against facts read independently by the ``tflite`` PyPI package's
generated readers (op names, versions, inputs/outputs, tensor shapes/types, metadata), and against
what a tiny model built in code is known to contain.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
import tflite
from flatbuffers import flexbuffers

import workbench
from helpers.cli_helpers import run_inprocess, run_subprocess, strict_json
from workbench.schema import CLASSES, ActivationFunctionType, BuiltinOperator, Padding
from workbench.schema.builder import ModelBuilder

ROOT = Path(__file__).resolve().parents[2]

TFLITE_TYPE_NAME = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
CUSTOM_CODE = 32


# ------------------------------------------------------------------------------------------------
# helpers








def assert_one_line_error(code: int, out: str, err: str, *fragments: str) -> None:
    assert code == 2, (code, out, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    for f in fragments:
        assert f in lines[0], (f, lines[0])


# ------------------------------------------------------------------------------------------------
# the tiny model


@pytest.fixture(scope="module")
def tiny_path(tmp_path_factory) -> Path:
    b = ModelBuilder("tiny cli model")
    x = b.input("x", [1, 4, 4, 3], np.int8, quantization=dict(scale=0.5, zero_point=-1),
                shape_signature=[-1, 4, 4, 3])
    w = b.constant("w", np.ones((2, 1, 1, 3), np.int8),
                   quantization=dict(scale=[0.25, 0.125], zero_point=[0, 0], quantized_dimension=0))
    bias = b.constant("bias", np.zeros(2, np.int32))
    y = b.tensor("y", [1, 4, 4, 2], np.int8, quantization=dict(scale=float("nan"), zero_point=3))
    b.tensor("state", [1, 2], np.float32, is_variable=True)
    z = b.tensor("z", [1, 4, 4, 2], np.int8)
    b.op(BuiltinOperator.CONV_2D, [x, w, bias], [y],
         CLASSES["Conv2DOptions"](padding=Padding.VALID, stride_w=1, stride_h=2,
                                  fused_activation_function=ActivationFunctionType.RELU6), version=3)
    b.op(None, [y, -1], [z], custom_code="MyCustom",
         custom_options=bytes(flexbuffers.Dumps({"alpha": 2, "beta": [1.5, 2.5], "name": "hi"})))
    b.output(z)
    b.add_metadata("min_runtime_version", b"2.3.0" + b"\0" * 11)
    b.add_metadata("blob", bytes([0, 1, 2, 3, 255]))
    model = b.build()
    tm = CLASSES["TensorMap"]
    sig = CLASSES["SignatureDef"](inputs=(tm(name="in", tensor_index=x),), outputs=(tm(name="out", tensor_index=z),),
                                  signature_key="serving_default", subgraph_index=0)
    model = dataclasses.replace(model, signature_defs=(sig,))
    path = tmp_path_factory.mktemp("cli") / "tiny.tflite"
    path.write_bytes(workbench.dump(model))
    return path


def test_tiny_model_json_has_the_built_facts(tiny_path, capsys):
    code, out, err = run_inprocess(capsys, "inspect", tiny_path, "--json")
    assert code == 0 and err == ""
    doc = strict_json(out)
    assert doc["file"] == str(tiny_path)
    assert doc["size"] == tiny_path.stat().st_size
    assert doc["version"] == 3
    assert doc["description"] == "tiny cli model"
    assert doc["min_runtime_version"] == "2.3.0"
    assert doc["load_notes"] == []
    assert [(c["index"], c["op"], c["builtin_code"], c["custom_code"], c["version"]) for c in doc["operator_codes"]] \
        == [(0, "CONV_2D", 3, None, 3), (1, "MyCustom", 32, "MyCustom", 1)]

    (sg,) = doc["subgraphs"]
    assert (sg["index"], sg["name"], sg["inputs"], sg["outputs"]) == (0, "main", [0], [5])
    t = {x["name"]: x for x in sg["tensors"]}
    assert [x["index"] for x in sg["tensors"]] == list(range(6))
    assert t["x"]["type"] == "INT8" and t["x"]["shape"] == [1, 4, 4, 3]
    assert t["x"]["shape_signature"] == [-1, 4, 4, 3]
    assert t["x"]["quantization"]["scale"] == [0.5] and t["x"]["quantization"]["zero_point"] == [-1]
    assert t["w"]["quantization"]["scale"] == [0.25, 0.125]
    assert t["w"]["quantization"]["quantized_dimension"] == 0
    assert t["w"]["bytes"] == 6 and t["w"]["buffer"] > 0
    assert t["bias"]["type"] == "INT32" and t["bias"]["bytes"] == 8 and t["bias"]["quantization"] is None
    assert t["y"]["quantization"]["scale"] == ["NaN"]  # non-finite floats become strings
    assert t["state"]["is_variable"] is True and t["x"]["is_variable"] is False
    assert t["z"]["buffer"] == 0 and t["z"]["bytes"] == 0 and t["z"]["sparse"] is False

    conv, custom = sg["operators"]
    assert (conv["index"], conv["op"], conv["version"], conv["inputs"], conv["outputs"]) == \
        (0, "CONV_2D", 3, [0, 1, 2], [3])
    assert conv["options_table"] == "Conv2DOptions"
    assert conv["options"] == {"padding": "VALID", "stride_w": 1, "stride_h": 2,
                               "fused_activation_function": "RELU6"}
    assert conv["custom_options"] is None
    assert (custom["op"], custom["inputs"], custom["outputs"], custom["options_table"]) == \
        ("MyCustom", [3, -1], [5], None)
    assert custom["custom_options"] == {"alpha": 2, "beta": [1.5, 2.5], "name": "hi"}
    assert custom["custom_options_format"] == "flexbuffers"

    md = doc["metadata"]
    assert md["min_runtime_version"]["bytes"] == 16 and md["min_runtime_version"]["text"] == "2.3.0"
    assert md["blob"]["bytes"] == 5 and md["blob"]["text"] is None
    assert doc["signatures"] == [{"key": "serving_default", "subgraph_index": 0,
                                  "inputs": {"in": 0}, "outputs": {"out": 5}}]


def test_tiny_model_text_view_shows_every_section(tiny_path, capsys):
    code, out, err = run_inprocess(capsys, "inspect", tiny_path)
    assert code == 0 and err == ""
    for fragment in (
        f"{tiny_path}: {tiny_path.stat().st_size:,} bytes, schema version 3",
        "description: tiny cli model",
        "min_runtime_version: 2.3.0",
        "CUSTOM MyCustom",
        "[1,4,4,3] sig [-1,4,4,3]",
        "int8 scale=0.5 zp=-1",
        "per-channel(2) axis 0",
        "variable",
        "1 (6 B)",
        "0,1,2 → 3  padding=VALID stride_w=1 stride_h=2 fused_activation_function=RELU6",
        "3,- → 5  custom={alpha=2, beta=[1.5,2.5], name=hi}",
        "'2.3.0'",
        "'serving_default' → subgraph 0",
        "input  in → tensor 0",
        "output out → tensor 5",
    ):
        assert fragment in out, fragment


def test_subprocess_and_inprocess_agree_on_tiny_model(tiny_path, capsys):
    for args in (["--json"], [], ["--limit", "1"]):
        code, out, err = run_subprocess("inspect", tiny_path, *args)
        assert code == 0, err
        assert err == ""
        assert (code, out, err) == run_inprocess(capsys, "inspect", tiny_path, *args)


def test_limit_caps_lists_with_a_count_of_the_rest(tiny_path, capsys):
    code, out, _ = run_inprocess(capsys, "inspect", tiny_path, "--limit", "2")
    assert code == 0
    assert "… 4 more" in out  # 6 tensors, 2 shown
    lines = out.splitlines()
    block = lines[lines.index("  tensors") + 1:lines.index("  operators")]
    assert [line.split()[1] for line in block[1:3]] == ["x", "w"] and block[3] == "    … 4 more"
    code, full, _ = run_inprocess(capsys, "inspect", tiny_path)
    assert "more" not in full


def test_json_output_is_not_limited(tiny_path, capsys):
    _, out, _ = run_inprocess(capsys, "inspect", tiny_path, "--json", "--limit", "1")
    assert len(strict_json(out)["subgraphs"][0]["tensors"]) == 6


def test_subgraph_selects_one_and_rejects_a_missing_one(tiny_path, capsys):
    code, out, _ = run_inprocess(capsys, "inspect", tiny_path, "--json", "--subgraph", "0")
    assert code == 0 and [s["index"] for s in strict_json(out)["subgraphs"]] == [0]
    assert_one_line_error(*run_inprocess(capsys, "inspect", tiny_path, "--subgraph", "3"),
                          "subgraph 3 does not exist")


# ------------------------------------------------------------------------------------------------
# errors


def test_truncated_file_is_one_line_error_with_byte_offset(tiny_path, tmp_path, capsys):
    bad = tmp_path / "truncated.tflite"
    bad.write_bytes(tiny_path.read_bytes()[: tiny_path.stat().st_size // 2])
    assert_one_line_error(*run_inprocess(capsys, "inspect", bad, "--json"), str(bad), "byte offset")
    assert_one_line_error(*run_subprocess("inspect", bad), str(bad), "byte offset")


def test_wrong_identifier_is_one_line_error(tiny_path, tmp_path, capsys):
    data = bytearray(tiny_path.read_bytes())
    data[4:8] = b"NOPE"
    bad = tmp_path / "ident.tflite"
    bad.write_bytes(bytes(data))
    assert_one_line_error(*run_inprocess(capsys, "inspect", bad), "identifier", "not a TFLite model", "byte offset 4")
    assert_one_line_error(*run_subprocess("inspect", bad, "--json"), "identifier")


def test_missing_file_is_one_line_error(tmp_path, capsys):
    missing = tmp_path / "nope.tflite"
    assert_one_line_error(*run_inprocess(capsys, "inspect", missing), str(missing), "No such file")
    assert_one_line_error(*run_subprocess("inspect", missing, "--json"), str(missing))


def test_empty_file_and_directory_are_one_line_errors(tmp_path, capsys):
    empty = tmp_path / "empty.tflite"
    empty.write_bytes(b"")
    assert_one_line_error(*run_inprocess(capsys, "inspect", empty), "at least 8 bytes")
    assert_one_line_error(*run_inprocess(capsys, "inspect", tmp_path), str(tmp_path))


def test_usage_errors_exit_2(capsys):
    assert run_inprocess(capsys)[0] == 2
    assert run_inprocess(capsys, "no-such-command")[0] == 2
    assert run_inprocess(capsys, "inspect")[0] == 2
    assert run_inprocess(capsys, "inspect", "x.tflite", "--limit", "-1")[0] == 2
    code, out, _ = run_inprocess(capsys, "--help")
    assert code == 0 and "inspect" in out


# ------------------------------------------------------------------------------------------------
# every corpus model, against the tflite package's reading


def _np_list(value) -> list:
    """The tflite package's *AsNumpy() returns 0 (not an array) for an absent vector."""
    return [] if isinstance(value, int) else value.tolist()


def _tflite_facts(data: bytes) -> dict:
    m = tflite.Model.GetRootAsModel(data, 0)
    codes = []
    for i in range(m.OperatorCodesLength()):
        oc = m.OperatorCodes(i)
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        name = oc.CustomCode().decode() if code == CUSTOM_CODE else tflite.BUILTIN_OPCODE2NAME[code]
        codes.append((name, oc.Version()))
    subgraphs = []
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        ops = []
        for i in range(sg.OperatorsLength()):
            op = sg.Operators(i)
            name, version = codes[op.OpcodeIndex()]
            ops.append({"op": name, "version": version, "inputs": _np_list(op.InputsAsNumpy()),
                        "outputs": _np_list(op.OutputsAsNumpy())})
        tensors = []
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            q = t.Quantization()
            tensors.append({
                "name": t.Name().decode("utf-8", "surrogateescape"),
                "type": TFLITE_TYPE_NAME[t.Type()],
                "shape": _np_list(t.ShapeAsNumpy()),
                "shape_signature": None if t.ShapeSignatureIsNone() else _np_list(t.ShapeSignatureAsNumpy()),
                "buffer": t.Buffer(),
                "is_variable": bool(t.IsVariable()),
                "sparse": t.Sparsity() is not None,
                "scale": [] if q is None else _np_list(q.ScaleAsNumpy()),
                "zero_point": [] if q is None else _np_list(q.ZeroPointAsNumpy()),
            })
        subgraphs.append({"inputs": _np_list(sg.InputsAsNumpy()), "outputs": _np_list(sg.OutputsAsNumpy()),
                          "ops": ops, "tensors": tensors})
    metadata = {}
    for i in range(m.MetadataLength()):
        md = m.Metadata(i)
        buf = m.Buffers(md.Buffer())
        metadata[md.Name().decode()] = bytes(_np_list(buf.DataAsNumpy()))
    signatures = []
    for i in range(m.SignatureDefsLength()):
        sd = m.SignatureDefs(i)
        signatures.append({
            "key": sd.SignatureKey().decode(),
            "subgraph_index": sd.SubgraphIndex(),
            "inputs": {sd.Inputs(j).Name().decode(): sd.Inputs(j).TensorIndex() for j in range(sd.InputsLength())},
            "outputs": {sd.Outputs(j).Name().decode(): sd.Outputs(j).TensorIndex()
                        for j in range(sd.OutputsLength())},
        })
    desc = m.Description()
    return {"version": m.Version(), "description": None if desc is None else desc.decode(), "codes": codes,
            "subgraphs": subgraphs, "metadata": metadata, "signatures": signatures}


def test_corpus_model_json_matches_the_tflite_package(corpus_model, model_path, capsys):
    code, out, err = run_inprocess(capsys, "inspect", model_path, "--json")
    assert code == 0 and err == ""
    doc = strict_json(out)
    facts = _tflite_facts(model_path.read_bytes())

    assert doc["size"] == model_path.stat().st_size
    assert doc["version"] == facts["version"]
    assert doc["description"] == facts["description"]
    assert [(c["op"], c["version"]) for c in doc["operator_codes"]] == facts["codes"]
    assert len(doc["subgraphs"]) == len(facts["subgraphs"])
    for s, (ours, theirs) in enumerate(zip(doc["subgraphs"], facts["subgraphs"])):
        assert ours["index"] == s
        assert (ours["inputs"], ours["outputs"]) == (theirs["inputs"], theirs["outputs"])
        assert len(ours["operators"]) == len(theirs["ops"])
        for i, (op, ref) in enumerate(zip(ours["operators"], theirs["ops"])):
            assert op["index"] == i
            assert {k: op[k] for k in ("op", "version", "inputs", "outputs")} == ref, f"operator {i}"
        assert len(ours["tensors"]) == len(theirs["tensors"])
        for i, (t, ref) in enumerate(zip(ours["tensors"], theirs["tensors"])):
            assert t["index"] == i
            for k in ("name", "type", "shape", "shape_signature", "buffer", "is_variable", "sparse"):
                assert t[k] == ref[k], (i, k)
            q = t["quantization"]
            if q is None:
                assert not ref["scale"] and not ref["zero_point"], i
            else:
                assert q["zero_point"] == ref["zero_point"], i
                assert np.array_equal(np.asarray(q["scale"], np.float32), np.asarray(ref["scale"], np.float32)), i

    assert {k: v["bytes"] for k, v in doc["metadata"].items()} == {k: len(v) for k, v in facts["metadata"].items()}
    raw = facts["metadata"].get("min_runtime_version")
    assert doc["min_runtime_version"] == (None if raw is None else raw.replace(b"\0", b"").decode("ascii"))
    if raw is not None:
        assert doc["metadata"]["min_runtime_version"]["text"] == doc["min_runtime_version"]
    assert doc["signatures"] == facts["signatures"]
    assert doc["load_notes"] == []


# the corpus models also inspected as a separate process (a second of start-up each), chosen for their
# variety: signatures with -1 sizes, Flex ops, metadata, control flow, the largest graphs
AS_A_PROCESS = ("star_trek_activation_phrase_v2", "openwakeword_melspectrogram", "aitoolkit_object_detector",
                "face_landmark_with_attention", "microwakeword_alexa", "basic_pitch_nmp")


def test_the_models_inspected_as_a_process_are_in_the_corpus(corpus_paths):
    assert set(AS_A_PROCESS) <= set(corpus_paths)


def test_corpus_model_text_and_subprocess(corpus_model, model_path, capsys):
    code, text, err = run_inprocess(capsys, "inspect", model_path)
    assert code == 0 and err == ""
    facts = _tflite_facts(model_path.read_bytes())
    for name, _ in facts["codes"]:
        assert name in text
    n_ops = sum(len(s["ops"]) for s in facts["subgraphs"])
    n_tensors = len(facts["subgraphs"][0]["tensors"])
    assert re.search(rf'^subgraph 0( "[^"]*")?: {n_tensors} tensors', text, re.M), text[:400]

    _, in_out, _ = run_inprocess(capsys, "inspect", model_path, "--json")
    assert sum(len(s["operators"]) for s in strict_json(in_out)["subgraphs"]) == n_ops
    if corpus_model in AS_A_PROCESS:
        code, sub_out, sub_err = run_subprocess("inspect", model_path, "--json")
        assert code == 0 and sub_err == ""
        assert sub_out == in_out

    code, limited, _ = run_inprocess(capsys, "inspect", model_path, "--limit", "3")
    assert code == 0
    assert f"… {n_tensors - 3} more" in limited
