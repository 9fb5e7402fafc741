"""Precision int8 the TIDL way (workbench.delegate.quantize): a float model calibrated into an int8 one.

Checked on three models: a small graph built here with one of nearly every op the quantizer has a rule
for (fp16 weights unpacked by DEQUANTIZE, a bias-less depthwise, pools, ADD/SUB/MUL with constants,
LEAKY_RELU, PRELU, CONCATENATION, PAD, TRANSPOSE_CONV, LOGISTIC and TANH joined by a CONCATENATION,
MEAN, RESHAPE, FULLY_CONNECTED, SOFTMAX, RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE, ARG_MAX), the trained
digits CNN (calibrated on its training split only, measured on the held-out split) and MobileNet v1
1.0/224 from ``../shared/models``.  The exported bytes run in ai-edge-litert (in a child process) with
every int8 tensor bit-identical to workbench.Interpreter on the same model: the tests make every
activation a graph output, so not only the final outputs are compared.
"""

from __future__ import annotations

import dataclasses
import doctest
import math
from pathlib import Path

import numpy as np
import pytest

import workbench
from helpers import litert_session
from workbench.delegate import quantize as Q
from workbench.delegate.quantize import Calibrated, calibrate, sqnr
from workbench.errors import UnsupportedOpError
from workbench.interpreter import Interpreter
from workbench.schema import (
    ActivationFunctionType as Act,
)
from workbench.schema import (
    AddOptions,
    ArgMaxOptions,
    ConcatenationOptions,
    Conv2DOptions,
    DepthToSpaceOptions,
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    LeakyReluOptions,
    ModelBuilder,
    MulOptions,
    Padding,
    Pool2DOptions,
    ReducerOptions,
    ReshapeOptions,
    ResizeNearestNeighborOptions,
    SoftmaxOptions,
    SubOptions,
    TensorType,
    TransposeConvOptions,
    builtin_code,
)
from workbench.schema import (
    BuiltinOperator as B,
)

