"""explain() under ``Interpreter(variant="reference")``: every explainer follows TFLite's reference kernels.

For every explainer of the registry (each OpData class, and each op of a shared OpData) a tiny one-op model of
the kernel test modules is prepared under the reference variant; its node must carry that OpData, and the
explanation must equal the kernel at every element where the two variants differ (up to a cap) and at a
spread of other elements.  SOFTMAX / LOG_SOFTMAX on 8-bit inputs take the gemmlowp fixed-point kernels
(``SoftmaxFixedPointData``, ``LogSoftmaxFixedPointData``), which only the reference variant prepares; rows on
which those differ from litert's float table are checked element by element.  ``SoftmaxInt8Data`` and
``LogSoftmaxQuantizedData`` (the float table) are litert-x86 only, so they are not met here.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from helpers import litert_runner
from helpers import quantized_elementwise_cases as elementwise_cases
from workbench.interpreter import Interpreter
from workbench.interpreter.explain import explain
from workbench.interpreter.explain.registry import _BY_OP, _EXPLAINERS
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder, ShapeOptions, SoftmaxOptions, TensorType
from workbench.versioning import update_versions

SAMPLES = Path(__file__).resolve().parents[3] / "sample_models"
LITERT_ONLY = {"SoftmaxInt8Data", "LogSoftmaxQuantizedData"}     # the float-table kernels: variant litert-x86 only
SPREAD = 12                   # elements explained per node besides those where the variants differ
DIFFERING = 40                # at most this many of those

# (OpData class name, op) → (case module: tests/helpers/quantized_<module>_cases.py, case)
CASES = {
    ("AbsData", "ABS"): [("elementwise", "abs_int8")],
    ("ArgData", "ARG_MAX"): [("shape_ops", "arg_max_i8_ties")],
    ("ArgData", "ARG_MIN"): [("shape_ops", "arg_min_u8_ties")],
    ("BatchMatMulHybridData", "BATCH_MATMUL"): [("hybrid", "bmm_asymmetric")],
    ("BatchMatMulQuantizedData", "BATCH_MATMUL"): [("int16_matrix", "bmm8_const_rhs")],
    ("BinaryInt8Data", "ADD"): [("elementwise", "add_int8_overflow_scalar_broadcast")],
    ("BinaryInt8Data", "MUL"): [("elementwise", "mul_int8_multiplier_above_one")],
    ("BinaryInt8Data", "SUB"): [("ops", "sub_relu6")],
    ("BinaryQuantizedData", "ADD"): [("elementwise", "add_uint8_overflow_scalar_broadcast")],
    ("BinaryQuantizedData", "MUL"): [("elementwise", "mul_uint8_overflow_scalar_broadcast")],
    ("BinaryQuantizedData", "SUB"): [("elementwise", "sub_int16_output_multiplier_2_pow_15_runs_of_22")],
    ("Conv2DHybridData", "CONV_2D"): [("hybrid", "conv_per_channel_valid_stride_relu6")],
    ("Conv2DInt16Data", "CONV_2D"): [("int16_matrix", "conv16_int32_3x3")],
    ("Conv2DInt8Data", "CONV_2D"): [("ops", "conv_3x3_valid_stride2")],
    ("Conv2DUint8Data", "CONV_2D"): [("uint8_matrix", "conv_2x2_valid_stride2")],
    ("DepthwiseConv2DHybridData", "DEPTHWISE_CONV_2D"): [("hybrid", "depthwise_stride2_n1to1")],
    ("DepthwiseConv2DInt16Data", "DEPTHWISE_CONV_2D"): [("int16_matrix", "dw16_no_bias")],
    ("DepthwiseConv2DInt8Data", "DEPTHWISE_CONV_2D"): [("ops", "depthwise_multiplier_3")],
    ("DepthwiseConv2DUint8Data", "DEPTHWISE_CONV_2D"): [("uint8_matrix", "depthwise_multiplier_3_valid")],
    ("DequantizeData", "DEQUANTIZE"): [("ops", "dequantize_int8"), ("elementwise", "dequantize_uint8")],
    ("DivQuantizedData", "DIV"): [("elementwise", "div_int16")],
    ("ElementwiseData", "MAXIMUM"): [("elementwise", "maximum_int16")],
    ("ElementwiseData", "MINIMUM"): [("elementwise", "minimum_int8")],
    ("FullyConnectedHybridData", "FULLY_CONNECTED"): [("hybrid", "fc_big_k_row_sums_wrap")],
    ("FullyConnectedInt16Data", "FULLY_CONNECTED"): [("int16_matrix", "fc16_ties_ruy")],
    ("FullyConnectedInt8Data", "FULLY_CONNECTED"): [("ops", "fc_no_bias")],
    ("FullyConnectedUint8Data", "FULLY_CONNECTED"): [("uint8_matrix", "fc_no_bias")],
    ("HardSwishData", "HARD_SWISH"): [("ops", "hard_swish_small_range")],
    ("L2NormalizationQuantizedData", "L2_NORMALIZATION"): [("shape_ops", "l2norm_i8_special_rows")],
    ("LeakyReluQuantizedData", "LEAKY_RELU"): [("elementwise", "leaky_relu_int8")],
    ("LogSoftmaxFixedPointData", "LOG_SOFTMAX"): [("elementwise", "log_softmax_uint8"),
                                                  ("elementwise", "log_softmax_int8")],
    ("LogisticInt16Data", "LOGISTIC"): [("elementwise", "logistic_int16_pot")],
    ("LutData", "ELU"): [("elementwise", "elu_int8")],
    ("LutData", "EXP"): [("elementwise", "exp_int8")],
    ("LutData", "GELU"): [("elementwise", "gelu_int8")],
    ("LutData", "LOG"): [("elementwise", "log_int8")],
    ("LutData", "LOGISTIC"): [("ops", "logistic")],
    ("LutData", "RSQRT"): [("elementwise", "rsqrt_int16")],
    ("LutData", "TANH"): [("ops", "tanh")],
    ("MeanQuantizedData", "MEAN"): [("shape_ops", "mean_i8_negative_hw_axes"), ("shape_ops", "mean_u8_hw_keep")],
    ("Pool2DQuantizedData", "AVERAGE_POOL_2D"): [("ops", "avg_pool_valid_relu6")],
    ("Pool2DQuantizedData", "MAX_POOL_2D"): [("shape_ops", "max_pool_i16_valid")],
    ("PreluQuantizedData", "PRELU"): [("elementwise", "prelu_int16_alpha_per_channel")],
    ("QuantizeData", "QUANTIZE"): [("elementwise", "requantize_int8_ties"), ("elementwise", "requantize_uint8_to_int8"),
                                    ("ops", "quantize_float_to_int8"), ("elementwise", "quantize_float_to_uint8"),
                                    ("elementwise", "quantize_float_to_int16_zp")],
    ("ReduceData", "REDUCE_MAX"): [("shape_ops", "reduce_max_i16_v3")],
    ("ReduceData", "REDUCE_MIN"): [("shape_ops", "reduce_min_i16_v3")],
    ("ReduceProdData", "REDUCE_PROD"): [("shape_ops", "reduce_prod_i8_one_value")],
    ("ReluData", "RELU"): [("ops", "relu")],
    ("ReluData", "RELU6"): [("ops", "relu6")],
    ("ReluData", "RELU_0_TO_1"): [("elementwise", "relu_0_to_1_int8")],
    ("ReluData", "RELU_N1_TO_1"): [("elementwise", "relu_n1_to_1_int8")],
    ("ResizeBilinearInt8Data", "RESIZE_BILINEAR"): [("ops", "resize_bilinear_down_half_pixel")],
    ("ResizeBilinearUint8Data", "RESIZE_BILINEAR"): [("shape_ops", "resize_bilinear_u8_up"),
                                                    ("shape_ops", "resize_bilinear_u8_8x_kernel")],
    ("RsqrtInt8Data", "RSQRT"): [("elementwise", "rsqrt_int8")],
    ("SoftmaxFixedPointData", "SOFTMAX"): [("elementwise", "softmax_int8_to_int16"),
                                          ("elementwise", "softmax_uint8_to_int16"),
                                         ("elementwise", "softmax_uint8"), ("elementwise", "softmax_uint8_beta_zero"),
                                         ("elementwise", "softmax_int8_beta_huge")],
    ("SoftmaxInt16Data", "SOFTMAX"): [("elementwise", "softmax_int16_beta_negative")],
    ("SqrtQuantizedData", "SQRT"): [("elementwise", "sqrt_int8_high_zero_point")],
    ("SquaredDifferenceInt8Data", "SQUARED_DIFFERENCE"): [("elementwise", "squared_difference_int8_broadcast")],
    ("SumData", "SUM"): [("shape_ops", "sum_i8_ties"), ("shape_ops", "sum_i16_many_rows"),
                         ("shape_ops", "sum_u8_many_rows")],
    ("TanhInt16Data", "TANH"): [("elementwise", "tanh_int16_pot")],
    ("TransposeConvHybridData", "TRANSPOSE_CONV"): [("sweep_regressions", "tconv_hybrid_conv1d_like_stride_1x2")],
    ("TransposeConvQuantizedData", "TRANSPOSE_CONV"): [("int16_matrix", "tconv8_per_tensor_16ch")],
    ("TransposeConvUint8Data", "TRANSPOSE_CONV"): [("uint8_matrix", "transpose_conv_no_bias")],
    ("UnaryData", "NEG"): [("elementwise", "neg_int8")],
}


def run(model, inputs, variant) -> Interpreter:
    it = Interpreter(model=model, keep_intermediates=True, variant=variant)
    it.allocate_tensors()
    by_name = {d["name"]: d for d in it.get_input_details()}
    for name, value in inputs.items():
        it.set_tensor(by_name[name]["index"], value)
    it.invoke()
    return it


def differing(ref: np.ndarray, x86: np.ndarray) -> np.ndarray:
    """Flat indices where the two variants' outputs differ (floats bit for bit)."""
    if ref.shape != x86.shape:
        return np.zeros(0, np.int64)
    a, b = ref.reshape(-1), x86.reshape(-1)
    if a.dtype.kind == "f":
        a, b = a.view(np.uint8).reshape(a.size, -1), b.view(np.uint8).reshape(b.size, -1)
        return np.flatnonzero((a != b).any(axis=1))
    return np.flatnonzero(a != b)


