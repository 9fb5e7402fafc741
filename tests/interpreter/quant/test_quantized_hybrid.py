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

from pathlib import Path

import numpy as np
import pytest

from helpers import litert_runner, litert_session
from helpers.quantized_cases import assert_same, litert_outputs, run_ours
from helpers.quantized_hybrid_cases import CASES, S, bmm_h, build_case, conv_h, depthwise_h, fc_h, q, tie_rows
from workbench import dump
from workbench.errors import UnsupportedOpError
from workbench.interpreter import Interpreter, quant
from workbench.interpreter.fast import requantize
from workbench.schema import (
    ActivationFunctionType as Act,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    DepthwiseConv2DOptions,
    FullyConnectedOptions,
    ModelBuilder,
)
from workbench.versioning import update_versions

SAMPLE = Path(__file__).resolve().parents[3] / "sample_models" / "hybrid_fc_conv.tflite"


# ------------------------------------------------------------------------------------------------
# case builders


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
    # with one filter scale only
    # (distinct per-channel scales run: tests/interpreter/quant/test_quantized_sweep_regressions.py)
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
