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


# ------------------------------------------------------------------------------------------------
# where the int8 copy stops computing the model, and a range it cannot hold (the int8 study's causes)
# ------------------------------------------------------------------------------------------------
def two_fc(w1, b1):
    """x [1, 8] → FULLY_CONNECTED (w1, b1) → FULLY_CONNECTED (0.5 · identity) → y."""
    from workbench.schema import BuiltinOperator as B
    from workbench.schema import FullyConnectedOptions, ModelBuilder

    b = ModelBuilder("two fully-connected layers")
    x = b.input("x", [1, 8])
    h = b.tensor("hidden", [1, 8])
    b.op(B.FULLY_CONNECTED, [x, b.constant("w1", w1), b.constant("b1", b1)], [h], FullyConnectedOptions())
    y = b.tensor("y", [1, 8])
    b.op(B.FULLY_CONNECTED, [h, b.constant("w2", 0.5 * np.eye(8, dtype=np.float32)),
                             b.constant("b2", np.zeros(8, np.float32))], [y], FullyConnectedOptions())
    b.output(y)
    return b.build()


def one_big_row():
    """Row 0 of w1 is ±100 on two inputs that are nearly equal (its output stays small); rows 1-7 are 0.3:
    one scale for the whole tensor (100 / 127) rounds rows 1-7 to 0, per-channel scales keep them."""
    w1 = np.full((8, 8), 0.3, np.float32)
    w1[0] = 0.0
    w1[0, 0], w1[0, 1] = 100.0, -100.0
    rng = np.random.default_rng(3)
    frames = []
    for _ in range(8):
        x = rng.uniform(-1, 1, (1, 8)).astype(np.float32)
        x[0, 1] = x[0, 0] + np.float32(0.002)
        frames.append(x)
    return two_fc(w1, np.zeros(8, np.float32)), frames


def test_the_calibrated_run_points_at_the_first_node_whose_error_explodes():
    from workbench.delegate.error import first_explosion
    from workbench.delegate.quantize import EXPLODED_DB, QuantizationWarning

    model, frames = one_big_row()
    d = SimulatedAccelerator("xnnpack", precision="int8", calibration=frames)
    with pytest.warns(QuantizationWarning, match=r"FULLY_CONNECTED \(node 0\): the int8 error explodes here: "
                                                 r"output 'hidden' has an SNR of .* the first node below 10 dB .*"
                                                 r"per-tensor weights \(one scale, 0.7874, for 8 output channels\) "
                                                 r"leave the median channel ±0 of the 127 levels and 7 channel\(s\) "
                                                 r"all 0"):
        it = workbench.Interpreter(model=model, experimental_delegates=[d])
    it.allocate_tensors()
    errs = node_errors(it, frames)
    first = first_explosion(errs)
    assert first.node == 0 and first.name == "hidden" and first.snr_db < EXPLODED_DB and "explodes" in first.note
    assert errs[1].snr_db < EXPLODED_DB and "explodes" not in errs[1].note       # only the first is named
    # per-channel weights keep rows 1-7: nothing explodes, no warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", QuantizationWarning)
        d = SimulatedAccelerator("xnnpack", precision="int8", calibration=frames, scale_type="symmetric")
        it = workbench.Interpreter(model=model, experimental_delegates=[d])
    it.allocate_tensors()
    assert first_explosion(node_errors(it, frames)) is None


def test_a_bias_int32_cannot_hold_is_refused_naming_the_node():
    from workbench.delegate.quantize import calibrate
    from workbench.errors import UnsupportedOpError, WorkbenchError

    model = two_fc(np.full((8, 8), 1e-8, np.float32), np.full(8, 10.0, np.float32))
    frames = [np.random.default_rng(0).uniform(-1, 1, (1, 8)).astype(np.float32) for _ in range(2)]
    with pytest.raises(UnsupportedOpError, match=r"FULLY_CONNECTED \(node 0\): its bias cannot be calibrated: "
                                                 r"channel 0's bias 10 is .* steps of input_scale x weight_scale "
                                                 r".* beyond int32's 2147483647"):
        calibrate(model, frames)
    d = SimulatedAccelerator("xnnpack", precision="int8", calibration=frames)
    with pytest.raises(WorkbenchError, match="its bias cannot be calibrated"):
        workbench.Interpreter(model=model, experimental_delegates=[d]).allocate_tensors()


