"""`workbench run` and `workbench bench`."""

from __future__ import annotations

import numpy as np
import pytest

import workbench
from helpers.cli_helpers import run_inprocess, run_subprocess, strict_json
from workbench.interpreter import Interpreter
from workbench.schema import BuiltinOperator, Padding, Pool2DOptions
from workbench.schema.builder import ModelBuilder


@pytest.fixture
def add_model(tmp_path):
    b = ModelBuilder()
    x = b.input("x", [2, 3])
    c = b.constant("c", np.arange(6, dtype=np.float32).reshape(2, 3))
    y = b.tensor("y", [2, 3])
    b.op(BuiltinOperator.ADD, [x, c], [y])
    b.output(y)
    path = tmp_path / "add.tflite"
    path.write_bytes(workbench.dump(b.build()))
    return path


def test_run_with_a_given_input_prints_and_saves_the_output(add_model, tmp_path, capsys):
    x = np.full((2, 3), 10, np.float32)
    np.save(tmp_path / "x.npy", x)
    code, out, err = run_inprocess(capsys, "run", add_model, "--input", f"x={tmp_path / 'x.npy'}",
                                   "--save", tmp_path / "out.npz", "--steps")
    assert code == 0 and err == ""
    assert "ADD" in out and "output y: float32[2, 3] min 10.0 max 15.0" in out
    np.testing.assert_array_equal(np.load(tmp_path / "out.npz")["y"], x + np.arange(6).reshape(2, 3))


def test_run_json_matches_the_interpreter(add_model, capsys):
    code, out, _ = run_inprocess(capsys, "run", add_model, "--json", "--seed", "3")
    doc = strict_json(out)
    it = Interpreter(model_path=str(add_model))
    it.allocate_tensors()
    from workbench.bench import random_inputs

    it.set_tensor(0, random_inputs(it.get_input_details(), 3)[0])
    it.invoke()
    y = it.get_tensor(it.get_output_details()[0]["index"])
    assert code == 0 and doc["outputs"][0]["first"] == [float(v) for v in y.reshape(-1)[:6]]


def test_run_refuses_an_unknown_input_name(add_model, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((2, 3), np.float32))
    code, out, err = run_inprocess(capsys, "run", add_model, "--input", f"nope={tmp_path / 'x.npy'}")
    assert code == 2 and out == "" and "no such input" in err and "x" in err


def test_run_a_partition_compiled_model_gives_the_original_outputs(corpus_paths, tmp_path, capsys):
    src = corpus_paths["hand_recrop"]
    out_path = tmp_path / "compiled.tflite"
    code, _, err = run_inprocess(capsys, "partition", src, "--target", "tidl", "--strategy", "tidl", "-o", out_path)
    assert code == 0, err
    assert any(op.custom_code == "workbench-offload" for op in workbench.load(out_path).operator_codes)
    a = strict_json(run_inprocess(capsys, "run", src, "--json")[1])["outputs"]
    b = strict_json(run_inprocess(capsys, "run", out_path, "--json")[1])["outputs"]
    assert [o["first"] for o in a] == [o["first"] for o in b]


def test_bench_json_without_litert(add_model, capsys):
    code, out, _ = run_inprocess(capsys, "bench", add_model, "--runs", "5", "--json")
    doc = strict_json(out)
    assert code == 0 and doc["results"]["workbench"]["runs"] == 5 and doc["results"]["workbench"]["median_ms"] > 0


def test_bench_vs_litert_prints_ratios(add_model):
    code, out, err = run_subprocess("bench", add_model, "--runs", "5", "--vs-litert")
    assert code == 0, err
    assert "litert builtin (no XNNPACK)" in out and "litert default (XNNPACK)" in out and "ours / this" in out


# ------------------------------------------------------------------------------------------------
# inputs with -1 dimensions: resized like litert's resize_tensor_input, by an array's shape or --shape


@pytest.fixture
def window_model(tmp_path):
    """x [1, 1] with shape signature [1, -1], reshaped to [1, 1, N, 1] for a 1x4 VALID average pool of
    stride 2: at the stored width 1 the pool's output is empty ((1 + 2 - 4) / 2 truncates to 0)."""
    b = ModelBuilder()
    x = b.input("x", [1, 1], shape_signature=[1, -1])
    shape = b.constant("shape", np.array([1, 1, -1, 1], np.int32))
    r = b.tensor("r", [1, 1, 1, 1], shape_signature=[1, 1, -1, 1])
    y = b.tensor("y", [1, 1, 1, 1], shape_signature=[1, 1, -1, 1])
    b.op(BuiltinOperator.RESHAPE, [x, shape], [r])
    b.op(BuiltinOperator.AVERAGE_POOL_2D, [r], [y], Pool2DOptions(padding=Padding.VALID, stride_h=1, stride_w=2,
                                                                  filter_height=1, filter_width=4))
    b.output(y)
    path = tmp_path / "window.tflite"
    path.write_bytes(workbench.dump(b.build()))
    return path


def _pooled(x):
    n = (x.shape[1] - 4) // 2 + 1
    return np.array([x[0, 2 * k:2 * k + 4].mean() for k in range(n)], np.float32).reshape(1, 1, n, 1)


def test_run_resizes_a_minus_1_input_to_the_given_array(window_model, tmp_path, capsys):
    x = np.arange(10, dtype=np.float32).reshape(1, 10)
    np.save(tmp_path / "x.npy", x)
    code, out, err = run_inprocess(capsys, "run", window_model, "--input", f"x={tmp_path / 'x.npy'}",
                                   "--save", tmp_path / "out.npz")
    assert code == 0, err
    assert "output y: float32[1, 1, 4, 1]" in out
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["y"], _pooled(x), rtol=1e-6)


