"""Int8 offload the TIDL way (TI's documents: edgeai-tidl-tools docs/tidl_fsg_quantization.md and
examples/osrt_python/README.md) and three int8 failures found on real models, each on a tiny model:
an fp16 weight the partition hands on, an input sized at run time, and a tensor int8 rounds to 0."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import workbench
from workbench.delegate import SimulatedAccelerator, node_errors
from workbench.delegate import quantize as Q
from workbench.delegate.quantize import QuantizationWarning, calibrate
from workbench.errors import DelegateError, UnsupportedOpError, WorkbenchError
from workbench.schema import (
    ActivationFunctionType as Act,
)
from workbench.schema import (
    AddOptions,
    Conv2DOptions,
    DivOptions,
    ModelBuilder,
    MulOptions,
    Padding,
)
from workbench.schema import (
    BuiltinOperator as B,
)

ROOT = Path(__file__).resolve().parents[2]
DIGITS = ROOT / "sample_models" / "digits_cnn_float.tflite"
SPLIT = ROOT / "sample_models" / "digits_split.npz"


def is_power_of_two(x: float) -> bool:
    m, _ = math.frexp(x)
    return x > 0 and m == 0.5


def conv(b, x, name, shape, w, act=Act.NONE):
    out = b.tensor(name, shape)
    b.op(B.CONV_2D, [x, w, b.constant(f"{name}/bias", np.zeros(shape[-1], np.float32))], [out],
         Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1, fused_activation_function=act))
    return out


# ------------------------------------------------------------------------------------------------
# the mode: TI's defaults
# ------------------------------------------------------------------------------------------------
def test_default_mode_is_tidls_power_of_two_feature_maps_unsigned_after_relu_per_tensor_weights():
    model = workbench.load(DIGITS)
    with np.load(SPLIT) as z:
        x_train = z["x_train"][:20]                         # TI's default calibration_frames: 20
    cal = calibrate(model, [[x[None]] for x in x_train])
    assert cal.mode.name == "tidl" and cal.mode.quantization_scale_type == 0
    unsigned = [n for n, (s, zp) in cal.scales.items() if zp == -128 and "fixed" not in cal.notes.get(n, "")]
    assert unsigned, "the ReLU outputs are stored unsigned"
    for name, (scale, zp) in cal.scales.items():
        assert is_power_of_two(scale), f"{name}: feature map scale {scale} is not a power of two"
        lo, hi = cal.ranges.get(name, (0.0, 0.0))
        if name in unsigned:
            assert lo >= 0 and scale * 255 >= hi > scale * 127, name       # 0 … max on all 256 codes
    for name, sc in cal.weight_scales.items():
        assert len(set(sc.tolist())) == 1, f"{name}: per-tensor weights have one scale"
        assert not all(is_power_of_two(float(s)) for s in sc)             # type 0: non-power-of-2
    cal1 = calibrate(model, [[x[None]] for x in x_train], quantization_scale_type=1)
    assert all(is_power_of_two(float(s)) for sc in cal1.weight_scales.values() for s in sc)
    assert "quantization_scale_type 1" in repr(cal1)


def test_unknown_quantization_scale_types_are_refused_naming_the_ones_simulated():
    model = workbench.load(DIGITS)
    for bad in (2, 4, "0", True):
        with pytest.raises(ValueError, match="quantization_scale_type must be one of 0 .*, 1 "):
            calibrate(model, [np.zeros((1, 28, 28, 1), np.float32)], quantization_scale_type=bad)
    with pytest.raises(ValueError, match="quantization_scale_type"):
        SimulatedAccelerator("tidl", precision="int8", calibration=[np.zeros((1, 28, 28, 1))],
                             quantization_scale_type=4)


def test_the_earlier_per_channel_mode_stays_under_scale_type():
    model = workbench.load(DIGITS)
    with np.load(SPLIT) as z:
        frames = [[x[None]] for x in z["x_train"][:8]]
    cal = calibrate(model, frames, scale_type="symmetric")
    assert cal.mode.name == "per_channel" and cal.mode.per_channel
    assert all(zp in (0, -128) for _, zp in cal.scales.values())
    assert any(len(set(sc.tolist())) > 1 for sc in cal.weight_scales.values())


def test_calibration_frames_takes_the_first_n_frames_like_tidl():
    with np.load(SPLIT) as z:
        x_train = z["x_train"][:30]
    d = SimulatedAccelerator("tidl", precision="int8", calibration=[x[None] for x in x_train],
                             calibration_frames=20)
    it = workbench.Interpreter(model_path=str(DIGITS), experimental_delegates=[d])
    it.allocate_tensors()
    assert d.calibrated and all(c.frames == 20 for c in d.calibrated.values())


# ------------------------------------------------------------------------------------------------
# (a) an fp16 weight, unpacked by DEQUANTIZE on the device and handed on to a CPU op
# ------------------------------------------------------------------------------------------------
def fp16_handed_on():
    rng = np.random.default_rng(3)
    b = ModelBuilder("fp16 weight handed on")
    x = b.input("x", [1, 6, 6, 2])
    w16 = b.constant("w/fp16", rng.normal(0, 0.5, (3, 3, 3, 2)).astype(np.float16))
    w = b.tensor("w_dequantize", [3, 3, 3, 2])
    b.op(B.DEQUANTIZE, [w16], [w])
    y = conv(b, x, "conv", [1, 6, 6, 3], w, Act.RELU)
    f = b.tensor("w_floor", [3, 3, 3, 2])
    b.op(B.FLOOR, [w], [f])                                   # no int8 rule: the CPU takes it, the weight moves out
    b.output(y, f)
    return b.build()


def test_fp16_weight_handed_on_by_the_partition_keeps_a_tensor_of_its_own():
    model = fp16_handed_on()
    rng = np.random.default_rng(0)
    frames = [rng.uniform(-1, 1, (1, 6, 6, 2)).astype(np.float32) for _ in range(4)]
    d = SimulatedAccelerator("tidl", precision="int8", calibration=frames)
    it = workbench.Interpreter(model=model, experimental_delegates=[d])
    it.allocate_tensors()                                     # was: "output 0 is tensor N ('w_dequantize'), a constant"
    assert any(p.lane == "device" and p.node == 0 for p in it.placements())
    cpu = workbench.Interpreter(model=model)
    cpu.allocate_tensors()
    for run in (it, cpu):
        run.set_tensor(run.get_input_details()[0]["index"], frames[0])
        run.invoke()
    outs = [d_["index"] for d_ in cpu.get_output_details()]
    assert np.array_equal(it.get_tensor(outs[1]), cpu.get_tensor(outs[1]))     # the handed-on weight, exact
    assert np.abs(it.get_tensor(outs[0]) - cpu.get_tensor(outs[0])).max() < 0.1


# ------------------------------------------------------------------------------------------------
# (b) an input whose -1 dimension is sized at run time
# ------------------------------------------------------------------------------------------------
def any_length():
    rng = np.random.default_rng(4)
    b = ModelBuilder("any length")
    x = b.input("x", [1, 0, 8, 1], shape_signature=[1, -1, 8, 1])
    y = conv(b, x, "conv", [1, 0, 8, 4], b.constant("w", rng.normal(0, 0.5, (4, 3, 3, 1)).astype(np.float32)),
             Act.RELU)
    b.output(y)
    return b.build()


def test_input_sized_at_run_time_is_calibrated_and_run_at_its_run_time_shape():
    model = any_length()
    rng = np.random.default_rng(1)
    frames = [rng.uniform(-1, 1, (1, 16, 8, 1)).astype(np.float32) for _ in range(4)]
    cal = calibrate(model, frames)                           # was: "input height and width (64, 0)"-like failures
    assert cal.ranges["conv"][1] > 0
    d = SimulatedAccelerator("xnnpack", precision="int8", calibration=frames)
    it = workbench.Interpreter(model=model, experimental_delegates=[d])
    i = it.get_input_details()[0]["index"]
    it.resize_tensor_input(i, [1, 16, 8, 1])
    it.allocate_tensors()
    it.set_tensor(i, frames[0])
    it.invoke()
    cpu = workbench.Interpreter(model=model)
    cpu.resize_tensor_input(i, [1, 16, 8, 1])
    cpu.allocate_tensors()
    cpu.set_tensor(i, frames[0])
    cpu.invoke()
    o = it.get_output_details()[0]["index"]
    assert it.get_tensor(o).shape == (1, 16, 8, 4)
    assert np.abs(it.get_tensor(o) - cpu.get_tensor(o)).max() < 0.05


# ------------------------------------------------------------------------------------------------
# (c) int8 rounds small values of a never-zero tensor to 0; a DIV on the CPU then divides by zero
# ------------------------------------------------------------------------------------------------
def exp_plus_one_divides():
    b = ModelBuilder("1 / (exp(x) + 1)")
    x = b.input("x", [1, 64])
    e, a, q = b.tensor("exp", [1, 64]), b.tensor("exp_plus_1", [1, 64]), b.tensor("ratio", [1, 64])
    b.op(B.EXP, [x], [e])                                     # no int8 rule: CPU
    b.op(B.ADD, [e, b.constant("one", np.ones((1, 64), np.float32))], [a], AddOptions())     # device, int8
    b.op(B.DIV, [b.constant("num", np.ones((1, 64), np.float32)), a], [q], DivOptions())    # CPU
    b.output(q)
    return b.build()


def test_a_never_zero_tensor_int8_rounds_to_zero_is_flagged_with_a_warning_and_in_node_errors():
    model = exp_plus_one_divides()
    frames = [np.linspace(-3.0, 7.5, 64, dtype=np.float32)[None]]        # exp(x) + 1: 1.05 … 1809
    d = SimulatedAccelerator("xnnpack", precision="int8", calibration=frames)
    with pytest.warns(QuantizationWarning, match=r"ADD \(node 1\): output 'exp_plus_1' is never 0 in float .*"
                                                 r"int8 scale 16 makes every value nearer 0 than 8 exactly 0"):
        it = workbench.Interpreter(model=model, experimental_delegates=[d])        # the delegate calibrates
    it.allocate_tensors()
    (cal,) = d.calibrated.values()
    assert "exp_plus_1" in cal.warnings
    errors = {e.node: e for e in node_errors(it, frames)}
    assert errors[1].op == "ADD" and errors[1].zeroed > 0 and "never 0 in float" in errors[1].note
    assert "made 0" in repr(errors[1])


def test_no_warning_where_int8_keeps_every_value_away_from_zero():
    model = exp_plus_one_divides()
    frames = [np.linspace(-1.0, 1.0, 64, dtype=np.float32)[None]]        # 1.37 … 3.7: scale 2**-5
    with warnings.catch_warnings():
        warnings.simplefilter("error", QuantizationWarning)
        d = SimulatedAccelerator("xnnpack", precision="int8", calibration=frames)
        workbench.Interpreter(model=model, experimental_delegates=[d]).allocate_tensors()
    (cal,) = d.calibrated.values()
    assert cal.warnings == {}


# ------------------------------------------------------------------------------------------------
# a tensor the calibration gives no range: refused, not garbage
# ------------------------------------------------------------------------------------------------
def times_zero():
    b = ModelBuilder("times zero")
    x = b.input("x", [1, 4, 4, 2])
    y = conv(b, x, "conv", [1, 4, 4, 2], b.constant("w", np.ones((2, 1, 1, 2), np.float32)))
    z = b.tensor("zeroed", [1, 4, 4, 2])
    b.op(B.MUL, [y, b.constant("zero", np.zeros((1, 1, 1, 2), np.float32))], [z], MulOptions())
    b.output(z)
    return b.build()


def test_a_tensor_without_a_calibrated_range_is_refused_naming_the_node():
    model = times_zero()
    frames = [np.random.default_rng(0).uniform(-1, 1, (1, 4, 4, 2)).astype(np.float32)]
    with pytest.raises(UnsupportedOpError, match=r"MUL \(node 1\): its output 'zeroed' has no range to quantize: "
                                                 r"it was 0 on every calibration frame"):
        calibrate(model, frames)
    d = SimulatedAccelerator("xnnpack", precision="int8", calibration=frames)
    with pytest.raises(WorkbenchError, match="has no range to quantize"):
        workbench.Interpreter(model=model, experimental_delegates=[d]).allocate_tensors()


def test_unreached_and_all_zero_inputs_are_refused():
    model = times_zero()
    with pytest.raises(UnsupportedOpError, match="graph input 'x' has no range to quantize"):
        calibrate(model, [np.zeros((1, 4, 4, 2), np.float32)])


def test_refusal_is_typed():
    assert issubclass(UnsupportedOpError, WorkbenchError) and issubclass(DelegateError, WorkbenchError)
    assert Q.QuantizationWarning.__mro__[1] is UserWarning


# ------------------------------------------------------------------------------------------------
# the command line: TI's option names, and a calibration file that is not an .npz
# ------------------------------------------------------------------------------------------------
def test_cli_int8_takes_tis_options_and_says_what_a_calibration_file_must_hold(capsys, tmp_path):
    from helpers.cli_helpers import run_inprocess, strict_json

    code, out, err = run_inprocess(capsys, "run", DIGITS, "--delegate", "tidl",
                                   "--precision", "int8", "--calibration", f"{SPLIT}:x_train",
                                   "--calibration-frames", "8", "--calibration-iterations", "2",
                                   "--quantization-scale-type", "1", "--json")
    assert code == 0, err
    assert strict_json(out)["delegation"]["precision"] == "int8"
    bad = tmp_path / "frames.txt"
    bad.write_text("0.1 0.2 0.3\n")
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--delegate", "tidl", "--precision", "int8",
                                   "--calibration", bad)
    assert code == 2 and "must be one written by np.savez holding the calibration frames" in err, err
    assert "allow_pickle" not in err
    code, out, err = run_inprocess(capsys, "run", DIGITS, "--delegate", "tidl", "--precision", "int8",
                                   "--calibration", f"{SPLIT}:x_train", "--quantization-scale-type", "4")
    assert code == 2 and "--quantization-scale-type" in err


def test_cli_int8_reports_the_flagged_node_in_its_summary(capsys, tmp_path):
    from helpers.cli_helpers import run_inprocess, strict_json

    model, cal = tmp_path / "exp.tflite", tmp_path / "cal.npz"
    model.write_bytes(workbench.dump(exp_plus_one_divides()))
    np.savez(cal, arr_0=np.linspace(-3.0, 7.5, 64, dtype=np.float32)[None])
    code, out, err = run_inprocess(capsys, "run", model, "--delegate", "xnnpack", "--precision", "int8",
                                   "--calibration", cal, "--json")
    assert code == 0, err
    flagged = strict_json(out)["delegation"]["warnings"]
    assert any(w.startswith("ADD (node 1): output 'exp_plus_1' is never 0 in float") for w in flagged), flagged
    code, out, err = run_inprocess(capsys, "run", model, "--delegate", "xnnpack", "--precision", "int8",
                                   "--calibration", cal)
    assert code == 0 and "warning: ADD (node 1): output 'exp_plus_1'" in out


def test_a_custom_op_without_an_int8_rule_stays_on_the_cpu_in_int8():
    # MediaPipe's Convolution2DTransposeBias: XNNPACK takes it in float (selfie_segmentation), but there is
    # no int8 rule for it, so int8 offload used to fail in calibration instead of leaving it on the CPU
    rng = np.random.default_rng(5)
    b = ModelBuilder("custom op after a conv")
    x = b.input("x", [1, 4, 4, 2])
    y = conv(b, x, "conv", [1, 4, 4, 2], b.constant("w", np.ones((2, 1, 1, 2), np.float32)), Act.RELU)
    z = b.tensor("up", [1, 8, 8, 2])
    b.op(B.CUSTOM, [y, b.constant("tw", rng.normal(0, 0.5, (2, 2, 2, 2)).astype(np.float32)),
                    b.constant("tb", np.zeros(2, np.float32))], [z], custom_code="Convolution2DTransposeBias",
         custom_options=bytes([1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0]))
    b.output(z)
    model = b.build()
    fplan = SimulatedAccelerator("xnnpack").prepare(model)
    d = SimulatedAccelerator("xnnpack", precision="int8", calibration=[np.ones((1, 4, 4, 2), np.float32)])
    plan = d.prepare(model)
    assert 1 not in {n for p in plan.partitions for n in p.nodes}, "the custom op is not offloaded in int8"
    assert 1 in {n for p in fplan.partitions for n in p.nodes}, "float: XNNPACK takes it"