def test_first_explosion_is_none_when_every_node_keeps_its_snr():
    from workbench.delegate.error import NodeError, first_explosion

    good = [NodeError(0, i, "CONV_2D", i, f"t{i}", 0.01, 30.0, 4) for i in range(3)]
    assert first_explosion(good) is None
    bad = good + [NodeError(0, 5, "ADD", 9, "t9", 3.0, 4.0, 4), NodeError(0, 4, "MUL", 8, "t8", 2.0, 6.0, 4)]
    assert first_explosion(bad).node == 4


def sparse_fp16_handed_on():
    """x → FC (dense float weights) → h; a sparse fp16 weight → DENSIFY → DEQUANTIZE (v3, fp16) → FC(h) → y.
    The old-delegate target (every op at version 1) takes DENSIFY and the FCs but not the fp16 DEQUANTIZE,
    so the first partition hands DENSIFY's fp16 result on to the CPU, as in MediaPipe's sparse models."""
    import dataclasses

    from helpers.version_gaps_cases import sparse_levels
    from workbench.schema import BuiltinOperator as B
    from workbench.schema import FullyConnectedOptions, ModelBuilder

    rng = np.random.default_rng(5)
    dense = np.where(rng.random((8, 8)) < 0.5, rng.normal(0, 0.5, (8, 8)), 0).astype(np.float16)
    stored, sparsity = sparse_levels(dense, 1)
    b = ModelBuilder("sparse fp16 weight handed on")
    x = b.input("x", [1, 8])
    h = b.tensor("h", [1, 8])
    b.op(B.FULLY_CONNECTED, [x, b.constant("w1", rng.normal(0, 0.5, (8, 8)).astype(np.float32)),
                             b.constant("b1", np.zeros(8, np.float32))], [h], FullyConnectedOptions())
    w = b.constant("w2_sparse", stored)
    b.tensors[w] = dataclasses.replace(b.tensors[w], shape=(8, 8), sparsity=sparsity)
    w16 = b.tensor("w2_dense", [8, 8], np.float16)
    b.op(B.DENSIFY, [w], [w16])
    w32 = b.tensor("w2_dequantize", [8, 8])
    b.op(B.DEQUANTIZE, [w16], [w32], version=3)
    y = b.tensor("y", [1, 8])
    b.op(B.FULLY_CONNECTED, [h, w32, b.constant("b2", np.zeros(8, np.float32))], [y], FullyConnectedOptions())
    b.output(y)
    return b.build()


def test_a_densified_fp16_weight_the_partition_hands_on_is_written_by_its_op_not_stored():
    model = sparse_fp16_handed_on()
    frames = [np.random.default_rng(k).uniform(-1, 1, (1, 8)).astype(np.float32) for k in range(4)]
    d = SimulatedAccelerator("old-delegate", precision="int8", calibration=frames)
    it = workbench.Interpreter(model=model, experimental_delegates=[d])    # was: "output 0 is tensor N
    it.allocate_tensors()                                                   # ('w2_dense'), a constant"
    places = {p.node: p for p in it.placements()}
    assert places[2].lane == "cpu" and places[1].lane == "device" and places[3].lane == "device"
    cpu = workbench.Interpreter(model=model)
    cpu.allocate_tensors()
    for run in (it, cpu):
        run.set_tensor(run.get_input_details()[0]["index"], frames[0])
        run.invoke()
    out = cpu.get_output_details()[0]["index"]
    ref = cpu.get_tensor(out)
    assert np.abs(it.get_tensor(out) - ref).max() < 0.05 * np.abs(ref).max()