ROOT = Path(__file__).resolve().parents[2]
DIGITS = ROOT / "sample_models" / "digits_cnn_float.tflite"
SPLIT = ROOT / "sample_models" / "digits_split.npz"
MOBILENET = ROOT.parent / "shared" / "models" / "mobilenet_v1_a10_224_float32.tflite"
FIXED_ZP = {-128, 0}


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def built_model():
    """A float graph with one of nearly every op the quantizer has a rule for."""
    rng = np.random.default_rng(7)
    r = lambda *shape: rng.normal(0, 0.5, shape).astype(np.float32)  # noqa: E731
    b = ModelBuilder("quantize test graph")
    x = b.input("x", [1, 8, 8, 3])
    w16 = b.constant("w1/fp16", r(4, 3, 3, 3).astype(np.float16))
    w1 = b.tensor("w1", [4, 3, 3, 3])
    b.op(B.DEQUANTIZE, [w16], [w1])                                         # fp16 weights, unpacked
    c1 = b.tensor("conv", [1, 8, 8, 4])
    b.op(B.CONV_2D, [x, w1, b.constant("b1", r(4))], [c1],
         Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1, fused_activation_function=Act.RELU))
    d1 = b.tensor("depthwise", [1, 8, 8, 8])
    b.op(B.DEPTHWISE_CONV_2D, [c1, b.constant("dw", r(1, 3, 3, 8)), -1], [d1],   # no bias
         DepthwiseConv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1, depth_multiplier=2,
                                fused_activation_function=Act.RELU6))
    pool = dict(padding=Padding.VALID, stride_w=2, stride_h=2, filter_width=2, filter_height=2)
    p1, p2 = b.tensor("maxpool", [1, 4, 4, 8]), b.tensor("avgpool", [1, 4, 4, 8])
    b.op(B.MAX_POOL_2D, [d1], [p1], Pool2DOptions(**pool))
    b.op(B.AVERAGE_POOL_2D, [d1], [p2], Pool2DOptions(**pool))
    a1, s1, m1 = (b.tensor(n, [1, 4, 4, 8]) for n in ("add", "sub", "mul"))
    b.op(B.ADD, [p1, p2], [a1], AddOptions())
    b.op(B.SUB, [a1, b.constant("offset", r(8))], [s1], SubOptions())        # a constant operand
    b.op(B.MUL, [s1, p2], [m1], MulOptions())
    l1, pr = b.tensor("leaky", [1, 4, 4, 8]), b.tensor("prelu", [1, 4, 4, 8])
    b.op(B.LEAKY_RELU, [m1], [l1], LeakyReluOptions(alpha=0.1))
    b.op(B.PRELU, [l1, b.constant("alpha", np.abs(r(1, 1, 8)))], [pr])
    cat = b.tensor("concat", [1, 4, 4, 16])
    b.op(B.CONCATENATION, [pr, p1], [cat], ConcatenationOptions(axis=3))
    pad = b.tensor("pad", [1, 6, 6, 16])
    b.op(B.PAD, [cat, b.constant("paddings", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))], [pad])
    tc = b.tensor("transpose_conv", [1, 12, 12, 4])
    b.op(B.TRANSPOSE_CONV, [b.constant("tc_shape", np.array([1, 12, 12, 4], np.int32)),
                            b.constant("tc_w", r(4, 3, 3, 16)), pad, b.constant("tc_b", r(4))], [tc],
         TransposeConvOptions(padding=Padding.SAME, stride_w=2, stride_h=2), version=3)
    relu = b.tensor("relu", [1, 12, 12, 4])
    b.op(B.RELU, [tc], [relu])
    big = b.tensor("resize", [1, 24, 24, 4])
    b.op(B.RESIZE_NEAREST_NEIGHBOR, [relu, b.constant("size", np.array([24, 24], np.int32))], [big],
         ResizeNearestNeighborOptions())
    d2s = b.tensor("depth_to_space", [1, 48, 48, 1])
    b.op(B.DEPTH_TO_SPACE, [big], [d2s], DepthToSpaceOptions(block_size=2))
    lg, th, lt = b.tensor("logistic", [1, 6, 6, 16]), b.tensor("tanh", [1, 6, 6, 16]), b.tensor("lg_th", [1, 6, 6, 32])
    b.op(B.LOGISTIC, [pad], [lg])
    b.op(B.TANH, [pad], [th])
    b.op(B.CONCATENATION, [lg, th], [lt], ConcatenationOptions(axis=3))     # two fixed scales: requantized
    mean = b.tensor("mean", [1, 16])
    b.op(B.MEAN, [cat, b.constant("axes", np.array([1, 2], np.int32))], [mean], ReducerOptions(keep_dims=False))
    flat = b.tensor("reshape", [1, 16])
    b.op(B.RESHAPE, [mean, b.constant("shape", np.array([1, 16], np.int32))], [flat], ReshapeOptions(new_shape=[1, 16]))
    fc = b.tensor("logits", [1, 10])
    b.op(B.FULLY_CONNECTED, [flat, b.constant("fc_w", r(10, 16)), b.constant("fc_b", r(10))], [fc],
         FullyConnectedOptions())
    probs = b.tensor("probs", [1, 10])
    b.op(B.SOFTMAX, [fc], [probs], SoftmaxOptions(beta=1.0))
    arg = b.tensor("argmax", [1], np.int32)
    b.op(B.ARG_MAX, [fc, b.constant("arg_axis", np.array([1], np.int32))], [arg],
         ArgMaxOptions(output_type=TensorType.INT32))
    b.output(probs, d2s, lt, arg)
    return b.build()


def random_frames(model, n: int, seed: int, low=-1.0, high=1.0) -> list:
    rng = np.random.default_rng(seed)
    sg = model.subgraphs[0]
    return [[rng.uniform(low, high, sg.tensors[t].shape).astype(np.float32) for t in sg.inputs] for _ in range(n)]


def with_every_tensor_as_output(model):
    """The same model, every tensor an operator writes also a graph output (LiteRT returns any tensor
    listed there), so two runtimes can be compared tensor by tensor."""
    sg = model.subgraphs[0]
    written = [t for op in sg.operators for t in op.outputs if t not in sg.outputs]
    return dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, outputs=tuple(sg.outputs) + tuple(written)),),
                               signature_defs=None)