def check_node(it: Interpreter, x86: Interpreter, node_index: int) -> int:
    """explain() agrees at the differing elements (capped) and at a spread of others; returns how many
    of the explained elements differ between the variants."""
    node = it.prepared()[node_index][0]
    out, out_x86 = it.get_tensor(node.outputs[0]), x86.get_tensor(node.outputs[0])
    diff = differing(out, out_x86)
    if len(diff) > DIFFERING:
        diff = diff[np.linspace(0, len(diff) - 1, DIFFERING).astype(int)]
    spread = np.unique(np.linspace(0, out.size - 1, min(SPREAD, out.size)).astype(int))
    for k in sorted(set(diff.tolist()) | set(spread.tolist())):
        e = explain(it, node_index, int(k))
        if e.kind == "not quantized" and e.by_hand is None:     # a float node of a sample model
            continue
        assert e.agrees, repr(e)
        assert e.steps and e.recipe, repr(e)
    return len(diff)


def params():
    return [pytest.param(cls, op, module, case, id=f"{cls}-{op}:{case}")
            for (cls, op), cases in sorted(CASES.items()) for module, case in cases]


@pytest.mark.parametrize("cls, op, module, case", params())
def test_explain_follows_the_reference_kernels(cls, op, module, case):
    mod = importlib.import_module(f"helpers.quantized_{module}_cases")
    model, inputs = mod.build_case(case)
    it, x86 = run(model, inputs, "reference"), run(model, inputs, "litert-x86")
    nodes = [n.index for n, _, d, _ in it.prepared() if type(d).__name__ == cls and n.op_name == op]
    assert nodes, f"{case}: no {op} node with {cls} under variant='reference'"
    for index in nodes:
        check_node(it, x86, index)


