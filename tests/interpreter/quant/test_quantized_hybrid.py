"""Hybrid ("dynamic range") kernels, bitwise: float32 activations, int8 weights, float32 outputs.

FULLY_CONNECTED (per-tensor / per-channel weights, symmetric / asymmetric input rows, keep_num_dims,
no bias), CONV_2D (TFLite's per-tensor and per-channel paths), DEPTHWISE_CONV_2D and BATCH_MATMUL
(constant int8 rhs), each run three ways on tiny one-op models built in code:

  * our fast kernel vs our plain numpy reference: every float bit equal;
  * our fast kernel vs ai-edge-litert's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES, in a
    child process): every float bit equal (compared as uint32 words);
  * inputs carry designed rows: a row whose largest magnitude is exactly 127 (symmetric) or whose
    range is exactly [−128, 127] / [−28, 227] (asymmetric) quantizes with scale 1, so values such as
    2.5 and 0.49999997 land exactly on or next to rounding ties — in the first 8·⌊K/8⌋ values
    (litert's NEON-style rounding) and in the tail (std::round).

The converter-made ``sample_models/hybrid_fc_conv.tflite`` runs too.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

import litert_runner
import litert_session
import quantized_cases
from quantized_cases import assert_same, litert_outputs, run_ours
from workbench import dump
from workbench.errors import UnsupportedOpError
from workbench.interpreter import Interpreter, quant
from workbench.interpreter.fast import requantize
from workbench.schema import (
    ActivationFunctionType as Act, BatchMatMulOptions, BuiltinOperator as B, Conv2DOptions, DepthwiseConv2DOptions,
    FullyConnectedOptions, ModelBuilder, Padding,
)
from workbench.versioning import update_versions

S, V = Padding.SAME, Padding.VALID
SAMPLE = Path(__file__).resolve().parents[3] / "sample_models" / "hybrid_fc_conv.tflite"
TIES = np.float32([2.5, -2.5, 0.49999997, -0.49999997, 1.5, -0.5, 3.5, 0.5])


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(scale, zp, dim=0):
    scale = np.atleast_1d(scale).tolist()
    return {"scale": scale, "zero_point": [0] * len(scale) if zp is None else zp, "quantized_dimension": dim}


def window_out(padding, size, k, s, d=1):
    eff = (k - 1) * d + 1
    return -(-size // s) if padding == S else (size - eff) // s + 1


def tie_rows(x2d: np.ndarray, asymmetric: bool) -> None:
    """Make rows 0 (and 1) of ``x2d`` quantize with scale 1 and put rounding ties in the NEON part
    (the first 8·⌊K/8⌋ values) and in the tail."""
    rows, k = x2d.shape
    n_vec = (k // 8) * 8
    layouts = [(-128.0, 127.0), (-28.0, 227.0)] if asymmetric else [(-127.0, 100.0), (-5.0, 127.0)]
    for r, (lo, hi) in enumerate(layouts[:rows]):
        x2d[r] = np.clip(x2d[r], lo, hi)
        if k >= 2:
            x2d[r, 0], x2d[r, 1] = lo, hi
        vec = slice(2, min(n_vec, 10))
        x2d[r, vec] = TIES[: max(0, vec.stop - vec.start)]
        tail = k - n_vec
        if tail:
            x2d[r, n_vec:] = TIES[np.arange(tail) % len(TIES)]


def float_input(rng, shape, asymmetric: bool, scale: float = 3.0) -> np.ndarray:
    x = (rng.uniform(-1.0, 1.0, shape) * scale).astype(np.float32)
    tie_rows(x.reshape(-1, shape[-1]) if len(shape) > 1 else x.reshape(1, -1), asymmetric)
    return x


# ------------------------------------------------------------------------------------------------
# case builders


def fc_h(x_shape, units, asym=False, per_channel=False, act=Act.NONE, keep=False, bias=True, zero=False, k_big=None,
         weights=None):
    def build(name):
        rng = rng_for(name)
        k = x_shape[-1]
        b = ModelBuilder()
        w_s = rng.uniform(0.001, 0.01, units) if per_channel else np.array([0.004])
        x = b.input("x", x_shape)
        w = rng.integers(-127, 128, (units, k)) if weights is None else weights(rng, units, k)
        wt = b.constant("w", w.astype(np.int8), quantization=q(w_s, None, 0))
        ins = [x, wt]
        if bias:
            ins.append(b.constant("bias", rng.uniform(-2, 2, units).astype(np.float32)))
        out = tuple(x_shape[:-1]) + (units,) if keep else (int(np.prod(x_shape)) // k, units)
        y = b.tensor("y", out)
        b.op(B.FULLY_CONNECTED, ins, [y], FullyConnectedOptions(fused_activation_function=act, keep_num_dims=keep,
                                                                asymmetric_quantize_inputs=asym))
        b.output(y)
        xv = np.zeros(x_shape, np.float32) if zero else float_input(rng, x_shape, asym)
        return b, {"x": xv}
    return build


def conv_h(x_shape, w_shape, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE, per_channel=True,
           equal_scales=False):
    def build(name):
        rng = rng_for(name)
        o = w_shape[0]
        b = ModelBuilder()
        if equal_scales:
            w_s = np.full(o, 0.006)
        else:
            w_s = rng.uniform(0.001, 0.01, o) if per_channel else np.array([0.006])
        x = b.input("x", x_shape)
        w = b.constant("w", rng.integers(-127, 128, w_shape).astype(np.int8), quantization=q(w_s, None, 0))
        bias = b.constant("bias", rng.uniform(-1, 1, o).astype(np.float32))
        oh = window_out(padding, x_shape[1], w_shape[1], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], w_shape[2], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, o))
        b.op(B.CONV_2D, [x, w, bias], [y], Conv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1], fused_activation_function=act,
            dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, x_shape) * 3).astype(np.float32)
        xv.reshape(x_shape[0], -1)[0, :8] = TIES
        return b, {"x": xv}
    return build


def depthwise_h(x_shape, k, mult=1, stride=(1, 1), padding=S, dilation=(1, 1), act=Act.NONE,
                option_multiplier=None):
    def build(name):
        rng = rng_for(name)
        c = x_shape[3]
        co = c * mult
        b = ModelBuilder()
        w_s = rng.uniform(0.001, 0.02, co)
        x = b.input("x", x_shape)
        w = b.constant("w", rng.integers(-127, 128, (1, k[0], k[1], co)).astype(np.int8), quantization=q(w_s, None, 3))
        bias = b.constant("bias", rng.uniform(-1, 1, co).astype(np.float32))
        oh = window_out(padding, x_shape[1], k[0], stride[0], dilation[0])
        ow = window_out(padding, x_shape[2], k[1], stride[1], dilation[1])
        y = b.tensor("y", (x_shape[0], oh, ow, co))
        b.op(B.DEPTHWISE_CONV_2D, [x, w, bias], [y], DepthwiseConv2DOptions(
            padding=padding, stride_h=stride[0], stride_w=stride[1],
            depth_multiplier=mult if option_multiplier is None else option_multiplier,
            fused_activation_function=act, dilation_h_factor=dilation[0], dilation_w_factor=dilation[1]))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, x_shape) * 3).astype(np.float32)
        xv.reshape(x_shape[0], -1)[0, :8] = TIES
        return b, {"x": xv}
    return build


def bmm_h(a_shape, b_shape, adj_x=False, adj_y=False, asym=False, per_channel=False):
    def build(name):
        rng = rng_for(name)
        n = b_shape[-2] if adj_y else b_shape[-1]
        w_s = rng.uniform(0.001, 0.01, n) if per_channel else np.array([0.004])
        b = ModelBuilder()
        x = b.input("x", a_shape)
        w = b.constant("w", rng.integers(-127, 128, b_shape).astype(np.int8),
                       quantization=q(w_s, None, len(b_shape) - (2 if adj_y else 1)))
        aa = np.zeros(a_shape)
        bb = np.zeros(b_shape)
        out = np.matmul(np.swapaxes(aa, -1, -2) if adj_x else aa, np.swapaxes(bb, -1, -2) if adj_y else bb).shape
        y = b.tensor("y", out)
        b.op(B.BATCH_MATMUL, [x, w], [y], BatchMatMulOptions(adj_x=adj_x, adj_y=adj_y,
                                                             asymmetric_quantize_inputs=asym))
        b.output(y)
        xv = (rng.uniform(-1.0, 1.0, a_shape) * 3).astype(np.float32)
        rows = np.swapaxes(xv, -1, -2) if adj_x else xv
        tie = rows.reshape(-1, rows.shape[-1]).copy()
        tie_rows(tie, asym)
        rows[...] = tie.reshape(rows.shape)
        return b, {"x": xv}
    return build


def all_positive_weights(rng, units, k):
    w = np.full((units, k), 127)
    w[1] = -127
    w[2:] = rng.integers(-127, 128, (units - 2, k))
    return w


CASES = {
    "fc_symmetric": fc_h((4, 37), 12),
    "fc_symmetric_relu": fc_h((3, 24), 7, act=Act.RELU),
    "fc_asymmetric": fc_h((4, 37), 12, asym=True),
    "fc_asymmetric_relu6": fc_h((5, 19), 6, asym=True, act=Act.RELU6),
    "fc_per_channel": fc_h((4, 40), 10, per_channel=True),
    "fc_per_channel_asymmetric_n1to1": fc_h((3, 21), 5, asym=True, per_channel=True, act=Act.RELU_N1_TO_1),
    "fc_keep_num_dims": fc_h((2, 3, 16), 5, asym=True, keep=True),
    "fc_flatten_no_bias": fc_h((2, 3, 8), 4, bias=False),
    "fc_short_rows": fc_h((6, 5), 3, asym=True),
    "fc_zero_input_gives_bias": fc_h((2, 9), 4, act=Act.RELU, zero=True),
    "fc_big_k_row_sums_wrap": fc_h((2, 4096 + 8 + 3), 4, asym=True, weights=all_positive_weights),
    "conv_per_channel_3x3_relu": conv_h((2, 7, 6, 5), (6, 3, 3, 5), act=Act.RELU),
    "conv_per_tensor_3x3": conv_h((2, 7, 6, 5), (6, 3, 3, 5), per_channel=False),
    "conv_equal_channel_scales_is_per_tensor": conv_h((1, 6, 5, 4), (3, 3, 3, 4), equal_scales=True),
    "conv_per_channel_valid_stride_relu6": conv_h((1, 9, 8, 3), (5, 3, 2, 3), stride=(2, 1), padding=V, act=Act.RELU6),
    "conv_per_channel_dilation_n1to1": conv_h((1, 9, 8, 3), (4, 3, 3, 3), dilation=(2, 2), act=Act.RELU_N1_TO_1),
    "conv_per_tensor_dilation": conv_h((1, 9, 8, 3), (4, 3, 3, 3), dilation=(2, 2), per_channel=False),
    "conv_1x1_per_channel": conv_h((2, 5, 5, 8), (7, 1, 1, 8)),
    "conv_1x1_per_tensor": conv_h((2, 5, 5, 8), (8, 1, 1, 8), per_channel=False),
    "depthwise_3x3_relu": depthwise_h((2, 7, 6, 5), (3, 3), act=Act.RELU),
    "depthwise_multiplier_3_valid": depthwise_h((1, 9, 8, 3), (3, 2), mult=3, stride=(2, 1), padding=V,
                                                act=Act.RELU6),
    "depthwise_dilation_multiplier_2": depthwise_h((1, 9, 8, 6), (3, 3), mult=2, dilation=(2, 2)),
    "depthwise_stride2_n1to1": depthwise_h((2, 6, 6, 9), (3, 3), stride=(2, 2), act=Act.RELU_N1_TO_1),
    "bmm_symmetric": bmm_h((3, 17), (17, 5)),
    "bmm_asymmetric": bmm_h((3, 17), (17, 5), asym=True),
    "bmm_batched_per_channel": bmm_h((2, 3, 17), (17, 6), asym=True, per_channel=True),
    "bmm_batched_rhs": bmm_h((2, 4, 9), (2, 9, 6), asym=True),
    "bmm_adj_x_adj_y_per_channel": bmm_h((2, 9, 4), (2, 6, 9), adj_x=True, adj_y=True, asym=True, per_channel=True),
    "bmm_adj_x_symmetric": bmm_h((2, 9, 4), (9, 6), adj_x=True, per_channel=True),
    "bmm_folded_rhs_batch": bmm_h((2, 3, 4, 9), (1, 9, 5), asym=True),
    "bmm_rank2_lhs_batched_rhs": bmm_h((4, 9), (3, 9, 5), asym=True, per_channel=True),
}


def build_case(name):
    return quantized_cases.build(CASES, name)


def assert_bitwise(ours, theirs, what):
    assert_same(ours, theirs, what, dtype=np.float32)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_hybrid_kernels_equal_references(case):
    model, inputs = build_case(case)
    assert_bitwise(run_ours(model, inputs), run_ours(model, inputs, reference=True), case)


@pytest.fixture(scope="session")
def litert_hybrid_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_hybrid"), CASES, build_case, workers=2)


@pytest.mark.parametrize("case", sorted(CASES))
def test_hybrid_kernels_bitwise_with_litert(case, litert_hybrid_results):
    model, inputs = build_case(case)
    theirs = litert_outputs(litert_hybrid_results[case])
    assert_bitwise(run_ours(model, inputs), theirs, case)


# ------------------------------------------------------------------------------------------------
# what the cases exercise, and the facts behind them


def test_row_rounding_is_neon_style_then_std_round():
    """0.49999997·1 + 0.5 rounds to 1.0 in float32, so the vector part gives 1 where std::round gives 0."""
    x = np.zeros((1, 11), np.float32)
    x[0, 0] = 127.0
    x[0, 1] = x[0, 9] = np.float32(0.49999997)
    x[0, 2] = x[0, 10] = np.float32(-2.5)
    qv, sf = quant.symmetric_quantize_rows(x)
    assert sf[0] == 1.0
    assert qv[0, 1] == 1 and qv[0, 9] == 0            # first 8 values vs the tail
    assert qv[0, 2] == -3 and qv[0, 10] == -3         # true ties: away from zero either way
    qa, sa, za = quant.asymmetric_quantize_rows(np.float32([[-28.0, 227.0, 0.5, 0.49999997] + [1.0] * 4 +
                                                            [0.49999997]]))
    assert sa[0] == 1.0 and za[0] == -100
    assert qa[0, 3] == -99 and qa[0, 8] == -100


def test_compiled_and_python_quantizers_equal_the_reference():
    rng = np.random.default_rng(0)
    for trial in range(60):
        k = int(rng.integers(1, 40))
        x = (rng.uniform(-3, 5, (3, k)) * rng.choice([1e-3, 1.0, 100.0])).astype(np.float32)
        if trial % 4 == 0:
            tie_rows(x, trial % 8 == 0)
        if trial % 9 == 0:
            x[1] = 0
        for asym in (False, True):
            want = quant.asymmetric_quantize_rows(x) if asym else quant.symmetric_quantize_rows(x) + (np.zeros(3),)
            for fn in (requantize.quantize_rows_jit, requantize.quantize_rows_jit.py_func):
                qv, sf, zp = np.empty((3, k), np.int8), np.empty(3, np.float32), np.empty(3, np.int32)
                fn(x, asym, qv, sf, zp)
                assert np.array_equal(qv, want[0]) and np.array_equal(sf.view(np.uint32), want[1].view(np.uint32))
                assert np.array_equal(zp, want[2])


def constant(model, t, dtype, shape):
    return np.frombuffer(bytes(model.buffers[model.subgraphs[0].tensors[t].buffer].data), dtype).reshape(shape)


def test_big_k_case_really_wraps_the_row_sums():
    model, _ = build_case("fc_big_k_row_sums_wrap")
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    w = constant(model, 1, np.int8, (4, 4107))
    assert w[0].sum() == 4107 * 127 and d.row_sums[0] == -2699          # wrapped by the int16 lanes
    assert np.array_equal(d.row_sums, quant.sse_row_sums(w)) and not np.array_equal(d.row_sums, w.sum(axis=1))


def test_zero_input_case_is_all_zero():
    _, inputs = build_case("fc_zero_input_gives_bias")
    assert not np.any(inputs["x"])


def test_versions_are_the_hybrid_ones():
    want = {"fc_symmetric": 3, "fc_asymmetric": 9, "fc_per_channel": 12, "fc_per_channel_asymmetric_n1to1": 12,
            "fc_keep_num_dims": 5, "conv_per_channel_3x3_relu": 5, "conv_per_tensor_3x3": 2,
            "conv_equal_channel_scales_is_per_tensor": 5, "depthwise_3x3_relu": 6, "depthwise_dilation_multiplier_2": 6,
            "bmm_symmetric": 1, "bmm_asymmetric": 4}
    for case, version in want.items():
        model, _ = build_case(case)
        assert model.operator_codes[0].version == version, case


def test_hybrid_opdata_shows_the_run_time_quantization():
    model, inputs = build_case("fc_asymmetric")
    it = Interpreter(model=model)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], inputs["x"])
    it.invoke()
    _, kname, d, _ = it.prepared()[0]
    assert "exact" in kname and d.asymmetric_quantize_inputs and not d.per_channel
    qv, sf, zp = quant.asymmetric_quantize_rows(inputs["x"])
    path = it._sg(0).fast[0]            # the speed layer's buffers keep the last run-time quantization
    assert np.array_equal(path.input_quantized, qv) and np.array_equal(path.scaling_factors, sf)
    assert np.array_equal(path.input_offsets, zp)
    assert np.array_equal(path.product_scales,
                          np.broadcast_to((sf[:, None] * d.filter_scale).astype(np.float32), (4, 12)))
    assert d.row_sums.shape == (12,)
    model, _ = build_case("conv_equal_channel_scales_is_per_tensor")
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    assert not d.per_channel and not d.asymmetric_quantize_inputs      # equal scales: TFLite's per-tensor path
    model, _ = build_case("depthwise_multiplier_3_valid")
    it = Interpreter(model=model)
    it.allocate_tensors()
    assert it.prepared()[0][2].vector_channels == 8                     # 9 channels: 8 in the 4-wide loop


def test_sample_model_runs_bitwise_like_litert(tmp_path):
    """Converter-made dynamic-range model: per-channel hybrid CONV_2D (v5), MEAN, two per-channel
    asymmetric hybrid FULLY_CONNECTED (v12).  (Only the fast kernels: ``reference=True`` would also
    switch the float MEAN to its float64 reference, which is not litert's float32 sum.)"""
    result = litert_runner.run(SAMPLE, tmp_path / "in.npz", tmp_path / "out.npz", seed=20240607)
    assert result.ok, result.describe()
    with np.load(tmp_path / "in.npz") as z:
        x = z["input_0"]
    it = Interpreter(model_path=str(SAMPLE))
    it.allocate_tensors()
    kinds = [type(d).__name__ for _, _, d, _ in it.prepared()]
    assert kinds.count("FullyConnectedHybridData") == 2 and "Conv2DHybridData" in kinds
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    assert_bitwise([it.get_tensor(it.get_output_details()[0]["index"])], [result.outputs["output_0"]],
                   "hybrid_fc_conv")


# ------------------------------------------------------------------------------------------------
# what is refused (typed errors, never garbage)


def _allocate(builder):
    it = Interpreter(model=update_versions(builder.build()))
    it.allocate_tensors()
    return it


def test_bmm_with_two_batch_dims_is_refused_because_litert_misindexes_it():
    builder, inputs = bmm_h((2, 3, 4, 9), (9, 5), asym=True)("bmm_two_batch_dims")
    with pytest.raises(UnsupportedOpError, match="more than one batch dimension"):
        _allocate(builder)
    # litert's answer is not the product of the quantized operands (half of the rows use another
    # row's scaling factor): our reference on the same data differs from it
    model = update_versions(builder.build())
    theirs = litert_session.run_calls(dump(model), [("invoke", [inputs["x"]])])[0][0]
    a = inputs["x"].reshape(-1, 9)
    qv, sf, zp = quant.asymmetric_quantize_rows(a)
    w = constant(model, 1, np.int8, (9, 5))
    exact = (((qv.astype(np.int64) - zp[:, None]) @ w.astype(np.int64)).astype(np.float32)
             * (sf * np.float32(0.004)).astype(np.float32)[:, None])
    assert np.abs(theirs.reshape(-1, 5) - exact).max() > 1e-3


def test_per_tensor_hybrid_depthwise_version_4_is_not_registered():
    b = ModelBuilder()
    x = b.input("x", (1, 5, 5, 4))
    w = b.constant("w", np.ones((1, 3, 3, 4), np.int8), quantization=q([0.01], None, 3))
    y = b.tensor("y", (1, 5, 5, 4))
    b.op(B.DEPTHWISE_CONV_2D, [x, w, -1], [y], DepthwiseConv2DOptions(padding=S, stride_h=1, stride_w=1,
                                                                       depth_multiplier=1))
    b.output(y)
    model = update_versions(b.build())
    assert model.operator_codes[0].version == 4
    with pytest.raises(UnsupportedOpError, match="version 4 is not registered"):
        Interpreter(model=model).allocate_tensors()


def test_hybrid_depthwise_needs_the_depth_multiplier_option():
    builder, _ = depthwise_h((1, 5, 5, 3), (3, 3), mult=2, option_multiplier=1)("dm")
    with pytest.raises(UnsupportedOpError, match="depth_multiplier"):
        _allocate(builder)


def test_grouped_hybrid_conv_is_refused():
    # with one filter scale only (distinct per-channel scales run: tests/interpreter/quant/test_quantized_sweep_regressions.py)
    builder, _ = conv_h((1, 5, 5, 6), (4, 3, 3, 3), per_channel=False)("grouped")
    with pytest.raises(UnsupportedOpError, match="grouped hybrid"):
        _allocate(builder)


def test_hybrid_fc_refuses_tanh_and_weight_zero_points():
    builder, _ = fc_h((2, 8), 3, act=Act.TANH)("tanh")
    with pytest.raises(UnsupportedOpError, match="TANH"):
        _allocate(builder)
    b = ModelBuilder()
    x = b.input("x", (2, 8))
    w = b.constant("w", np.ones((3, 8), np.int8), quantization=q([0.01], [3], 0))
    y = b.tensor("y", (2, 3))
    b.op(B.FULLY_CONNECTED, [x, w, -1], [y], FullyConnectedOptions())
    b.output(y)
    with pytest.raises(UnsupportedOpError, match="zero point"):
        _allocate(b)


def test_hybrid_fc_needs_constant_weights():
    b = ModelBuilder()
    x = b.input("x", (2, 8))
    w = b.input("w", (3, 8), np.int8, quantization=q([0.01], None, 0))
    y = b.tensor("y", (2, 3))
    b.op(B.FULLY_CONNECTED, [x, w, -1], [y], FullyConnectedOptions())
    b.output(y)
    with pytest.raises(UnsupportedOpError, match="constant"):
        _allocate(b)