def assert_runs_the_same_in_litert(model, feeds: list, what: str) -> None:
    """``model`` (every tensor as an output) on each feed: LiteRT and workbench.Interpreter agree bit for bit."""
    data = workbench.dump(with_every_tensor_as_output(model))
    calls = [("invoke", feed) for feed in feeds]
    theirs = litert_session.run_calls(data, calls)
    ours = litert_session.run_ours(Interpreter(model_content=data), calls)
    names = [d["name"] for d in Interpreter(model_content=data).get_output_details()]
    for k, (a, b) in enumerate(zip(theirs, ours)):
        assert len(a) == len(b)
        for name, x, y in zip(names, a, b):
            assert x.dtype == y.dtype and x.shape == y.shape, \
                f"{what} feed {k} {name}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
            assert np.array_equal(x.view(np.uint8) if x.dtype.kind == "f" else x,
                                  y.view(np.uint8) if y.dtype.kind == "f" else y), \
                f"{what} feed {k}, tensor {name}: LiteRT and workbench differ ({np.sum(x != y)} elements)"


def op_names(model) -> list:
    return [builtin_code(model.operator_codes[op.opcode_index]).name for op in model.subgraphs[0].operators]


def versions(model) -> dict:
    return {builtin_code(c).name: c.version for c in model.operator_codes}


def is_power_of_two(x: float) -> bool:
    m, _ = math.frexp(x)
    return x > 0 and m == 0.5


def check_structure(cal: Calibrated, float_model) -> None:
    """Every op int8; float only at the boundary (QUANTIZE after each input, DEQUANTIZE before each
    output); activations symmetric except the fixed ones; weights per channel; biases int32 with
    scale input_scale · weight_scale[c]."""
    m, sg = cal.model, cal.model.subgraphs[0]
    mode = cal.mode or Q.mode_of(scale_type=cal.scale_type)
    fsg = float_model.subgraphs[0]
    assert [sg.tensors[t].name for t in sg.inputs] == [fsg.tensors[t].name for t in fsg.inputs]
    assert [sg.tensors[t].name for t in sg.outputs] == [fsg.tensors[t].name for t in fsg.outputs]
    names = op_names(m)
    used = {t for op in sg.operators for t in (*op.inputs, *op.outputs) if t >= 0} | set(sg.inputs) | set(sg.outputs)
    assert used == set(range(len(sg.tensors))), "tensors no operator uses"
    assert len(m.buffers) == 1 + sum(1 for t in sg.tensors if t.buffer) + len(m.metadata), "buffers nobody uses"
    for op, name in zip(sg.operators, names):
        ts = [sg.tensors[t] for t in (*op.inputs, *op.outputs) if t >= 0]
        floats = [t for t in ts if t.type == TensorType.FLOAT32]
        if name == "QUANTIZE":
            assert op.inputs[0] in sg.inputs or sg.tensors[op.inputs[0]].type == TensorType.INT8
        elif name == "DEQUANTIZE":
            assert op.outputs[0] in sg.outputs
        else:
            assert not floats, f"{name} still has float tensors: {[t.name for t in floats]}"
        if name in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"):
            a, w, axis, b = Q.WEIGHTED[getattr(B, name)]
            wt, bt, at = sg.tensors[op.inputs[w]], sg.tensors[op.inputs[b]], sg.tensors[op.inputs[a]]
            assert wt.type == TensorType.INT8 and wt.quantization.quantized_dimension == axis
            assert len(wt.quantization.scale) == wt.shape[axis]          # one scale per output channel
            if not mode.per_channel:                                     # TIDL: one scale, repeated
                assert len(set(wt.quantization.scale)) == 1
            assert set(wt.quantization.zero_point) == {0}
            assert bt.type == TensorType.INT32 and len(bt.quantization.scale) == wt.shape[axis]
            expect = np.float64(at.quantization.scale[0]) * np.asarray(wt.quantization.scale, np.float64)
            assert np.allclose(bt.quantization.scale, expect, rtol=1e-6)
    fixed = {sg.tensors[op.outputs[0]].name.removesuffix("/int8") for op, n in zip(sg.operators, names)
             if n in ("SOFTMAX", "LOGISTIC", "TANH")}
    for name, (scale, zp) in cal.scales.items():
        assert scale > 0
        if name in fixed:
            assert zp in FIXED_ZP
        elif mode.unsigned and zp == -128:                               # TIDL: unsigned after a ReLU
            lo, hi = cal.ranges[name]
            assert lo >= 0 and is_power_of_two(scale) and scale * 255 >= hi * (1 - 1e-6), name
            continue
        else:
            assert zp == 0, f"{name}: zero point {zp}"
        if cal.scale_type == "power_of_two" or mode.activations == "power_of_two":
            assert is_power_of_two(scale), f"{name}: scale {scale} is not a power of two"
        else:
            lo, hi = cal.ranges[name]
            if name not in fixed and not cal.notes.get(name):
                assert scale == pytest.approx(max(abs(lo), abs(hi)) / 127, rel=1e-6) or max(abs(lo), abs(hi)) == 0
    for name, sc in cal.weight_scales.items():
        if mode.weights == "power_of_two":
            assert all(is_power_of_two(float(s)) for s in sc), name