def test_every_explainer_has_a_reference_case():
    """The table above names every registered explainer (bar the litert-only float-table softmaxes) and the
    SHAPE / RANK selections, which the test below builds."""
    registered = {cls.__name__ for cls in _EXPLAINERS} - LITERT_ONLY
    by_op = {(cls.__name__, op) for op, cls in _BY_OP}
    assert registered <= {cls for cls, _ in CASES}, sorted(registered - {cls for cls, _ in CASES})
    assert by_op - set(CASES) == {("ShapeData", "SHAPE"), ("RankData", "RANK")}


@pytest.mark.parametrize("op", ["SHAPE", "RANK"])
def test_shape_and_rank_of_a_quantized_tensor(op):
    b = ModelBuilder()
    x = b.input("x", (2, 3, 4), np.int8, quantization=elementwise_cases.q(0.1, 3))
    if op == "SHAPE":
        y = b.tensor("y", (3,), np.int32)
        b.op(B.SHAPE, [x], [y], ShapeOptions(out_type=TensorType.INT32))
    else:
        y = b.tensor("y", (), np.int32)
        b.op(B.RANK, [x], [y])
    b.output(y)
    inputs = {"x": np.arange(24, dtype=np.int8).reshape(2, 3, 4)}
    model = update_versions(b.build())
    it, x86 = run(model, inputs, "reference"), run(model, inputs, "litert-x86")
    assert type(it.prepared()[0][2]).__name__ == ("ShapeData" if op == "SHAPE" else "RankData")
    check_node(it, x86, 0)


# ----------------------------------------------------------------------------------------------
# 8-bit SOFTMAX / LOG_SOFTMAX: rows where the fixed-point kernel and litert's float table disagree


ROWS = {   # name → (op, type, input (scale, zp), output (scale, zp), beta, row length, row of a seeded draw)
    "softmax_uint8": (B.SOFTMAX, np.uint8, (0.013, 128), (1 / 256, 0), 0.7, 10, 2712),
    "softmax_int8": (B.SOFTMAX, np.int8, (0.3, 3), (1 / 256, -128), 1.0, 64, 80),
    "log_softmax_uint8": (B.LOG_SOFTMAX, np.uint8, (0.013, 100), (16 / 256, 255), None, 64, 2633),
    "log_softmax_int8": (B.LOG_SOFTMAX, np.int8, (0.013, -20), (16 / 256, 127), None, 64, 2633),
}


