"""`workbench run` and `workbench bench`."""

from __future__ import annotations


import numpy as np
import pytest

import workbench
from workbench.interpreter import Interpreter
from workbench.schema import BuiltinOperator
from workbench.schema.builder import ModelBuilder

from cli_helpers import run_inprocess, run_subprocess, strict_json


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
