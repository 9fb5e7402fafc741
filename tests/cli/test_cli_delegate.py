"""`workbench run MODEL --delegate TARGET …`: the summary, the trace, .npz inputs, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import workbench
from helpers.cli_helpers import ROOT, run_inprocess, strict_json
from workbench.delegate import SimulatedAccelerator

DIGITS = ROOT / "sample_models" / "digits_cnn_float.tflite"
SPLIT = ROOT / "sample_models" / "digits_split.npz"


def _image(tmp_path, name="in.npz", **arrays):
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def _x():
    return np.load(SPLIT)["x_test"][:1].astype(np.float32)


def test_run_with_a_delegate_summarizes_the_device_and_the_host(capsys, tmp_path):
    inp = _image(tmp_path, arr_0=_x())
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--delegate", "tidl", "--input", inp,
                                   "--json", "--save", tmp_path / "out.npz")
    assert code == 0, err
    doc = strict_json(out)
    s = doc["delegation"]
    # the tidl target takes all 7 nodes (the MEAN as a pooling layer): one partition, the image in, scores out
    assert s["nodes"] == {"device": 7, "cpu": 0} and s["cpu_reasons"] == {}
    assert [p["nodes"] for p in s["partitions"]] == [[0, 1, 2, 3, 4, 5, 6]]
    assert s["bytes_copied"] == {"in": 256, "out": 40}
    assert (s["strategy"], s["mode"]) == ("tflite", "runtime")
    plan = workbench.partition.partition(workbench.load(DIGITS), "tidl", "tflite")
    assert s["device_ms_modeled"] == pytest.approx(plan.estimate()["target_us"] / 1000, abs=1e-5)
    assert s["host_ms_measured"] >= 0 and s["log"][0].startswith("Replacing 7 out of 7 node(s)")
    # the same outputs as a plain run
    d = SimulatedAccelerator("tidl")
    it = workbench.Interpreter(model_path=str(DIGITS), experimental_delegates=[d])
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], _x())
    it.invoke()
    saved = np.load(tmp_path / "out.npz")
    assert np.array_equal(saved[saved.files[0]], it.get_tensor(it.get_output_details()[0]["index"]))


def test_run_writes_a_chrome_trace_and_text_steps(capsys, tmp_path):
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--delegate", "tidl", "--steps", "--trace",
                                   tmp_path / "t.json")
    assert code == 0, err
    assert "[device] copy in" in out and "[device] CONV_2D" in out and "modeled" in out
    assert "device: " in out and "(modeled from tidl's cost figures)" in out and "(measured)" in out
    doc = json.loads((tmp_path / "t.json").read_text())
    lanes = {e["tid"] for e in doc["traceEvents"] if e["ph"] == "X"}
    assert lanes == {1, 2}
    # without --delegate the trace has the host lane only
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--trace", tmp_path / "plain.json")
    assert code == 0 and {e["tid"] for e in json.loads((tmp_path / "plain.json").read_text())["traceEvents"]
                          if e["ph"] == "X"} == {1}


def test_an_npz_input_by_name_and_by_position(capsys, tmp_path):
    name = workbench.Interpreter(model_path=str(DIGITS)).get_input_details()[0]["name"]
    for kw in ({name: _x()}, {"arr_0": _x()}):
        code, out, err = run_inprocess(capsys, "run", DIGITS, "--input", _image(tmp_path, **kw), "--json")
        assert code == 0, err


@pytest.mark.parametrize("args, why", [
    (["--delegate", "no-such-target"], "Failed to load delegate from no-such-target"),
    (["--strategy", "tidl"], "--strategy needs --delegate TARGET"),
    (["--mode", "compiled"], "--mode needs --delegate TARGET"),
    # a runtime delegate only claims nodes; the walk is an offline compile (tflite/delegates/utils.cc
    # GraphPartitionHelper makes a runtime delegate's partitions)
    (["--delegate", "tidl", "--strategy", "tidl"], "strategy 'tidl' is an offline compile"),
    (["--delegate", "edgetpu", "--strategy", "edgetpu"], "or ask for it here with mode='compiled'"),
])
def test_bad_delegate_arguments_are_usage_errors(capsys, args, why):
    code, out, err = run_inprocess(capsys, "run", DIGITS, *args)
    assert code == 2 and out == "" and why in err and err.count("\n") == 1


def test_a_delegate_that_takes_no_node_leaves_the_model_on_the_cpu(capsys):
    # LiteRT applies such a delegate, it claims nothing and the model runs on the CPU: exit 0, one note
    plain_code, plain, _ = run_inprocess(capsys, "run", DIGITS, "--json")
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--delegate", "edgetpu")
    assert code == 0 and err == "", err
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert notes == [notes[0]] and "--delegate edgetpu took none of the model's 7 node(s)" in notes[0]
    assert "ran on the CPU" in notes[0] and "7 × dtype (e.g. node 0: " in notes[0] and "FLOAT32" in notes[0]
    assert "0 node(s) on the device in 0 partition(s), 7 on the CPU" in out and "Replacing" not in out
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--delegate", "edgetpu", "--json")
    doc = strict_json(out)
    assert code == 0 and doc["delegation"]["note"] == notes[0][len("note: "):]
    assert doc["delegation"]["nodes"] == {"device": 0, "cpu": 7} and doc["delegation"]["log"] == []
    assert doc["outputs"] == strict_json(plain)["outputs"]


@pytest.mark.parametrize("arrays, why", [
    ({"arr_0": np.zeros((1, 8, 8, 1), np.float64)}, "holds a float64 array"),
    ({"extra": np.zeros((1, 8, 8, 1), np.float32)}, "holds 'extra', which names no input"),
    ({}, "has no array for input"),
    ({"arr_0": np.zeros((2, 3), np.float32)}, "shape"),
])
def test_ill_formed_npz_inputs_are_usage_errors(capsys, tmp_path, arrays, why):
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--input", _image(tmp_path, **arrays))
    assert code == 2 and why in err, err


def test_an_input_given_twice_is_refused(capsys, tmp_path):
    np.save(tmp_path / "x.npy", _x())
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--input", _image(tmp_path, arr_0=_x()),
                                   "--input", f"0={tmp_path / 'x.npy'}")
    assert code == 2 and "is given twice" in err


def test_run_with_int8_offload_calibrated_from_the_training_split(capsys, tmp_path):
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--delegate", "tidl", "--mode", "compiled",
                                   "--strategy", "tidl", "--precision", "int8", "--calibration", f"{SPLIT}:x_train",
                                   "--calibration-frames", "32", "--json")
    assert code == 0, err
    s = strict_json(out)["delegation"]
    assert s["precision"] == "int8" and s["nodes"] == {"device": 7, "cpu": 0}
    assert (s["strategy"], s["mode"]) == ("tidl", "compiled")
    # frames stacked by input name work too
    name = workbench.Interpreter(model_path=str(DIGITS)).get_input_details()[0]["name"]
    np.savez(tmp_path / "cal.npz", **{name: np.load(SPLIT)["x_train"][:8]})
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--delegate", "tidl", "--precision", "int8",
                                   "--calibration", tmp_path / "cal.npz")
    assert code == 0 and "int8" in out, err


@pytest.mark.parametrize("args, why", [
    (["--delegate", "tidl", "--precision", "int8"], "needs --calibration"),
    (["--precision", "int8"], "--precision needs --delegate TARGET"),
    (["--delegate", "tidl", "--calibration", "x.npz"], "--calibration is for --precision int8"),
    (["--delegate", "tidl", "--precision", "int8", "--calibration", f"{SPLIT}"], "which names no input"),
    (["--delegate", "tidl", "--precision", "int8", "--calibration", f"{SPLIT}:nope"], "has no array 'nope'"),
    (["--delegate", "tidl", "--precision", "int8", "--calibration", f"{SPLIT}:y_train"], "should be an array"),
])
def test_bad_calibration_arguments_are_usage_errors(capsys, args, why):
    code, out, err = run_inprocess(capsys, "run", DIGITS, *args)
    assert code == 2 and why in err, err