def softmax_row_model(name):
    op, dt, qi, qo, beta, n, r = ROWS[name]
    info = np.iinfo(dt)
    row = np.random.default_rng(2).integers(info.min, info.max + 1, (3000, n)).astype(dt)[r]
    x = np.stack([row, row[::-1]])
    b = ModelBuilder()
    t = b.input("x", x.shape, dt, quantization=elementwise_cases.q(*qi))
    y = b.tensor("y", x.shape, dt, quantization=elementwise_cases.q(*qo))
    b.op(op, [t], [y], SoftmaxOptions(beta=beta) if beta is not None else None)
    b.output(y)
    return update_versions(b.build()), {"x": x}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_fixed_point_softmax_where_the_variants_differ(name):
    model, inputs = softmax_row_model(name)
    it, x86 = run(model, inputs, "reference"), run(model, inputs, "litert-x86")
    cls = "SoftmaxFixedPointData" if ROWS[name][0] == B.SOFTMAX else "LogSoftmaxFixedPointData"
    assert type(it.prepared()[0][2]).__name__ == cls
    assert check_node(it, x86, 0) > 0, "the row was chosen for an element the two variants round differently"
    out = it.get_tensor(it.prepared()[0][0].outputs[0])
    for k in range(out.size):          # every element of the two rows
        e = explain(it, 0, k)
        assert e.agrees, repr(e)
        assert "reference kernel" in e.recipe
        assert any(s.what == "exp in Q0.31" for s in e.steps) or any("diff_min" in s.what for s in e.steps)


def test_fixed_point_softmax_steps():
    model, inputs = softmax_row_model("softmax_int8")
    e = explain(run(model, inputs, "reference"), 0, int(np.argmax(inputs["x"][0])))     # the row maximum: kept
    whats = [s.what for s in e.steps]
    for step in ("row maximum", "× input multiplier → Q5.26", "exp in Q0.31", "sum of the exps (Q12.19)",
                 "reciprocal of the sum", "exp × reciprocal", "to steps of 2^−8"):
        assert step in whats, whats
    model, inputs = softmax_row_model("log_softmax_int8")
    e = explain(run(model, inputs, "reference"), 0, int(np.argmax(inputs["x"][0])))
    whats = [s.what for s in e.steps]
    for step in ("sum of the exps (Q12.19)", "log of the sum (Q5.26)", "cut-off in input units", "to steps of 1/16"):
        assert step in whats, whats
    assert abs(e.dequantized - e.float_result) <= 16 / 256 * 1.01


def test_reference_recipes_name_the_reference_arithmetic():
    """SUM and uint8 RESIZE_BILINEAR explain the fixed-point sum / the reference formula under "reference"
    and litert's float32 rescale / weight products under "litert-x86"."""
    for module, case, ref_step, x86_step in (
            ("shape_ops", "sum_i16_many_rows", "remove the zero points (int32)", "add bias"),
            ("shape_ops", "resize_bilinear_u8_up", "terms (float32)", "weights (float32)")):
        model, inputs = importlib.import_module(f"helpers.quantized_{module}_cases").build_case(case)
        it, x86 = run(model, inputs, "reference"), run(model, inputs, "litert-x86")
        k = int(differing(it.get_tensor(it.prepared()[0][0].outputs[0]),
                          x86.get_tensor(x86.prepared()[0][0].outputs[0]))[0])
        e_ref, e_x86 = explain(it, 0, k), explain(x86, 0, k)
        assert e_ref.agrees and e_x86.agrees and e_ref.kernel != e_x86.kernel
        assert ref_step in [s.what for s in e_ref.steps] and x86_step in [s.what for s in e_x86.steps]


WALKED = ("int8_float_io", "int16x8_conv_fc", "hybrid_fc_conv", "transformer_tiny_int8", "mobilenet_v3_block_int8")


@pytest.mark.parametrize("name", WALKED)
def test_sample_model_under_the_reference_variant(name):
    its = []
    for variant in ("reference", "litert-x86"):
        it = Interpreter(model_path=SAMPLES / f"{name}.tflite", keep_intermediates=True, variant=variant)
        it.allocate_tensors()
        rng = np.random.default_rng(7)
        for d in it.get_input_details():
            it.set_tensor(d["index"], litert_runner.make_input(rng, d["dtype"], d["shape"]))
        it.invoke()
        its.append(it)
    for node, *_ in its[0].prepared():
        if node.outputs:
            check_node(*its, node.index)
