"""Edge cases of the interpreter found while adding real models to the corpus.

* Window output sizes (``kernels/_common.py``): TFLite divides with C truncation, so a VALID
  window larger than its input gives an output size of 0 (an empty output) or a negative one.
  litert (the oracle: builtin kernels, in a child process) refuses a negative size at prepare
  for CONV_2D / DEPTHWISE_CONV_2D, turns it into 0 for the pools (the width first: a bad width
  empties the height too), and refuses a TRANSPOSE_CONV output shape whose forward convolution does
  not give back the input's size.  Every dtype path (float32, int8, uint8, 16x8, hybrid), fast and
  reference, must agree with it: same refusals, same shapes, same values.
* Every reference kernel must handle an empty output (a slice end of -1 once wrapped around).
* ``Interpreter.invoke_node`` on a node that reads a dynamic tensor (READ_VARIABLE's output)
  before the first ``invoke``.
* Float kernels must not print numpy RuntimeWarnings where TFLite silently gives inf / nan.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

from helpers import litert_batch
from workbench.errors import KernelError, UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.kernels import _common, conv_2d, depthwise_conv_2d, transpose_conv
from workbench.interpreter.kernels._common import c_div, out_size, out_size_checked
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    Conv2DOptions,
    DepthwiseConv2DOptions,
    ModelBuilder,
    Padding,
    Pool2DOptions,
    TransposeConvOptions,
)
from workbench.versioning import update_versions

S, V = Padding.SAME, Padding.VALID
NO_CLAMP = (-_common.FLOAT_MAX, _common.FLOAT_MAX)


# ------------------------------------------------------------------------------------------------
# output-size arithmetic


def test_c_division_truncates_toward_zero():
    assert [c_div(a, 4) for a in (-9, -8, -7, -4, -3, -1, 0, 3, 4, 9)] == [-2, -2, -1, -1, 0, 0, 0, 0, 1, 2]
    assert c_div(7, -2) == -3 and c_div(-7, -2) == 3


def test_valid_out_size_is_truncated_not_floored():
    # (1 + 4 - 7) / 4 = -2/4: C gives 0 (an empty output), Python's floor would give -1 (a refusal)
    assert out_size(2, 1, 7, 4, 1) == 0
    assert out_size(2, 192, 512, 160, 1) == -1          # openWakeWord's melspectrogram at width 192
    assert out_size(2, 193, 512, 160, 1) == 0
    assert out_size(2, 511, 512, 160, 1) == 0
    assert out_size(2, 512, 512, 160, 1) == 1
    assert out_size(2, 1280, 512, 160, 1) == 5
    assert out_size(2, 3, 3, 1, 2) == -1                # dilation 2: effective filter 5
    assert out_size(1, 0, 3, 2, 1) == 0 and out_size(1, 5, 99, 2, 1) == 3    # SAME ignores the filter
    assert out_size(1, 5, 3, 0, 1) == 0                 # stride 0: 0, no error path


def test_checked_out_size_is_none_where_litert_reports_an_error():
    assert out_size_checked(2, 5, 3, 1, 1) == 3
    assert out_size_checked(2, 2, 3, 1, 1) == 0
    assert out_size_checked(2, 1, 3, 1, 1) is None      # negative
    assert out_size_checked(1, 5, 0, 1, 1) is None      # filter 0 (even for SAME)
    assert out_size_checked(1, 5, 3, 0, 1) is None
    assert out_size_checked(1, 5, 3, 1, 0) is None
    assert out_size_checked(0, 5, 3, 1, 1) is None      # unknown padding


# ------------------------------------------------------------------------------------------------
# one-op models of every window op and dtype


def q(scale, zp, dim=0):
    return {"scale": scale, "zero_point": zp, "quantized_dimension": dim}


def small(rng, dtype, shape, lo=-4, hi=5):
    """Small integers: float sums of them are exact, so float results compare exactly too."""
    return rng.integers(lo, hi, shape).astype(dtype)


QUANT = {   # dtype kind → (input quantization, filter dtype, output quantization, bias dtype)
    "float32": (None, np.float32, None, np.float32),
    "int8": (q(0.05, -3), np.int8, q(0.11, 5), np.int32),
    "uint8": (q(0.05, 131), np.uint8, q(0.11, 120), np.int32),
    "int16": (q(0.002, 0), np.int8, q(0.0045, 0), np.int64),
    "hybrid": (None, np.int8, None, np.float32),
}
ACT_DTYPE = {"float32": np.float32, "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "hybrid": np.float32}


def _input(b, rng, kind, shape):
    in_q = QUANT[kind][0]
    dt = ACT_DTYPE[kind]
    x = b.input("x", shape, dt, **({"quantization": in_q} if in_q else {}))
    if kind in ("float32", "hybrid"):
        v = small(rng, np.float32, shape)
    elif kind == "uint8":
        v = small(rng, np.uint8, shape, 100, 160)
    else:
        v = small(rng, dt, shape, -100, 100)
    return x, v


def _weights(b, rng, kind, shape, channels, axis):
    if kind == "float32":
        return b.constant("w", small(rng, np.float32, shape)), np.ones(channels)
    if kind == "uint8":
        return b.constant("w", small(rng, np.uint8, shape, 110, 140), quantization=q(0.01, 124, axis)), np.full(1, 0.01)
    scales = rng.uniform(0.002, 0.01, channels)
    return b.constant("w", small(rng, np.int8, shape, -127, 128), quantization=q(scales.tolist(), [0] * channels,
                                                                                   axis)), scales


def _bias(b, rng, kind, channels, w_scales):
    in_q, _, _, b_dt = QUANT[kind]
    if kind in ("float32", "hybrid"):
        return b.constant("bias", small(rng, np.float32, channels))
    bs = (np.float32(in_q["scale"]) * np.resize(w_scales, channels).astype(np.float32)).astype(np.float64)
    return b.constant("bias", small(rng, b_dt, channels, -300, 300), quantization=q(bs.tolist(), [0] * channels))


def _output(b, kind, shape):
    out_q = QUANT[kind][2]
    return b.tensor("y", shape, ACT_DTYPE[kind], **({"quantization": out_q} if out_q else {}))


def window_model(op, kind, x_shape, k, stride=(1, 1), dilation=(1, 1), padding=V, out_hw=None):
    """A one-op model: op in conv / depthwise / avg / max / l2 / tconv; ``kind`` a key of QUANT.
    The stored output shape is a placeholder: TFLite and the workbench compute it in prepare."""
    rng = np.random.default_rng(zlib.crc32(f"{op}{kind}{x_shape}{k}{stride}{dilation}{padding}{out_hw}".encode()))
    b = ModelBuilder()
    c = x_shape[3]
    if op == "tconv":
        co = 3
        shape_t = b.constant("output_shape", np.array([x_shape[0], *out_hw, co], np.int32))
        w, ws = _weights(b, rng, kind, (co, k[0], k[1], c), co, 0)
        x, xv = _input(b, rng, kind, x_shape)
        y = _output(b, kind, (x_shape[0], *out_hw, co))
        b.op(B.TRANSPOSE_CONV, [shape_t, w, x, _bias(b, rng, kind, co, ws)], [y],
             TransposeConvOptions(padding=padding, stride_h=stride[0], stride_w=stride[1]))
    elif op in ("conv", "depthwise"):
        x, xv = _input(b, rng, kind, x_shape)
        if op == "conv":
            co = 3
            w, ws = _weights(b, rng, kind, (co, k[0], k[1], c), co, 0)
            options = Conv2DOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                    dilation_h_factor=dilation[0], dilation_w_factor=dilation[1])
        else:
            co = 2 * c
            w, ws = _weights(b, rng, kind, (1, k[0], k[1], co), co, 3)
            options = DepthwiseConv2DOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                             depth_multiplier=2, dilation_h_factor=dilation[0],
                                             dilation_w_factor=dilation[1])
        y = _output(b, kind, (x_shape[0], 1, 1, co))
        b.op(B.CONV_2D if op == "conv" else B.DEPTHWISE_CONV_2D, [x, w, _bias(b, rng, kind, co, ws)], [y], options)
    else:
        x, xv = _input(b, rng, kind, x_shape)
        y = b.tensor("y", (x_shape[0], 1, 1, c), ACT_DTYPE[kind],
                     **({"quantization": QUANT[kind][0]} if QUANT[kind][0] else {}))   # same as the input
        code = {"avg": B.AVERAGE_POOL_2D, "max": B.MAX_POOL_2D, "l2": B.L2_POOL_2D}[op]
        b.op(code, [x], [y], Pool2DOptions(padding=padding, stride_h=stride[0], stride_w=stride[1],
                                            filter_height=k[0], filter_width=k[1]))
    b.output(y)
    return update_versions(b.build()), [xv]


# (name, x_shape, k, stride, dilation, padding): sizes around 0 for every window op
GEOMETRIES = {
    "valid": ((1, 5, 5, 2), (3, 3), (1, 1), (1, 1), V),
    "empty_width": ((1, 5, 2, 2), (3, 3), (1, 1), (1, 1), V),                # (2 + 1 - 3) / 1 = 0
    "empty_both": ((2, 2, 2, 2), (3, 3), (1, 1), (1, 1), V),
    "negative_width": ((1, 5, 1, 2), (3, 3), (1, 1), (1, 1), V),             # (1 + 1 - 3) / 1 = -1
    "negative_height": ((1, 1, 5, 2), (3, 3), (1, 1), (1, 1), V),
    "strided_empty": ((1, 5, 5, 2), (3, 7), (1, 2), (1, 1), V),              # (5 + 2 - 7) / 2 = 0
    "truncated_to_empty": ((1, 5, 1, 2), (3, 7), (1, 4), (1, 1), V),         # (1 + 4 - 7) / 4 = 0, not -1
    "dilated_empty": ((1, 4, 6, 2), (3, 3), (1, 1), (2, 1), V),              # effective 5: (4 + 1 - 5) = 0
    "dilated_negative": ((1, 3, 6, 2), (3, 3), (1, 1), (2, 1), V),
    "same_small_input": ((1, 1, 2, 2), (5, 5), (2, 2), (1, 1), S),
    "input_height_0": ((1, 0, 5, 2), (3, 3), (1, 1), (1, 1), S),
}
POOL_GEOMETRIES = [g for g in GEOMETRIES if not g.startswith("dilated")]
# (name, x_shape, k, stride, padding, output height and width)
TCONV_GEOMETRIES = {
    "valid": ((1, 3, 3, 2), (3, 3), (1, 1), V, (5, 5)),
    "valid_stride_2": ((1, 2, 2, 2), (3, 3), (2, 2), V, (6, 5)),             # 5: (5 + 2 - 3) / 2 = 2 too
    "same_stride_2": ((1, 2, 2, 2), (3, 3), (2, 2), S, (4, 3)),
    "same_does_not_give_the_input": ((1, 2, 2, 2), (3, 3), (2, 2), S, (5, 4)),   # (5 + 1) / 2 = 3 ≠ 2
    "valid_negative": ((1, 1, 1, 2), (7, 7), (3, 3), V, (1, 1)),             # (1 + 3 - 7) / 3 = -1
    "valid_empty": ((1, 1, 1, 2), (7, 7), (3, 3), V, (2, 2)),                # (2 + 3 - 7) / 3 = 0 ≠ 1
}

CASES = {}
for _g in GEOMETRIES:
    for _kind in ("float32", "int8", "uint8", "int16", "hybrid"):
        for _op in ("conv", "depthwise"):
            xs, k, st, dl, pad = GEOMETRIES[_g]
            CASES[f"{_op}-{_kind}-{_g}"] = (_op, _kind, xs, k, st, dl, pad, None)
for _g in POOL_GEOMETRIES:
    for _kind in ("float32", "int8", "uint8", "int16"):
        for _op in ("avg", "max", "l2"):
            if _op == "l2" and _kind != "float32":
                continue
            xs, k, st, dl, pad = GEOMETRIES[_g]
            CASES[f"{_op}-{_kind}-{_g}"] = (_op, _kind, xs, k, st, dl, pad, None)
for _g, (xs, k, st, pad, hw) in TCONV_GEOMETRIES.items():
    for _kind in ("float32", "int8", "uint8", "int16"):
        CASES[f"tconv-{_kind}-{_g}"] = ("tconv", _kind, xs, k, st, (1, 1), pad, hw)


def build(name):
    op, kind, xs, k, st, dl, pad, hw = CASES[name]
    return window_model(op, kind, xs, k, st, dl, pad, hw)


def run_ours(model, feeds, reference):
    """("refused", message) or ("ok", output array)."""
    try:
        it = Interpreter(model=model, reference=reference)
        it.allocate_tensors()
    except WorkbenchError as exc:
        return "refused", f"{type(exc).__name__}: {exc}"
    for d, v in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], v)
    it.invoke()
    return "ok", it.get_tensor(it.get_output_details()[0]["index"])


@pytest.fixture(scope="module")
def litert_results():
    names = sorted(CASES)
    from workbench import dump

    jobs = []
    for name in names:
        model, feeds = build(name)
        jobs.append((dump(model), feeds))
    return dict(zip(names, litert_batch.run_many(jobs)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_window_ops_refuse_or_run_as_litert_does(name, litert_results):
    status, theirs = litert_results[name]
    assert status != "crash", theirs
    model, feeds = build(name)
    for reference in (False, True):
        kind, ours = run_ours(model, feeds, reference)
        what = f"{name} ({'reference' if reference else 'fast'} kernels)"
        if status == "error":
            assert kind == "refused", f"{what}: litert refuses ({theirs}) but we ran, giving {ours.shape}"
            continue
        assert kind == "ok", f"{what}: litert runs (output {theirs[0].shape}) but we refuse: {ours}"
        assert ours.shape == theirs[0].shape and ours.dtype == theirs[0].dtype, \
            f"{what}: {ours.dtype}{ours.shape} vs litert {theirs[0].dtype}{theirs[0].shape}"
        if name.startswith("l2-"):      # sqrt of the mean square: the workbench sums in float64 (1 ulp)
            np.testing.assert_allclose(ours, theirs[0], rtol=5e-7, atol=0, err_msg=what)
        else:
            np.testing.assert_array_equal(ours, theirs[0], err_msg=what)


def test_the_cases_cover_refusals_empty_and_full_outputs(litert_results):
    seen = {"error": 0, "empty": 0, "full": 0}
    for status, theirs in litert_results.values():
        seen["error" if status == "error" else "empty" if theirs[0].size == 0 else "full"] += 1
    assert min(seen.values()) >= 20, seen


def test_conv_reference_with_an_empty_strided_output():
    """The bug as first seen (openWakeWord's melspectrogram at width 193..511): a slice end of
    (0 - 1)·stride + 1 < 0 wrapped around and numpy refused to broadcast."""
    x = np.ones((1, 1, 5, 2), np.float32)
    w = np.ones((3, 1, 7, 2), np.float32)
    out = conv_2d.conv_float(x, w, None, conv_2d.Conv2DData("VALID", 1, 2, 1, 1, 1, 7, 0, 0, 1, (1, 1, 0, 3), "NONE",
                                                            *NO_CLAMP))
    assert out.shape == (1, 1, 0, 3)
    out = depthwise_conv_2d.depthwise_float(x, np.ones((1, 1, 7, 4), np.float32), None,
                                            depthwise_conv_2d.DepthwiseConv2DData("VALID", 1, 2, 1, 1, 0, 0, 2,
                                                                                  (1, 1, 0, 4), "NONE", *NO_CLAMP))
    assert out.shape == (1, 1, 0, 4)
    out = transpose_conv.transpose_conv_float(np.ones((1, 0, 2, 2), np.float32), np.ones((3, 2, 2, 2), np.float32),
                                              np.arange(3, dtype=np.float32), transpose_conv.TransposeConvData(
                                                  "VALID", 2, 2, 2, 2, 0, 0, (1, 2, 4, 3), "NONE", *NO_CLAMP))
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3, dtype=np.float32), (1, 2, 4, 3)))


def test_negative_conv_output_names_node_sizes_and_padding():
    model, feeds = window_model("depthwise", "float32", (1, 3, 6, 2), (3, 3), dilation=(2, 1))
    with pytest.raises(KernelError) as info:
        Interpreter(model=model).allocate_tensors()
    msg = str(info.value)
    assert msg.startswith("DEPTHWISE_CONV_2D (node 0): input height 3 is too small for VALID padding with filter "
                          "height 3 (dilation 2: effective 5) and stride 1")
    assert "(3 + 1 - 5) / 1 = -1" in msg and "height 4 gives an empty output, 5 or more a non-empty one" in msg


def test_stride_0_is_refused_by_every_window_op():
    for op in ("conv", "depthwise", "avg"):
        model, _ = window_model(op, "float32", (1, 5, 5, 2), (3, 3), stride=(0, 1))
        with pytest.raises(UnsupportedOpError, match=r"stride \(0, 1\).* must be positive"):
            Interpreter(model=model).allocate_tensors()
    model, _ = window_model("tconv", "float32", (1, 2, 2, 2), (3, 3), stride=(1, 0), padding=S, out_hw=(2, 2))
    with pytest.raises(UnsupportedOpError, match=r"strides \(1, 0\)"):
        Interpreter(model=model).allocate_tensors()


def test_melspectrogram_sizes_match_litert(corpus_paths):
    """openWakeWord's melspectrogram (input [1, -1]; a 512-tap, stride-160 VALID CONV_2D): widths
    1..192 fail prepare in litert, 193..511 give an empty output, 512 and more run."""
    from helpers import litert_steps

    model = corpus_paths["openwakeword_melspectrogram"].read_bytes()
    for n in (1, 192, 193, 511, 512, 1280):
        x = np.random.default_rng(n).uniform(-1, 1, (1, n)).astype(np.float32)
        try:
            theirs = litert_steps.run_steps(model, [[x]], input_shapes=[(1, n)])[0][0]
        except RuntimeError as exc:
            assert "failed to prepare" in str(exc)
            theirs = None
        for reference in (False, True):
            it = Interpreter(model_content=model, reference=reference)
            it.resize_tensor_input(0, [1, n])
            if theirs is None:
                with pytest.raises(KernelError, match=rf"CONV_2D \(node 3\): input width {n} is too small for VALID"):
                    it.allocate_tensors()
                continue
            it.allocate_tensors()
            it.set_tensor(0, x)
            it.invoke()
            ours = it.get_tensor(it.get_output_details()[0]["index"])
            assert ours.shape == theirs.shape == (1, 1, max(0, (n - 512) // 160 + 1), 32)
            np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------------------------------------
# invoke_node and dynamic tensors


def _read_variable_model():
    """VAR_HANDLE → READ_VARIABLE → ADD(value, x): the ADD reads a dynamic tensor."""
    from workbench.schema import AddOptions, VarHandleOptions

    b = ModelBuilder()
    h = b.tensor("h", (), np.int32)
    b.tensors[h] = b.tensors[h].__class__(shape=(), type=13, buffer=0, name="h")     # RESOURCE
    v = b.tensor("v", (1, 2))
    x = b.input("x", (1, 2))
    y = b.tensor("y", (1, 2))
    b.op(B.VAR_HANDLE, [], [h], VarHandleOptions(container="", shared_name="state"))
    b.op(B.READ_VARIABLE, [h], [v])
    b.op(B.ADD, [v, x], [y], AddOptions())
    b.output(y)
    return b.build(), v, x


def test_invoke_node_feeds_a_dynamic_tensor_before_the_first_invoke():
    model, v, x = _read_variable_model()
    it = Interpreter(model=model)
    it.allocate_tensors()
    (y,) = it.invoke_node(2, {v: np.array([[1.0, 2.0]], np.float32), x: np.array([[10.0, 20.0]], np.float32)})
    np.testing.assert_array_equal(y, [[11.0, 22.0]])
    # the value's shape decides (the ADD is prepared again for it)
    (y,) = it.invoke_node(2, {v: np.ones((3, 2), np.float32), x: np.array([[10.0, 20.0]], np.float32)})
    np.testing.assert_array_equal(y, np.broadcast_to([[11.0, 21.0]], (3, 2)))


def test_invoke_node_refuses_a_value_of_the_wrong_shape():
    model, v, x = _read_variable_model()
    it = Interpreter(model=model)
    it.allocate_tensors()
    with pytest.raises(WorkbenchError, match=rf"input tensor {x} \('x'\) has shape \[1, 2\]; the value given has "
                                             r"shape \[2, 2\]"):
        it.invoke_node(2, {v: np.ones((1, 2), np.float32), x: np.ones((2, 2), np.float32)})


# ------------------------------------------------------------------------------------------------
# float kernels: inf and nan silently, as TFLite (no numpy RuntimeWarning)

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, 3.4e38, -3.4e38, 0.5, -2.5, 1e-30, 100.0,
                    -100.0, 2.0], np.float32)
SA = np.repeat(SPECIAL, 16).reshape(1, 16, 16, 1)       # with SB: every pair of special values
SB = np.tile(SPECIAL, 16).reshape(1, 16, 16, 1)


def float_model(op, inputs, consts=(), options=None, out_shape=None, out_dtype=np.float32):
    b = ModelBuilder()
    ins = [b.input(f"x{i}", v.shape) for i, v in enumerate(inputs)]
    extra = [b.constant(f"c{i}", c) if c is not None else -1 for i, c in enumerate(consts)]
    quant = {"quantization": q(0.1, 3)} if out_dtype != np.float32 else {}
    y = b.tensor("y", out_shape or inputs[0].shape, out_dtype, **quant)
    b.op(op, ins + extra, [y], options) if options is not None else b.op(op, ins + extra, [y])
    b.output(y)
    return update_versions(b.build()), list(inputs)


def _float_cases():
    import workbench.schema as s

    unary = ("ABS CEIL COS ELU EXP FLOOR GELU HARD_SWISH LOG LOGISTIC NEG RELU RELU6 RELU_N1_TO_1 RELU_0_TO_1 ROUND "
             "RSQRT SIGN SIN SQRT SQUARE TANH LOG_SOFTMAX L2_NORMALIZATION").split()
    binary = "ADD SUB MUL DIV FLOOR_DIV FLOOR_MOD POW SQUARED_DIFFERENCE MAXIMUM MINIMUM ATAN2 PRELU ADD_N".split()
    cases = {n: (getattr(B, n), [SA]) for n in unary}
    cases.update({n: (getattr(B, n), [SA, SB]) for n in binary})
    rows = SA.reshape(16, 16)
    w3 = np.tile(SPECIAL[[2, 3, 8, 9, 13, 14, 0, 10, 11]], 2).reshape(2, 3, 3, 1)
    same = s.Padding.SAME
    cases.update({
        "SOFTMAX": (B.SOFTMAX, [rows], (), s.SoftmaxOptions(beta=1.0)),
        "LOG_SOFTMAX_rows": (B.LOG_SOFTMAX, [rows]),
        "LEAKY_RELU": (B.LEAKY_RELU, [SA], (), s.LeakyReluOptions(alpha=0.2)),
        "SQUARED_DIFFERENCE_broadcast": (B.SQUARED_DIFFERENCE, [SA, SB[:, :1]]),
        "BATCH_MATMUL": (B.BATCH_MATMUL, [rows, SB.reshape(16, 16)]),
        "FULLY_CONNECTED": (B.FULLY_CONNECTED, [rows], [SB.reshape(16, 16), SPECIAL], s.FullyConnectedOptions(),
                            (16, 16)),
        "CONV_2D": (B.CONV_2D, [SA], [w3, np.array([1.0, np.inf], np.float32)],
                    s.Conv2DOptions(padding=same, stride_h=1, stride_w=1), (1, 16, 16, 2)),
        "CONV_2D_1x1": (B.CONV_2D, [SA], [w3[:, :1, :1, :], np.array([1.0, np.inf], np.float32)],
                        s.Conv2DOptions(padding=same, stride_h=1, stride_w=1), (1, 16, 16, 2)),
        "DEPTHWISE_CONV_2D": (B.DEPTHWISE_CONV_2D, [SA], [w3.reshape(1, 3, 3, 2), np.array([1.0, np.inf], np.float32)],
                              s.DepthwiseConv2DOptions(padding=same, stride_h=1, stride_w=1, depth_multiplier=2),
                              (1, 16, 16, 2)),
        "LOCAL_RESPONSE_NORMALIZATION": (B.LOCAL_RESPONSE_NORMALIZATION, [SA], (),
                                         s.LocalResponseNormalizationOptions(radius=2, bias=1.0, alpha=1.0, beta=0.5)),
        "CUMSUM": (B.CUMSUM, [SA], [np.array(1, np.int32)], s.CumsumOptions()),
        "QUANTIZE": (B.QUANTIZE, [SA], (), None, None, np.int8),
        "CAST": (B.CAST, [SA], (), None, None, np.int32),
        "RESIZE_BILINEAR": (B.RESIZE_BILINEAR, [SA], [np.array([20, 20], np.int32)], s.ResizeBilinearOptions(),
                            (1, 20, 20, 1)),
    })
    for n in ("MEAN", "SUM", "REDUCE_PROD", "REDUCE_MAX", "REDUCE_MIN"):
        cases[n] = (getattr(B, n), [SA], [np.array([1, 2], np.int32)], s.ReducerOptions(keep_dims=False), (1, 1))
    for n in ("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"):
        cases[n] = (getattr(B, n), [SA], (), s.Pool2DOptions(padding=same, stride_h=1, stride_w=1, filter_height=3,
                                                             filter_width=3))
    return cases


FLOAT_CASES = _float_cases()


@pytest.mark.parametrize("name", sorted(FLOAT_CASES))
def test_float_kernels_print_no_runtime_warning_on_inf_and_nan(name):
    model, feeds = float_model(*FLOAT_CASES[name])
    for reference in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("error")          # a RuntimeWarning fails the test
            if name == "FLOOR_DIV":                 # a zero divisor fails the invoke, as in litert
                with pytest.raises(KernelError, match="division by zero"):
                    run_ours(model, feeds, reference)
                continue
            run_ours(model, feeds, reference)


@pytest.mark.parametrize("name", ["DIV", "ADD", "SUB", "MUL", "ADD_N", "SQUARE", "SQUARED_DIFFERENCE",
                                  "FULLY_CONNECTED", "CONV_2D_1x1", "CONV_2D", "QUANTIZE", "MAX_POOL_2D", "RELU",
                                  "RELU6", "SIGN", "REDUCE_MAX", "REDUCE_MIN", "FLOOR_MOD"])
def test_float_inf_and_nan_equal_litert(name):
    """x/0 and overflows: litert clamps to the NONE activation's [-FLT_MAX, FLT_MAX] (so 1/0 is
    3.4028235e38, not inf) and keeps NaN (0/0)."""
    from workbench import dump

    model, feeds = float_model(*FLOAT_CASES[name])
    (status, theirs), = litert_batch.run_many([(dump(model), feeds)])
    assert status == "ok", theirs
    for reference in (False, True):
        _, ours = run_ours(model, feeds, reference)
        np.testing.assert_array_equal(ours, theirs[0])       # nan where litert has nan, same values elsewhere
    if name == "DIV":
        a, b, y = SA.reshape(-1), SB.reshape(-1), ours.reshape(-1)
        plus_zero = (b == 0) & ~np.signbit(b)
        assert y[(a == 1) & plus_zero] == _common.FLOAT_MAX and y[(a == -1) & plus_zero] == -_common.FLOAT_MAX
        assert y[(a == 1) & (b == 0) & np.signbit(b)] == -_common.FLOAT_MAX
        assert np.isnan(y[(a == 0) & ~np.signbit(a) & plus_zero]).all()


def test_add_n_clamps_after_every_addition_as_litert():
    """litert adds the inputs pairwise through ADD's kernel, clamping each partial sum: FLT_MAX + FLT_MAX
    - FLT_MAX is 0 there (an unclamped sum would be inf)."""
    from workbench import dump

    m = np.float32(_common.FLOAT_MAX)
    feeds = [np.array(v, np.float32) for v in ([m, m, m, 1, np.inf, np.nan], [m, m, -m, 2, -np.inf, 1],
                                               [-m, m, 0, 3, 1, 1])]
    model, feeds = float_model(B.ADD_N, feeds)
    (status, theirs), = litert_batch.run_many([(dump(model), feeds)])
    assert status == "ok", theirs
    np.testing.assert_array_equal(theirs[0], [0, m, 0, 6, np.nan, np.nan])
    for reference in (False, True):
        np.testing.assert_array_equal(run_ours(model, feeds, reference)[1], theirs[0])


# ------------------------------------------------------------------------------------------------
# extreme inputs of QUANTIZE, NaN in max-like ops, refusals (all measured against litert)

def _quantize_model(shape, dtype, scale, zp, dim=0):
    b = ModelBuilder()
    x = b.input("x", shape)
    y = b.tensor("y", shape, dtype, quantization=q(scale, zp, dim))
    b.op(B.QUANTIZE, [x], [y])
    b.output(y)
    return update_versions(b.build())


QUANTIZE_EXTREMES = [np.nan, np.inf, -np.inf, 3e38, -3e38, 2.0 ** 31, -2.0 ** 31, 2147483520.0, -2147483520.0,
                     2147483392.0, -2147483392.0, 1e10, -1e10, 1e9, -1e9, 40000.0, -40000.0, 200.0, -2.5]
QUANTIZE_CONFIGS = ([(np.int8, 1.0, z) for z in (-128, -5, 0, 127)] + [(np.uint8, 1.0, z) for z in (0, 7, 255)]
                    + [(np.int16, 1.0, z) for z in (-32768, -129, -128, 0, 9, 256, 32767)]
                    + [(np.int8, 0.01, -128), (np.int8, 1e-30, 0)])


def test_quantize_nan_inf_and_out_of_range_equal_litert():
    """x86 converts NaN / ±inf / values outside int32 to INT32_MIN, then adds the zero point with
    int32 wrap-around, then clamps: NaN gives the minimum for zp >= 0, the MAXIMUM for zp < 0.
    15 values per tensor: 8 in litert's vector block, 7 in its scalar tail; per channel too."""
    from workbench import dump

    jobs, runs = [], []
    for dt, scale, zp in QUANTIZE_CONFIGS:
        for shape, model in (((15,), _quantize_model((15,), dt, scale, zp)),
                             ((15, 2), _quantize_model((15, 2), dt, [scale, scale * 2], [zp, zp], 1))):
            for v in QUANTIZE_EXTREMES:
                feeds = [np.full(shape, v, np.float32)]
                jobs.append((dump(model), feeds))
                runs.append((f"{np.dtype(dt)} scale {scale} zp {zp} shape {shape} x {v}", model, feeds))
    seen = set()
    for (what, model, feeds), (status, theirs) in zip(runs, litert_batch.run_many(jobs)):
        assert status == "ok", (what, theirs)
        seen.update((what.split()[0], int(t)) for t in theirs[0].reshape(-1))
        for reference in (False, True):
            np.testing.assert_array_equal(run_ours(model, feeds, reference)[1], theirs[0], err_msg=what)
    assert {("int8", -128), ("int8", 127), ("uint8", 0), ("int16", -32768), ("int16", 32767)} <= seen