# ------------------------------------------------------------------------------------------------
# the helpers of the module
# ------------------------------------------------------------------------------------------------
def test_docstring_examples_hold():
    result = doctest.testmod(Q, extraglobs={"np": np})
    assert result.attempted > 0 and result.failed == 0


def test_sqnr_is_inf_when_equal_and_10log10_of_the_power_ratio_otherwise():
    assert sqnr([1.0, 2.0], [1.0, 2.0]) == {"max_abs": 0.0, "snr_db": math.inf}
    r = sqnr(np.array([3.0, 4.0]), np.array([3.0, 3.0]))
    assert r["max_abs"] == 1.0 and r["snr_db"] == pytest.approx(10 * math.log10(25.0))
    assert sqnr([0.0], [1.0])["snr_db"] == -math.inf
    with pytest.raises(ValueError, match="shapes differ"):
        sqnr([1.0], [1.0, 2.0])


def test_power_of_two_scale_is_the_smallest_power_of_two_not_below_max_over_127():
    for m in (0.3, 1.0, 6.0, 127.0, 1000.0):
        s = Q.symmetric_scale(m, "power_of_two")
        assert is_power_of_two(s) and s >= m / 127 * (1 - 1e-7) and s / 2 < m / 127


def test_weights_are_quantized_per_output_channel_symmetrically():
    w = np.array([[[[0.5]], [[-2.0]]], [[[0.1]], [[0.0]]]], np.float32).reshape(2, 2, 1, 1)
    q, s = Q.quantize_per_channel(w, axis=0)
    assert s.tolist() == pytest.approx([2.0 / 127, 0.1 / 127])
    assert q.reshape(2, 2).tolist() == [[32, -127], [127, 0]]


# ------------------------------------------------------------------------------------------------
# the built graph
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def built():
    model = built_model()
    frames = random_frames(model, 16, seed=1)
    return model, frames, calibrate(model, frames, iterations=2, scale_type="symmetric")    # the per-channel mode


def test_built_graph_every_op_becomes_int8_with_symmetric_scales(built):
    model, _, cal = built
    check_structure(cal, model)
    names = op_names(cal.model)
    assert "DEQUANTIZE" not in names[:-3]                 # the fp16 unpacking was folded into the weights
    assert names.count("QUANTIZE") == 1 + 2               # the input, and the LOGISTIC / TANH requantized
    v = versions(cal.model)
    assert v["CONV_2D"] == 3 and v["DEPTHWISE_CONV_2D"] == 3 and v["FULLY_CONNECTED"] == 4
    assert v["SOFTMAX"] == 2 and v["MAX_POOL_2D"] == 2 and v["ADD"] == 2 and v["MEAN"] == 2