def test_run_shape_option_resizes_a_seeded_input(window_model, capsys):
    code, out, err = run_inprocess(capsys, "run", window_model, "--shape", "x=1,1280", "--json", "--seed", "5")
    assert code == 0, err
    doc = strict_json(out)
    assert doc["outputs"][0]["shape"] == [1, 1, 639, 1]
    from workbench.bench import random_inputs

    x = random_inputs([{"name": "x", "dtype": np.float32, "shape": (1, 1280)}], 5)[0]
    np.testing.assert_allclose(doc["outputs"][0]["first"], _pooled(x).reshape(-1)[:6], rtol=1e-6)
    # by position, and 1x1280 spelled with an x
    code, out, err = run_inprocess(capsys, "run", window_model, "--shape", "0=1x1280", "--json", "--seed", "5")
    assert code == 0 and strict_json(out) == doc, err


def test_run_without_a_size_runs_the_stored_shape(window_model, capsys):
    code, out, err = run_inprocess(capsys, "run", window_model, "--json")
    assert code == 0, err
    assert strict_json(out)["outputs"][0]["shape"] == [1, 1, 0, 1]


def test_run_refuses_to_resize_a_fixed_dimension(window_model, add_model, tmp_path, capsys):
    code, out, err = run_inprocess(capsys, "run", window_model, "--shape", "x=2,1280")
    assert code == 2 and out == ""
    assert "dimension 0 is fixed at 1 and cannot become 2" in err and "signature [1, -1]" in err
    np.save(tmp_path / "x.npy", np.zeros((2, 4), np.float32))
    code, out, err = run_inprocess(capsys, "run", add_model, "--input", f"x={tmp_path / 'x.npy'}")
    assert code == 2 and "dimension 1 is fixed at 3 and cannot become 4" in err and "--input x" in err
    code, out, err = run_inprocess(capsys, "run", window_model, "--shape", "x=1,2,3")
    assert code == 2 and "has rank 2" in err


def test_run_shape_and_input_must_agree(window_model, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 8), np.float32))
    code, _, err = run_inprocess(capsys, "run", window_model, "--shape", "x=1,9", "--input", f"x={tmp_path / 'x.npy'}")
    assert code == 2 and "the array has shape [1, 8], but --shape x=1,9 asks for [1, 9]" in err
    code, _, err = run_inprocess(capsys, "run", window_model, "--shape", "x=1,-3")
    assert code == 2 and "expected NAME=D0,D1,..." in err
    code, _, err = run_inprocess(capsys, "run", window_model, "--shape", "nope=1,3")
    assert code == 2 and "--shape 'nope': the model has no such input" in err


def test_run_help_documents_shape(capsys):
    code, out, _ = run_inprocess(capsys, "run", "--help")
    assert code == 0 and "--shape NAME=D0,D1,..." in out and "-1" in out


def test_melspectrogram_needs_a_size_and_says_so(corpus_paths, capsys):
    """openWakeWord's melspectrogram is stored as [1, 1] (signature [-1, -1]): its 512-tap, stride-160
    VALID CONV_2D cannot run there (litert fails prepare too); the error names the node, the sizes,
    the padding, and how to give a size."""
    path = corpus_paths["openwakeword_melspectrogram"]
    code, out, err = run_inprocess(capsys, "run", path)
    assert code == 2 and out == ""
    assert "CONV_2D (node 3): input width 1 is too small for VALID padding with filter width 512" in err
    assert "--shape serving_default_input:0=..." in err
    code, out, err = run_inprocess(capsys, "run", path, "--shape", "0=1,1280", "--json")
    assert code == 0 and strict_json(out)["outputs"][0]["shape"] == [1, 1, 5, 32], err


def test_bench_shape_option(window_model, capsys):
    code, out, err = run_inprocess(capsys, "bench", window_model, "--shape", "x=1,64", "--runs", "2", "--json")
    assert code == 0, err
    doc = strict_json(out)
    assert doc["inputs"] == {"x": [1, 64]} and doc["results"]["workbench"]["runs"] == 2
    code, out, err = run_inprocess(capsys, "bench", window_model, "--shape", "x=1,64", "--runs", "2")
    assert code == 0 and "inputs x [1, 64]" in out


def test_bench_vs_litert_resizes_litert_too(window_model):
    """--shape with --vs-litert: both litert children resize x before allocating and run at [1, 64]
    (at the stored [1, 1] the pool's output would be empty); by name and by position alike."""
    for spec in ("x=1,64", "0=1x64"):
        code, out, err = run_subprocess("bench", window_model, "--shape", spec, "--runs", "2", "--vs-litert", "--json")
        assert code == 0, err
        doc = strict_json(out)
        assert doc["inputs"] == {"x": [1, 64]}
        assert list(doc["results"]) == ["workbench", "litert builtin (no XNNPACK)", "litert default (XNNPACK)"]
        for name, r in doc["results"].items():
            assert r["inputs"] == {"x": [1, 64]}, name
            assert r["outputs"] == {"y": [1, 1, 31, 1]}, name
            assert r["runs"] == 2, name


def test_litert_median_checks_the_input_mapping(window_model):
    from workbench.bench import litert_median
    from workbench.errors import WorkbenchError

    r = litert_median(str(window_model), runs=1, input_shapes=[(0, "x", [1, 10])])
    assert r["inputs"] == {"x": [1, 10]} and r["outputs"] == {"y": [1, 1, 4, 1]}
    assert litert_median(str(window_model), runs=1)["outputs"] == {"y": [1, 1, 0, 1]}
    with pytest.raises(WorkbenchError, match="'z' for workbench but 'x' for ai-edge-litert"):
        litert_median(str(window_model), runs=1, input_shapes=[(0, "z", [1, 10])])