def _nan_inf_array(rng, shape, p):
    x = rng.integers(-5, 6, shape).astype(np.float32)
    u = rng.random(shape)
    x[u < p] = np.nan
    x[(u >= p) & (u < 2 * p)] = np.inf
    x[(u >= 2 * p) & (u < 3 * p)] = -np.inf
    return x


def _nan_cases():
    import workbench.schema as s

    rng = np.random.default_rng(7)
    cases = []
    for shape, axes in [((7,), [0]), ((3, 5), [0]), ((3, 5), [1]), ((3, 5), [0, 1]), ((2, 3, 4), [0, 2]),
                        ((2, 3, 4), [1]), ((2, 3, 4), [2, 0]), ((4, 9), [1]), ((9, 4), [0])]:
        out = tuple(d for i, d in enumerate(shape) if i not in [a % len(shape) for a in axes]) or (1,)
        for op, extreme in (("REDUCE_MAX", -np.inf), ("REDUCE_MIN", np.inf)):
            for t in range(5):
                x = _nan_inf_array(rng, shape, 0.1 * (t % 3)) if t < 4 else np.full(shape, extreme, np.float32)
                if t == 3:
                    x.reshape(-1)[-1] = np.nan          # a NaN last
                cases.append(float_model(getattr(B, op), [x], [np.array(axes, np.int32)],
                                         s.ReducerOptions(keep_dims=False), out))
    for c in (1, 4, 9):
        for k in ((1, 2), (2, 2), (3, 3)):
            for t in range(3):
                x = _nan_inf_array(rng, (1, 4, 6, c), 0.1 * (t + 1))
                if t == 2:
                    x[0, :2, :3, :] = np.nan            # a window of NaNs only
                cases.append(float_model(B.MAX_POOL_2D, [x], (), s.Pool2DOptions(
                    padding=V, stride_h=1, stride_w=1, filter_height=k[0], filter_width=k[1]),
                    (1, 4 - k[0] + 1, 6 - k[1] + 1, c)))
    for op in ("RELU", "RELU6", "SIGN"):
        cases.append(float_model(getattr(B, op), [_nan_inf_array(rng, (37,), 0.2)]))
    return cases


