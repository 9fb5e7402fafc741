"""Error messages that point the right way, and a new user's first steps.

Each test names the stumble it covers. LiteRT's own behaviour (ai-edge-litert, run in a child
process so its native library never shares this process with ours) is checked where the workbench
promises to match it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import workbench
from helpers.cli_helpers import ROOT, run_inprocess, strict_json
from workbench import cli
from workbench.cli._common import _write as cli_write
from workbench.cli.text import _node_list
from workbench.errors import NotAllocatedError, TensorError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.trace import NodeTiming, OpTypeTiming, Profile
from workbench.schema import BuiltinOperator, Conv2DOptions, Padding
from workbench.schema.builder import ModelBuilder

SAMPLES = ROOT / "sample_models"


def one_error_line(code, out, err, *fragments):
    """Exit 2, nothing on stdout, exactly one `error:` line on stderr holding every fragment."""
    assert code == 2, (code, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    assert "internal error" not in lines[0] and "Traceback" not in err
    return lines[0]


def litert(script: str) -> dict:
    """Run ``script`` (which sets ``result``) with ai-edge-litert in a child; its ``result`` as JSON."""
    pytest.importorskip("ai_edge_litert")
    code = ("import json, numpy as np\nfrom ai_edge_litert.interpreter import Interpreter\n"
            + textwrap.dedent(script) + "\nprint('RESULT' + json.dumps(result))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return json.loads(line[len("RESULT"):])


def _write(tmp_path: Path, name: str, model) -> Path:
    path = tmp_path / name
    path.write_bytes(workbench.dump(model))
    return path


@pytest.fixture
def add_model(tmp_path):
    b = ModelBuilder()
    x = b.input("x", [2, 3])
    c = b.constant("c", np.arange(6, dtype=np.float32).reshape(2, 3))
    y = b.tensor("y", [2, 3])
    b.op(BuiltinOperator.ADD, [x, c], [y])
    b.output(y)
    return _write(tmp_path, "add.tflite", b.build())


# ------------------------------------------------------------------------------------------------
# the shape-signature hint belongs to shape errors only


def test_an_unregistered_custom_op_gets_no_shape_hint(tmp_path, capsys):
    b = ModelBuilder()
    x = b.input("x", [1, 3], shape_signature=[-1, 3])
    y = b.tensor("y", [1, 3], shape_signature=[-1, 3])
    b.op(BuiltinOperator.CUSTOM, [x], [y], custom_code="MyCustomOp")
    b.output(y)
    path = _write(tmp_path, "custom.tflite", b.build())
    line = one_error_line(*run_inprocess(capsys, "run", path), "custom op 'MyCustomOp' is not registered",
                          "needed by node 0")
    assert "hint" not in line and "shape signature" not in line


def test_a_shape_error_still_gets_the_hint(tmp_path, capsys):
    """x [1, 1] (signature [1, -1]) through a 1x4 VALID CONV_2D of stride 1: width 1 cannot be prepared."""
    b = ModelBuilder()
    x = b.input("x", [1, 1], shape_signature=[1, -1])
    shape = b.constant("shape", np.array([1, 1, -1, 1], np.int32))
    r = b.tensor("r", [1, 1, 1, 1], shape_signature=[1, 1, -1, 1])
    w = b.constant("w", np.ones((1, 1, 4, 1), np.float32))
    bias = b.constant("bias", np.zeros(1, np.float32))
    y = b.tensor("y", [1, 1, 1, 1], shape_signature=[1, 1, -1, 1])
    b.op(BuiltinOperator.RESHAPE, [x, shape], [r])
    b.op(BuiltinOperator.CONV_2D, [r, w, bias], [y], Conv2DOptions(padding=Padding.VALID, stride_h=1, stride_w=1))
    b.output(y)
    path = _write(tmp_path, "conv.tflite", b.build())
    code, out, err = run_inprocess(capsys, "run", path)
    one_error_line(code, out, err, "CONV_2D (node 1): input width 1 is too small", "(hint: input 'x' has shape "
                   "signature [1, -1] and runs at its stored shape [1, 1] unless resized with --shape x=...")
    code, out, err = run_inprocess(capsys, "run", path, "--shape", "x=1,8")
    assert code == 0, err


# ------------------------------------------------------------------------------------------------
# --input NAME=FILE.npy with a file that is not a numeric .npy: a usage error naming the file


def _bad_inputs(tmp):
    good = tmp / "good.npy"
    np.save(good, np.zeros((2, 3), np.float32))
    raw = good.read_bytes()
    files = {
        "text.npy": (b"hello\n", "is not a .npy file"),
        "empty.npy": (b"", "is an empty file"),
        "header.npy": (raw[:40], "truncated"),
        "data.npy": (raw[:-8], "truncated or corrupt"),
    }
    out = {}
    for name, (data, why) in files.items():
        (tmp / name).write_bytes(data)
        out[name] = why
    np.save(tmp / "object.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    out["object.npy"] = "holds an object array"
    np.save(tmp / "words.npy", np.array(["a", "b"]))
    out["words.npy"] = "holds a <U1 array, not numbers; input 'x' is float32"
    np.save(tmp / "record.npy", np.zeros(3, [("a", "i4")]))
    out["record.npy"] = "not numbers"
    np.save(tmp / "double.npy", np.zeros((2, 3), np.float64))
    out["double.npy"] = "holds a float64 array; input 'x' is float32 (save it with .astype(np.float32))"
    np.savez(tmp / "arrays.npz", x=np.zeros((2, 3), np.float32))
    out["arrays.npz"] = "is an .npz archive"
    out["missing.npy"] = "cannot read"
    return out


def test_an_input_file_that_is_not_a_numeric_npy_is_a_usage_error(add_model, tmp_path, capsys):
    for name, why in _bad_inputs(tmp_path).items():
        path = tmp_path / name
        line = one_error_line(*run_inprocess(capsys, "run", add_model, "--input", f"x={path}"),
                              "--input x", str(path), why)
        assert line.count(str(path)) == 1, line


def test_a_string_input_takes_an_array_of_str(tmp_path, capsys):
    words = np.array([["a", "bb", "ccc", "dddd"], ["e", "f", "g", "h"]])
    np.save(tmp_path / "words.npy", words)
    code, out, err = run_inprocess(capsys, "run", SAMPLES / "string_ops.tflite", "--input",
                                   f"0={tmp_path / 'words.npy'}", "--json")
    assert code == 0, err
    np.save(tmp_path / "numbers.npy", np.zeros((2, 4), np.float32))
    one_error_line(*run_inprocess(capsys, "run", SAMPLES / "string_ops.tflite", "--input",
                                  f"0={tmp_path / 'numbers.npy'}"), "is a STRING tensor")


# ------------------------------------------------------------------------------------------------
# writing where no directory exists: "cannot write", before any work is done


def test_run_save_into_a_missing_directory(add_model, tmp_path, capsys):
    target = tmp_path / "nowhere" / "out.npz"
    line = one_error_line(*run_inprocess(capsys, "run", add_model, "--save", target),
                          f"--save {target}: cannot write there: directory {tmp_path / 'nowhere'} does not exist")
    assert "cannot read" not in line
    one_error_line(*run_inprocess(capsys, "run", add_model, "--save", tmp_path), "it is a directory")


def test_partition_output_into_a_missing_directory(tmp_path, capsys):
    target = tmp_path / "nowhere" / "out.tflite"
    line = one_error_line(*run_inprocess(capsys, "partition", SAMPLES / "int8_cnn.tflite", "-o", target),
                          f"-o {target}: cannot write there: directory {tmp_path / 'nowhere'} does not exist")
    assert "cannot read" not in line and not target.parent.exists()


def test_a_write_that_fails_late_says_cannot_write(tmp_path):
    def fail(path):
        raise PermissionError(13, "Permission denied", path)

    with pytest.raises(WorkbenchError, match=r"^-o x\.tflite: cannot write: Permission denied$"):
        cli_write("x.tflite", "-o", fail)


# ------------------------------------------------------------------------------------------------
# num_threads below 1: refused, as litert refuses it


@pytest.mark.parametrize("n", [0, -1])
def test_num_threads_below_1_is_a_value_error_as_in_litert(add_model, n):
    with pytest.raises(ValueError, match=f"num_threads should be >= 1, got {n}"):
        Interpreter(model_path=str(add_model), num_threads=n)
    got = litert(f"""
        try:
            Interpreter(model_path={str(add_model)!r}, num_threads={n})
            result = None
        except Exception as e:
            result = [type(e).__name__, str(e)]
    """)
    assert got == ["ValueError", "num_threads should >= 1"]
    assert Interpreter(model_path=str(add_model), num_threads=None).num_threads == 1


@pytest.mark.parametrize("n", ["0", "-2"])
def test_bench_threads_below_1_is_a_usage_error(add_model, capsys, n):
    code, out, err = run_inprocess(capsys, "bench", add_model, "--threads", n, "--runs", "1")
    assert code == 2 and out == ""
    assert f"argument --threads: {int(n)} is below 1" in err and "Traceback" not in err


# ------------------------------------------------------------------------------------------------
# partition --deny: an unknown op name or a node out of range is refused


@pytest.mark.parametrize("item, fragments", [
    ("NOPE", ["--deny NOPE: 'NOPE' is not an op name", "its ops: ADD,"]),
    ("conv_2d", ["did you mean CONV_2D?"]),
    ("WHILE", ["--deny WHILE: the model has no WHILE operator in subgraph 0"]),
    ("14", ["--deny 14: there is no node 14 (subgraph 0 has 14 operators, nodes 0..13)"]),
    ("-1", ["--deny -1: there is no node -1"]),
])
def test_partition_deny_refuses_what_does_not_exist(capsys, item, fragments):
    one_error_line(*run_inprocess(capsys, "partition", SAMPLES / "int8_cnn.tflite", "--deny", item), *fragments)


def test_partition_deny_of_what_exists_still_works(capsys):
    code, out, err = run_inprocess(capsys, "partition", SAMPLES / "int8_cnn.tflite", "--deny", "CONV_2D", "13")
    assert code == 0, err
    assert "CONV_2D: op type denied by the policy" in out and "SOFTMAX: node 13 denied by the policy" in out


# ------------------------------------------------------------------------------------------------
# invoke() before allocate_tensors(): a RuntimeError, as litert's


def test_invoke_before_allocate_is_a_runtime_error_as_in_litert(add_model):
    it = Interpreter(model_path=str(add_model))
    for call in (it.invoke, lambda: list(it.steps()), lambda: it.profile(runs=1)):
        with pytest.raises(RuntimeError, match="call allocate_tensors") as info:
            call()
        assert isinstance(info.value, NotAllocatedError) and isinstance(info.value, WorkbenchError)
    # set_tensor / get_tensor before allocating: ValueError, as litert's
    with pytest.raises(ValueError) as info:
        it.set_tensor(0, np.zeros((2, 3), np.float32))
    assert isinstance(info.value, TensorError)
    with pytest.raises(ValueError):
        it.get_tensor(0)
    got = litert(f"""
        it = Interpreter(model_path={str(add_model)!r})
        result = {{}}
        for name, call in (("invoke", it.invoke), ("get_tensor", lambda: it.get_tensor(0)),
                           ("set_tensor", lambda: it.set_tensor(0, np.zeros((2, 3), np.float32)))):
            try:
                call()
            except Exception as e:
                result[name] = [c.__name__ for c in type(e).__mro__]
    """)
    assert "RuntimeError" in got["invoke"]
    assert "ValueError" in got["get_tensor"] and "ValueError" in got["set_tensor"]


# ------------------------------------------------------------------------------------------------
# a corpus model's name where a path goes


def test_a_corpus_name_is_accepted_where_a_path_is(corpus_paths, capsys):
    code, out, err = run_inprocess(capsys, "inspect", "face_landmark", "--limit", "1")
    assert code == 0, err
    assert out.startswith(f"{corpus_paths['face_landmark']}: ")
    code, out, err = run_inprocess(capsys, "versions", "sine_float", "--json")
    assert code == 0 and strict_json(out)["file"] == str(corpus_paths["sine_float"])


def test_a_misspelt_or_unfetched_corpus_name_says_so(tmp_path, monkeypatch, capsys):
    one_error_line(*run_inprocess(capsys, "inspect", "face_landmrk"), "cannot read face_landmrk: no such file",
                   "not a corpus model name; did you mean face_landmark")
    one_error_line(*run_inprocess(capsys, "run", "nothing_like_it"), "python -m workbench.corpus")
    one_error_line(*run_inprocess(capsys, "inspect", tmp_path / "x.tflite"), "cannot read", "No such file")
    monkeypatch.setenv("WORKBENCH_CORPUS_DIR", str(tmp_path / "empty"))
    one_error_line(*run_inprocess(capsys, "inspect", "sine_float"), "'sine_float' is a corpus model that is not "
                   "fetched yet", "python -m workbench.corpus")


# ------------------------------------------------------------------------------------------------
# versions --runtime X.Y, and findings grouped by (kind, op, stored version)


def test_a_release_with_two_components_is_read_as_x_y_0(corpus_paths, capsys):
    path = corpus_paths["face_landmark"]           # DEQUANTIZE v2 everywhere: first ran in TFLite 1.14.0
    code, out, err = run_inprocess(capsys, "versions", path, "--runtime", "1.14")
    assert code == 0, err
    assert "TFLite 1.14.0: can run this model" in out and "note: --runtime 1.14 read as release 1.14.0" in out
    code, out, _ = run_inprocess(capsys, "versions", path, "--runtime", "1.14", "--json")
    doc = strict_json(out)
    assert (doc["runtime"], doc["runtime_given"], doc["can_run"]) == ("1.14.0", "1.14", True)
    code, out, _ = run_inprocess(capsys, "versions", path, "--runtime", "1.14.0")
    assert code == 0 and "read as" not in out
    assert cli.full_release("2") == "2.0.0" and cli.full_release("2.3.0.1") == "2.3.0.1"


def test_findings_of_one_op_and_version_come_once_with_the_nodes(corpus_paths, capsys):
    path = corpus_paths["face_landmark"]
    code, out, _ = run_inprocess(capsys, "versions", path, "--runtime", "1.13")
    assert code == 1
    verdict = out[out.index("TFLite 1.13.0: cannot run this model (113 findings)"):].splitlines()
    assert verdict[2] == "  op-version: [0:0, 0:1, 0:3, 0:5, 0:6, 0:8, … 107 more] DEQUANTIZE v2 (113 nodes)"
    assert sum(1 for line in verdict if line.strip().startswith("error:")) == 1
    assert len(verdict) <= 6
    code, out, _ = run_inprocess(capsys, "versions", path, "--runtime", "1.13", "--json")
    doc = strict_json(out)
    assert len(doc["findings"]) == 113                              # the JSON stays complete
    (group,) = doc["finding_groups"]
    assert (group["kind"], group["op"], group["version"], group["count"]) == ("op-version", "DEQUANTIZE", 2, 113)
    assert group["nodes"] == [[f["subgraph"], f["index"]] for f in doc["findings"]]


def _finding(kind, s, i, op, version, error, reason="", refuses=True, computed=None):
    return {"kind": kind, "subgraph": s, "index": i, "op": op, "version": version, "computed_version": computed,
            "error": error, "reason": reason, "refuses": refuses}


def test_grouping_is_generic_over_the_kind_of_finding():
    findings = [_finding("custom-op", 0, k, "MyOp", 1, "Encountered unresolved custom op: MyOp.") for k in (2, 5, 9)]
    findings += [_finding("flex-op", 0, 4, "FlexAddV2", 1, "Regular TensorFlow ops are not supported by this "
                          "interpreter. Make sure you apply/link the Flex delegate before inference.")]
    findings += [_finding("unsupported-types", 1, k, "ADD", 1, f"ADD: type {t} not supported", "int16 needs 2.x")
                 for k, t in ((0, "INT16"), (3, "INT16"), (7, "INT4"))]
    findings += [_finding("min-runtime-metadata", None, None, None, None, "metadata says 9.9.9")]
    doc = {"file": "m.tflite", "operators": [], "differences": 0,
           "min_runtime": {"computed": None, "stored": None, "drivers": [], "from_stored_versions": None,
                           "stored_version_drivers": []},
           "runtime": "2.3.0", "runtime_given": "2.3.0", "can_run": False, "findings": findings}
    text = cli.render_versions(doc)
    verdict = text[text.index("TFLite 2.3.0"):].splitlines()
    assert verdict[1:] == [
        "  custom-op: [0:2, 0:5, 0:9] MyOp v1 (3 nodes)",
        "    error: Encountered unresolved custom op: MyOp.",
        "  flex-op: [0:4] FlexAddV2 v1",
        "    error: Regular TensorFlow ops are not supported by this interpreter. Make sure you apply/link the "
        "Flex delegate before inference.",
        "  unsupported-types: [1:0, 1:3, 1:7] ADD v1 (3 nodes)",
        "    error: ADD: type INT16 not supported  [at 1:0, 1:3]",
        "    error: ADD: type INT4 not supported  [at 1:7]",
        "    why:   int16 needs 2.x",
        "  min-runtime-metadata: model",
        "    error: metadata says 9.9.9",
    ]
    groups = cli.group_findings(findings)
    assert [(g["kind"], g["count"]) for g in groups] == [("custom-op", 3), ("flex-op", 1), ("unsupported-types", 3),
                                                         ("min-runtime-metadata", 1)]
    many = cli.group_findings([_finding("custom-op", 0, k, "MyOp", 1, "e") for k in range(20)])
    assert _node_list(many[0]["nodes"]) == "0:0, 0:1, 0:2, 0:3, 0:4, 0:5, … 14 more"


# ------------------------------------------------------------------------------------------------
# an input of unknown rank takes any shape (litert's resize_tensor_input)


def test_an_unknown_rank_input_can_be_fed_and_matches_litert(tmp_path, capsys):
    path = SAMPLES / "strided_slice_masks.tflite"
    line = one_error_line(*run_inprocess(capsys, "run", path), "hint: input 'serving_default_x:0' has unknown "
                          "rank and runs as a scalar unless given a shape with --shape serving_default_x:0=...")
    assert "has rank 0" not in line
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    np.save(tmp_path / "x.npy", x)
    code, out, err = run_inprocess(capsys, "run", path, "--input", f"0={tmp_path / 'x.npy'}",
                                   "--save", tmp_path / "out.npz")
    assert code == 0, err
    ours = dict(np.load(tmp_path / "out.npz"))
    code, out, err = run_inprocess(capsys, "run", path, "--shape", "serving_default_x:0=3,2,2", "--json")
    assert code == 0 and len(strict_json(out)["outputs"]) == 2, err
    got = litert(f"""
        it = Interpreter(model_path={str(path)!r})
        d = it.get_input_details()[0]
        it.resize_tensor_input(d["index"], [4, 5])
        it.allocate_tensors()
        it.set_tensor(d["index"], np.arange(20, dtype=np.float32).reshape(4, 5))
        it.invoke()
        result = {{o["name"]: it.get_tensor(o["index"]).tolist() for o in it.get_output_details()}}
    """)
    assert set(got) == set(ours)
    for name, value in got.items():
        np.testing.assert_array_equal(ours[name], np.asarray(value, np.float32))


# ------------------------------------------------------------------------------------------------
# run --profile: columns as wide as their cells


def test_profile_columns_never_run_together(tmp_path, capsys):
    long_op, long_kernel = "Convolution2DTransposeBias", "convolution_2d_transpose_bias/blas+col2im"
    nodes = (NodeTiming(244, long_op, long_kernel, 0.5, 50.0, 50.0, (1, 256, 256, 1)),
             NodeTiming(3, "ADD", "add", 0.5, 50.0, 100.0, (1, 4)))
    profile = Profile(3, 1.0, nodes, (OpTypeTiming(long_op, 1, 0.5, 50.0, 50.0), OpTypeTiming("ADD", 1, 0.5, 50.0,
                                                                                              100.0)))
    text = cli.render_profile(profile)
    row = next(line for line in text.splitlines() if line.lstrip().startswith("244"))
    assert re.split(r"\s{2,}", row.strip()) == ["244", long_op, long_kernel, "0.500", "50.00%", "50.00%",
                                                 "[1, 256, 256, 1]"]
    summary = next(line for line in text.splitlines() if line.startswith(long_op))
    assert re.split(r"\s{2,}", summary) == [long_op, "1", "0.500", "50.00%", "50.00%"]
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    y = b.tensor("y", [1, 4])
    b.op(BuiltinOperator.RELU, [x], [y])
    b.output(y)
    code, out, err = run_inprocess(capsys, "run", _write(tmp_path, "relu.tflite", b.build()), "--profile", "2")
    assert code == 0, err
    top = out.splitlines()[out.splitlines().index("=" * 30 + " Top nodes by time " + "=" * 30) + 2]
    assert len(re.split(r"\s{2,}", top.strip())) == 7, top


# ------------------------------------------------------------------------------------------------
# precompile: skipped workload models read as the notes they are


def test_precompile_notes_do_not_read_like_failures(monkeypatch, capsys):
    from workbench.cli.commands import precompile
    from workbench.perf import precompiled

    manifest = {"workload_failures": ["string_ops.tflite: ValueError: it has an input that is not numeric"],
                "skipped": []}
    monkeypatch.setattr(precompiled, "build", lambda workload, log=print: manifest)
    monkeypatch.setattr(precompile, "precompile_models",
                        lambda folders, files, corpus: ([Path("string_ops.tflite")], ["a test's list: 1 model(s)"]))
    code, out, err = run_inprocess(capsys, "precompile")
    assert code == 0 and err == ""
    assert "model not run" not in out and "fail" not in out.replace("not a failure", "")
    assert "note: 1 workload model(s) skipped (expected, not a failure" in out
    assert "  skipped string_ops.tflite: ValueError" in out


def test_precompile_workload_comes_from_the_cache_and_the_folders_named(tmp_path, monkeypatch):
    from workbench import corpus
    from workbench.cli import precompile_models

    cache, folder = tmp_path / "cache", tmp_path / "mine"
    cache.mkdir()
    folder.mkdir()
    name = sorted(corpus.MODELS)[0]
    (cache / f"{name}.tflite").write_bytes(b"x")
    (folder / "a.tflite").write_bytes(b"x")
    (folder / "notes.txt").write_text("not a model")
    monkeypatch.setattr(corpus, "cache_dir", lambda: cache)
    models, sources = precompile_models([folder], [tmp_path / "b.tflite"])
    assert models == [cache / f"{name}.tflite", folder / "a.tflite", tmp_path / "b.tflite"]
    assert sources == [f"corpus cache {cache}: 1 of {len(corpus.MODELS)} model(s)", f"folder {folder}: 1 model(s)",
                       "named on the command line: 1 model(s)"]
    models, sources = precompile_models([folder], corpus=False)
    assert models == [folder / "a.tflite"] and len(sources) == 1


def test_precompile_says_which_sources_it_used_and_builds_nothing_from_an_empty_workload(tmp_path, monkeypatch,
                                                                                         capsys):
    from workbench import corpus
    from workbench.perf import precompiled

    monkeypatch.setattr(corpus, "cache_dir", lambda: tmp_path)   # an empty cache
    ran = []
    monkeypatch.setattr(precompiled, "build", lambda workload, log=print: ran.append(workload(lambda *_: None)) or {})
    code, out, err = run_inprocess(capsys, "precompile", "--models", str(tmp_path))
    assert code == 0 and err == "" and ran == []
    assert f"workload source: corpus cache {tmp_path}: 0 of" in out and f"folder {tmp_path}: 0 model(s)" in out
    assert "note: no workload models found in any source, so no library is built" in out
    code, out, err = run_inprocess(capsys, "precompile", "--models", str(tmp_path / "nope"))
    assert code == 2 and "--models " in err and "not a folder" in err


# ------------------------------------------------------------------------------------------------
# --version: the installed distribution's metadata, whose one source is pyproject.toml's version


def test_version_is_the_installed_distributions_version_from_pyproject(capsys):
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    code, out, err = run_inprocess(capsys, "--version")
    assert code == 0 and err == "" and out == f"workbench {declared}\n"


def test_version_is_read_from_the_distribution_metadata_not_the_package(capsys, monkeypatch):
    import importlib.metadata

    asked = []
    monkeypatch.setattr(importlib.metadata, "version", lambda name: asked.append(name) or "9.8.7")
    code, out, err = run_inprocess(capsys, "--version")
    assert code == 0 and out == "workbench 9.8.7\n" and asked == ["tflite-workbench"]


def test_version_without_an_installed_distribution_says_so(capsys, monkeypatch):
    import importlib.metadata

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    code, out, err = run_inprocess(capsys, "--version")
    assert code == 0 and out == "workbench (the tflite-workbench distribution is not installed)\n"


def test_the_package_version_is_the_same_metadata(monkeypatch):
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "9.8.7")
    assert workbench.__version__ == "9.8.7"