def test_built_graph_fixed_and_tied_parameters(built):
    _, _, cal = built
    assert cal.scales["probs"] == (1 / 256, -128)
    assert cal.scales["logistic"] == (1 / 256, -128)
    assert cal.scales["tanh"] == (1 / 128, 0)
    # values only moved: one (scale, zero point) on both sides
    assert cal.scales["maxpool"] == cal.scales["depthwise"] == cal.scales["avgpool"] == cal.scales["concat"]
    assert cal.scales["pad"] == cal.scales["concat"] == cal.scales["prelu"]
    assert cal.scales["resize"] == cal.scales["relu"] == cal.scales["depth_to_space"]
    assert cal.scales["reshape"] == cal.scales["mean"]
    # a tied group takes the widest range of its members
    widest = max(max(abs(lo), abs(hi)) for n, (lo, hi) in cal.ranges.items() if cal.scales[n] == cal.scales["concat"])
    assert cal.scales["concat"][0] == pytest.approx(widest / 127, rel=1e-6)
    assert "requantized" in cal.notes["logistic"] and "requantized" in cal.notes["tanh"]
    # the bias-less depthwise got a bias of its own
    dw = next(op for op in cal.model.subgraphs[0].operators
              if builtin_code(cal.model.operator_codes[op.opcode_index]) == B.DEPTHWISE_CONV_2D)
    assert dw.inputs[2] >= 0


def test_built_graph_power_of_two_scales(built):
    model, frames, _ = built
    cal = calibrate(model, frames, scale_type="power_of_two")
    check_structure(cal, model)
    assert cal.scale_type == "power_of_two"


@pytest.mark.parametrize("scale_type", [*Q.SCALE_TYPES, 0, 1])
def test_built_graph_runs_bit_identically_in_litert(built, scale_type):
    model, frames, cal = built
    if isinstance(scale_type, int):                                  # TI's quantization_scale_type
        cal = calibrate(model, frames, iterations=2, quantization_scale_type=scale_type)
        check_structure(cal, model)
    elif scale_type != "symmetric":
        cal = calibrate(model, frames, iterations=2, scale_type=scale_type)
    feeds = random_frames(model, 3, seed=99, low=-1.5, high=1.5)     # also beyond the calibrated range
    assert_runs_the_same_in_litert(cal.model, feeds, f"built graph ({scale_type})")


def test_unknown_op_is_refused_naming_op_and_node():
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    y, z = b.tensor("y", [1, 4]), b.tensor("z", [1, 4])
    b.op(B.RELU, [x], [y])
    b.op(B.FLOOR, [y], [z])
    b.output(z)
    with pytest.raises(UnsupportedOpError, match=r"FLOOR \(node 1\): no int8 quantization rule for FLOOR"):
        calibrate(b.build(), [[np.zeros((1, 4), np.float32)]])


def test_bad_arguments_are_refused(built):
    model, frames, _ = built
    with pytest.raises(ValueError, match="scale_type"):
        calibrate(model, frames, scale_type="asymmetric")
    with pytest.raises(ValueError, match="iterations"):
        calibrate(model, frames, iterations=0)
    with pytest.raises(ValueError, match="at least one"):
        calibrate(model, [])
    with pytest.raises(workbench.WorkbenchError, match="1 inputs"):
        calibrate(model, [[frames[0][0], frames[0][0]]])


# ------------------------------------------------------------------------------------------------
# progress
# ------------------------------------------------------------------------------------------------
def test_progress_callable_gets_increasing_counts(built):
    model, frames, _ = built
    calls = []
    calibrate(model, frames[:5], iterations=3, progress=lambda done, total, what: calls.append((done, total, what)))
    assert [c[0] for c in calls] == list(range(1, 16))
    assert {c[1] for c in calls} == {15}
    assert calls[0][2].startswith("calibration 1") and calls[-1][2].startswith("calibration 3")


def test_progress_none_prints_nothing_and_true_draws_a_bar(built, capsys):
    model, frames, _ = built
    calibrate(model, frames[:3], iterations=2)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    calibrate(model, frames[:3], iterations=2, progress=True)
    out = capsys.readouterr()
    assert "6/6" in out.err and "calibration 2" in out.err


# ------------------------------------------------------------------------------------------------
# the digits CNN: calibrated on the training split, measured on the held-out split
# ------------------------------------------------------------------------------------------------
CALIBRATION_FRAMES = 64