def test_nan_in_max_min_ops_equals_litert():
    """REDUCE_MAX/MIN: a NaN replaces the running value and the next value replaces a NaN;
    MAX_POOL_2D: a NaN never wins; RELU, RELU6, SIGN: NaN stays NaN (fast and reference)."""
    from workbench import dump

    cases = _nan_cases()
    nans = 0
    for (model, feeds), (status, theirs) in zip(cases, litert_batch.run_many([(dump(m), f) for m, f in cases])):
        assert status == "ok", theirs
        nans += int(np.isnan(theirs[0]).sum())
        for reference in (False, True):
            np.testing.assert_array_equal(run_ours(model, feeds, reference)[1], theirs[0])
    assert nans > 20


def test_concatenation_with_a_fused_activation_is_refused_as_litert():
    import workbench.schema as s
    from workbench import dump

    jobs = []
    for dt in (np.float32, np.int8, np.uint8, np.int16, np.int32):
        for act in (0, 1, 3, 4):
            b = ModelBuilder()
            quant = {"quantization": q(0.5, 0)} if dt in (np.int8, np.uint8, np.int16) else {}
            x0, x1 = b.input("a", (2, 3), dt, **quant), b.input("b", (2, 3), dt, **quant)
            y = b.tensor("y", (4, 3), dt, **quant)
            b.op(B.CONCATENATION, [x0, x1], [y], s.ConcatenationOptions(axis=0, fused_activation_function=act))
            b.output(y)
            jobs.append((update_versions(b.build()), [np.ones((2, 3), dt), np.zeros((2, 3), dt)], act))
    results = litert_batch.run_many([(dump(m), f) for m, f, _ in jobs])
    for (model, feeds, act), (status, theirs) in zip(jobs, results):
        assert status == ("ok" if act == 0 else "error"), theirs
        for reference in (False, True):
            kind, ours = run_ours(model, feeds, reference)
            if act:
                assert kind == "refused" and "fused activation" in ours
            else:
                np.testing.assert_array_equal(ours, theirs[0])


def test_float_floor_div_by_zero_fails_the_invoke_as_litert():
    from workbench import dump

    for zero in (0.0, -0.0):
        model, feeds = float_model(B.FLOOR_DIV, [np.array([1.0, 2.0, 3.0], np.float32),
                                                 np.array([1.0, zero, 2.0], np.float32)])
        (status, theirs), = litert_batch.run_many([(dump(model), feeds)])
        assert status == "error" and "Division by 0" in theirs
        for reference in (False, True):
            with pytest.raises(KernelError, match=r"FLOOR_DIV \(node 0\): division by zero"):
                run_ours(model, feeds, reference)

