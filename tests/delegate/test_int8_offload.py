"""Precision int8, the TIDL way, through a delegate: calibration on the training split, the accuracy
change measured, the calibrated partitions bit-identical in LiteRT, the error of every device node."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import workbench
from helpers.litert_runner import run as litert_run
from workbench.delegate import SimulatedAccelerator, node_errors
from workbench.schema import dump

ROOT = Path(__file__).resolve().parents[2]
DIGITS = ROOT / "sample_models" / "digits_cnn_float.tflite"
SPLIT = ROOT / "sample_models" / "digits_split.npz"


@lru_cache(maxsize=None)
def _split():
    s = np.load(SPLIT)
    return s["x_train"], s["y_train"], s["x_test"], s["y_test"]


def _int8(frames=64, **kw):
    x_train = _split()[0]
    d = SimulatedAccelerator("tidl", precision="int8",
                             calibration=[x[None] for x in x_train[:frames]], **kw)
    it = workbench.Interpreter(model_path=str(DIGITS), experimental_delegates=[d])
    it.allocate_tensors()
    return d, it


def _classify(it, xs):
    i, o = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]
    out = []
    for x in xs:
        it.set_tensor(i, x[None])
        it.invoke()
        out.append(int(np.argmax(it.get_tensor(o))))
    return np.array(out)


def test_int8_offload_keeps_the_digits_accuracy_within_two_points():
    _, _, x_test, y_test = _split()
    cpu = workbench.Interpreter(model_path=str(DIGITS))
    cpu.allocate_tensors()
    d, it = _int8()
    float_pred, int8_pred = _classify(cpu, x_test), _classify(it, x_test)
    acc_float, acc_int8 = (float_pred == y_test).mean(), (int8_pred == y_test).mean()
    assert abs(acc_int8 - acc_float) <= 0.02, (acc_float, acc_int8)
    assert (float_pred == int8_pred).mean() >= 0.97
    assert {k: c.frames for k, c in d.calibrated.items()} == {(0, 0): 64}     # the whole CNN: one partition


def test_calibrated_partitions_run_in_litert_with_the_devices_outputs(tmp_path):
    d, it = _int8()
    x = _split()[2][:1]
    it.set_tensor(it.get_input_details()[0]["index"], x)
    events = list(it.steps())
    for (sg, k), cal in d.calibrated.items():
        delegate_node = it.delegations[0][1].nodes[sg][k]
        copies_in = [e for e in events if e.kind == "copy in" and e.node == delegate_node]
        copies_out = [e for e in events if e.kind == "copy out" and e.node == delegate_node]
        path = tmp_path / f"p{k}.tflite"
        path.write_bytes(dump(cal.model))
        np.savez(tmp_path / f"in{k}.npz", **{f"input_{j}": e.inputs[0] for j, e in enumerate(copies_in)})
        res = litert_run(path, tmp_path / f"in{k}.npz", tmp_path / f"out{k}.npz")
        assert res.returncode == 0 if hasattr(res, "returncode") else res, res
        got = np.load(tmp_path / f"out{k}.npz")
        for j, e in enumerate(copies_out):
            assert np.array_equal(got[f"output_{j}"], e.outputs[0]), (k, j)


def test_every_device_node_has_its_error_against_the_float_run():
    d, it = _int8()
    frames = [x[None] for x in _split()[2][:8]]
    errs = node_errors(it, frames)
    assert [e.node for e in errs] == [0, 1, 2, 3, 4, 5, 6]
    assert all(0 < e.max_abs < 5 and 20 < e.snr_db < 80 and e.frames == 8 for e in errs)
    assert it.delegations[0][1].errors[3] == errs[3]
    f = SimulatedAccelerator("tidl")
    fit = workbench.Interpreter(model_path=str(DIGITS), experimental_delegates=[f])
    fit.allocate_tensors()
    assert all(e.max_abs == 0 and e.snr_db == float("inf") for e in node_errors(fit, frames[:2]))


def test_power_of_two_scales_and_iterations_reach_the_calibration():
    d, it = _int8(frames=16, scale_type="power_of_two", calibration_iterations=2)
    for cal in d.calibrated.values():
        assert cal.iterations == 2 and cal.scale_type == "power_of_two"
        for name, (scale, zp) in cal.scales.items():
            if "fixed" not in cal.notes.get(name, ""):
                assert np.log2(scale) == round(np.log2(scale)) and zp == 0, name


def test_int8_needs_calibration_frames_and_refuses_ops_without_a_rule():
    with pytest.raises(ValueError, match="needs calibration frames"):
        SimulatedAccelerator("tidl", precision="int8")
    with pytest.raises(ValueError, match="precision must be one of float, int8"):
        SimulatedAccelerator("tidl", precision="int4")
    with pytest.raises(ValueError, match="scale_type"):
        SimulatedAccelerator("tidl", precision="int8", calibration=[np.zeros((1, 8, 8, 1), np.float32)],
                             scale_type="log")
    from workbench.schema import BuiltinOperator as B
    from workbench.schema import ModelBuilder

    b = ModelBuilder()
    x = b.input("x", [1, 4])
    y = b.tensor("y", [1, 4])
    b.op(B.NEG, [x], [y])
    z = b.tensor("z", [1, 4])
    b.op(B.RELU, [y], [z])
    b.output(z)
    d = SimulatedAccelerator("xnnpack", precision="int8", calibration=[np.array([[4, -4, 4, -4]], np.float32)])
    it = workbench.Interpreter(model=b.build(), experimental_delegates=[d])
    places = it.placements()
    assert places[0].code == "unsupported-op" and "no int8 rule" in places[0].reason
    assert places[1].lane == "device"
    it.allocate_tensors()
    it.set_tensor(0, np.array([[-1, 2, -3, 4]], np.float32))
    it.invoke()
    assert np.allclose(it.get_tensor(it.get_output_details()[0]["index"]), [[1, 0, 3, 0]], atol=0.05)