@pytest.fixture(scope="module")
def digits():
    model = workbench.load(DIGITS)
    with np.load(SPLIT) as z:
        split = {k: z[k] for k in z.files}
    frames = [[x[None]] for x in split["x_train"][:CALIBRATION_FRAMES]]        # training split only
    cals = {it: calibrate(model, frames, iterations=it, scale_type="symmetric") for it in (1, 2)}
    return model, split, cals


def run_batch(model, x: np.ndarray, tensor: str | None = None) -> np.ndarray:
    """The model on a whole batch; the graph output, or the float value of ``tensor`` (int8 dequantized)."""
    it = Interpreter(model=model, keep_intermediates=tensor is not None)
    d = it.get_input_details()[0]
    it.resize_tensor_input(d["index"], x.shape)
    it.allocate_tensors()
    it.set_tensor(d["index"], x)
    it.invoke()
    if tensor is None:
        return it.get_tensor(it.get_output_details()[0]["index"])
    det = next(t for t in it.get_tensor_details() if t["name"] == tensor)
    v = it.get_tensor(det["index"])
    if v.dtype == np.int8:
        s, zp = det["quantization"]
        v = (v.astype(np.float64) - zp) * s
    return v


def test_digits_int8_model_structure(digits):
    model, _, cals = digits
    for cal in cals.values():
        check_structure(cal, model)
        assert cal.frames == CALIBRATION_FRAMES
    assert op_names(cals[1].model) == ["QUANTIZE", "CONV_2D", "CONV_2D", "MAX_POOL_2D", "CONV_2D", "MEAN",
                                       "FULLY_CONNECTED", "SOFTMAX", "DEQUANTIZE"]
    assert versions(cals[1].model) == {"QUANTIZE": 1, "CONV_2D": 3, "MAX_POOL_2D": 2, "MEAN": 2,
                                       "FULLY_CONNECTED": 4, "SOFTMAX": 2, "DEQUANTIZE": 2}
    def signature(m):          # the signature's tensors by name (the int8 model renumbers its tensors)
        return [(sig.signature_key, [(tm.name, m.subgraphs[0].tensors[tm.tensor_index].name)
                                     for tm in (*sig.inputs, *sig.outputs)]) for sig in m.signature_defs]

    assert signature(cals[1].model) == signature(model)
    assert workbench.versioning.read_min_runtime_metadata(cals[1].model) is not None
    assert [len(s) for s in cals[1].weight_scales.values()] == [8, 16, 32, 10]     # one scale per channel
    assert not any(np.any(c) for c in cals[1].bias_corrections.values())
    assert any(np.any(c) for c in cals[2].bias_corrections.values())


def test_digits_power_of_two(digits):
    model, split, _ = digits
    frames = [[x[None]] for x in split["x_train"][:CALIBRATION_FRAMES]]
    cal = calibrate(model, frames, scale_type="power_of_two")
    check_structure(cal, model)
    pq = run_batch(cal.model, split["x_test"])
    assert (pq.argmax(1) == split["y_test"]).mean() >= 0.95


def test_digits_held_out_accuracy_stays_within_two_points(digits):
    model, split, cals = digits
    x, y = split["x_test"], split["y_test"]
    pf = run_batch(model, x)
    acc_f = (pf.argmax(1) == y).mean()
    for it, cal in cals.items():
        pq = run_batch(cal.model, x)
        acc_q = (pq.argmax(1) == y).mean()
        same = (pq.argmax(1) == pf.argmax(1)).mean()
        assert abs(acc_q - acc_f) <= 0.02, f"iterations={it}: int8 {acc_q:.3f} vs float {acc_f:.3f}"
        assert same >= 0.97, f"iterations={it}: only {same:.3f} of held-out images get the float class"


LOGITS = "digits_cnn_1/probs_1/MatMul;digits_cnn_1/probs_1/BiasAdd"


def test_digits_bias_calibration_improves_the_held_out_logits(digits):
    model, split, cals = digits
    x = split["x_test"]
    ref = run_batch(model, x, LOGITS)
    snr = {it: sqnr(ref, run_batch(cal.model, x, LOGITS))["snr_db"] for it, cal in cals.items()}
    # measured: 34.8 dB with the ranges alone, 36.4 dB after one bias-calibration iteration
    assert snr[2] >= snr[1] + 1.0, snr


def test_digits_compare_reports_every_activation(digits):
    _, split, cals = digits
    errors = cals[2].compare([[x[None]] for x in split["x_test"][:20]])
    assert set(errors) == set(cals[2].scales)
    assert all(e["snr_db"] > 25 for e in errors.values()), errors


def test_digits_runs_bit_identically_in_litert(digits):
    _, split, cals = digits
    feeds = [[split["x_test"]], [split["x_test"][:1]]]             # the held-out set as one batch, and one image
    assert_runs_the_same_in_litert(cals[2].model, feeds, "digits int8")


def test_calibrated_shows_a_table_per_tensor(digits):
    _, _, cals = digits
    cal = cals[2]
    text, page = repr(cal), cal._repr_html_()
    assert text.startswith("Calibrated int8 model: 9 ops, 8 activations, 4 per-channel weights; "
                           "64 frames, 2 iterations")
    assert "digits_cnn_1/pool_1/MaxPool2d" in text and "fixed by SOFTMAX" in text
    assert page.count("<tr>") == 1 + len(cal.scales) + 1 + len(cal.weight_scales)
    assert "0.00390625" in page


# ------------------------------------------------------------------------------------------------
# the converter-made float sample models, whole and as the partitions the tidl strategy cuts
# ------------------------------------------------------------------------------------------------
SAMPLES = ["audio_conv1d_float", "dilated_depthwise_float", "efficientnet_block_float", "fc_variants_float",
           "float16_weights", "grouped_conv_float", "mobilenet_v3_block_float", "resnet_block_float",
           "ssd_head_float", "unet_tiny_float"]


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_model_quantizes_and_runs_bit_identically_in_litert(name):
    model = workbench.load(ROOT / "sample_models" / f"{name}.tflite")
    cal = calibrate(model, random_frames(model, 4, seed=5), iterations=2)
    check_structure(cal, model)
    assert_runs_the_same_in_litert(cal.model, random_frames(model, 2, seed=6, low=-2, high=2), name)


@pytest.mark.parametrize("name", ["digits_cnn_float", "float16_weights", "mobilenet_v3_block_float", "unet_tiny_float"])
def test_every_tidl_partition_quantizes_and_runs_bit_identically_in_litert(name):
    from workbench.partition import partition, submodel

    plan = partition(workbench.load(ROOT / "sample_models" / f"{name}.tflite"), "tidl", "tidl")
    assert plan.partitions
    for k in range(len(plan.partitions)):
        part = submodel(plan, k)
        cal = calibrate(part, random_frames(part, 4, seed=k), iterations=2)
        assert_runs_the_same_in_litert(cal.model, random_frames(part, 2, seed=10 + k), f"{name} partition {k}")


@pytest.mark.parametrize("name, why", [
    ("kws_lstm_float", r"UNIDIRECTIONAL_SEQUENCE_LSTM \(node 0\): no int8 quantization rule"),
    ("transformer_tiny_float", r"NEG \(node 7\): no int8 quantization rule"),
    ("gru_tiny_float", "models of one subgraph; this one has 3"),
])
def test_models_beyond_the_rules_are_refused_before_any_run(name, why):
    model = workbench.load(ROOT / "sample_models" / f"{name}.tflite")
    with pytest.raises(UnsupportedOpError, match=why):
        calibrate(model, [None])          # refused before a frame is looked at


# ------------------------------------------------------------------------------------------------
# MobileNet v1 1.0/224 (random weights: speed and op coverage, not accuracy)
# ------------------------------------------------------------------------------------------------
def test_mobilenet_v1_runs_bit_identically_in_litert():
    if not MOBILENET.exists():
        pytest.skip(f"{MOBILENET} is absent (the shared benchmark models live next to the repository)")
    model = workbench.load(MOBILENET)
    frames = random_frames(model, 4, seed=3)
    cal = calibrate(model, frames, iterations=2)
    check_structure(cal, model)
    assert versions(cal.model)["DEPTHWISE_CONV_2D"] == 3
    assert_runs_the_same_in_litert(cal.model, random_frames(model, 2, seed=4), "mobilenet int8")
