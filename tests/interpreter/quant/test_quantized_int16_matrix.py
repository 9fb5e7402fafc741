"""Matrix kernels with int16 activations and int8 weights ("16x8"), and the int8 TRANSPOSE_CONV and
BATCH_MATMUL: tiny one-op models built in code, each run three ways.

  * our fast kernels vs our plain int64 numpy references: every element equal;
  * our fast kernels vs ai-edge-litert's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES, in a
    child process): every element equal (100 %, no tolerance);
  * scales are chosen so that outputs spread over the int16 range and some saturate; "ties" cases use
    power-of-two scales and every input value of a range, so that every rounding rule (ties up, ties
    away from zero, the int64 single rounding, C's round on doubles) is hit many times; "wrap" cases
    overflow TFLite's int32 accumulators on purpose.

Where TFLite refuses a model (int16 zero points ≠ 0, a bias-less CONV_2D, ...), ours refuses too, with
a clear error; where TFLite would compute garbage (an int32 bias read as int64), ours refuses.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import workbench
from helpers import litert_runner
from helpers.litert_session import run_calls
from helpers.quantized_cases import assert_same, litert_outputs, run_ours
from helpers.quantized_int16_matrix_cases import (
    CASES,
    I16_MAX,
    bmm,
    build_case,
    conv16,
    depthwise16,
    fc16,
    q,
    rand,
    rng_for,
    tconv,
)
from workbench import dump
from workbench.errors import KernelError, UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter, quant
from workbench.interpreter.fast import requantize
from workbench.interpreter.registry import BuiltinOpResolver
from workbench.schema import (
    BatchMatMulOptions,
    ModelBuilder,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    TensorType as TT,
)
from workbench.schema.types import tensor_data


def assert_equal_all(ours, theirs, what):
    assert_same(ours, theirs, what, float_bits=False)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_kernels_equal_references(case):
    model, inputs = build_case(case)
    assert_equal_all(run_ours(model, inputs), run_ours(model, inputs, reference=True), case)


@pytest.fixture(scope="session")
def litert_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_int16_matrix"), CASES, build_case, workers=2)


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernels_bit_exact_with_litert(case, litert_results):
    model, inputs = build_case(case)
    theirs = litert_outputs(litert_results[case])
    ours = run_ours(model, inputs)
    assert_equal_all(ours, theirs, case)
    out = ours[0].astype(np.int64)
    if ours[0].dtype == np.int16 and "ties" not in case and "wrap" not in case and out.size >= 100:
        # the scales really spread the outputs: many distinct values, large ones or the clamp reached
        _, _, d = prepared(case)
        assert len(np.unique(out)) > min(out.size // 4, 60), case
        assert np.abs(out).max() > 8000 or (out == d.output_activation_max).any(), case


# ------------------------------------------------------------------------------------------------
# what the cases exercise, and which path each one takes


def prepared(case):
    model, _ = build_case(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    _, kname, d, _ = it.prepared()[0]
    return model, kname, d


def test_versions_follow_the_rules_and_are_registered():
    want = {"conv16_3x3_same_relu": 8, "conv16_int32_grouped": 8, "dw16_3x3_relu": 1,
            "dw16_mult3_stride_dilation": 2, "fc16_int64_per_channel": 11, "fc16_no_bias": 11,
            "tconv8_3x3_stride2": 3, "tconv8_valid_no_bias": 2, "tconv8_relu": 4, "tconv16_int64_3x3": 3,
            "bmm8": 2, "bmm8_to_int32": 2, "bmm16": 3, "bmm16x8": 3}
    resolver = BuiltinOpResolver()
    for case, version in want.items():
        model, _ = build_case(case)
        code = model.operator_codes[0]
        assert code.version == version, (case, code.version)
        assert (code.builtin_code, version) in resolver
    for op, versions in ((B.CONV_2D, {8}), (B.FULLY_CONNECTED, {11}), (B.TRANSPOSE_CONV, {2, 5}),
                         (B.BATCH_MATMUL, {2, 3})):
        assert versions <= set(resolver.versions(op)), op


@pytest.mark.parametrize("case, recipe, rounding", [
    ("conv16_3x3_same_relu", "int64", "up"), ("conv16_int32_3x3", "int32", "up"),
    ("conv16_int32_grouped", "int32", "away"), ("conv16_grouped_int64", "int64", "up"),
])
def test_conv16_takes_the_path_tflite_takes(case, recipe, rounding):
    _, kname, d = prepared(case)
    assert (d.recipe, d.rounding) == (recipe, rounding)
    for field in ("input_zero_point", "output_zero_point", "output_multiplier", "output_shift", "effective_scale",
                  "output_activation_min", "output_activation_max", "bias_type", "quantized_bias_type"):
        assert hasattr(d, field), field
    assert ("numba" in kname) == (d.groups > 1)


def test_conv16_activation_clamps_in_int16():
    _, _, d = prepared("conv16_3x3_same_relu")
    assert (d.output_activation_min, d.output_activation_max) == (0, I16_MAX)
    _, _, d = prepared("conv16_dilation_relu6")
    assert d.output_activation_min == 0 and d.output_activation_max == quant.quantize_float(6.0, d.output_scale, 0)
    _, _, d = prepared("conv16_stride2_valid_per_tensor")
    assert (d.output_activation_min, d.output_activation_max) == (-32768, I16_MAX)


@pytest.mark.parametrize("case, recipe, accumulator", [
    ("fc16_int64_per_channel", "double", "int64"), ("fc16_int32_per_channel", "int32", "int32"),
    ("fc16_no_bias", "int32", "int32"), ("fc16_no_bias_option_int64", "double", "int64"),
    ("fc16_weight_zero_point", "double", "int64"),
])
def test_fc16_takes_the_path_tflite_takes(case, recipe, accumulator):
    _, _, d = prepared(case)
    assert (d.recipe, d.accumulator) == (recipe, accumulator)


def test_fc16_per_tensor_multiplier_uses_the_float32_product():
    _, _, d = prepared("fc16_int32_per_tensor_relu6")
    real = float(np.float64(np.float32(d.input_scale) * np.float32(d.filter_scale[0])) /
                 np.float64(np.float32(d.output_scale)))
    assert d.output_multiplier[0] == quant.quantize_multiplier(real)[0]


def test_tconv_neon_blocks_round_up_and_the_tail_away():
    _, _, d = prepared("tconv8_ties_11ch")
    assert d.recipe == "int32" and d.up_channels == 8
    _, _, d = prepared("tconv8_per_tensor_16ch")
    assert d.up_channels == 16
    _, _, d = prepared("tconv16_ties_int64")
    assert d.recipe == "int64"


def test_the_ties_cases_contain_ties():
    """The 'ties' cases are only useful if rounding up and away from zero really disagree on them."""
    for case in ("conv16_ties_int32", "conv16_ties_int32_grouped", "fc16_ties_ruy", "tconv8_ties_11ch"):
        model, inputs = build_case(case)
        x = next(iter(inputs.values())).astype(np.int64)
        _, _, d = prepared(case)
        up = quant.multiply_by_quantized_multiplier_array(x, d.output_multiplier[0], d.output_shift[0], True)
        away = quant.multiply_by_quantized_multiplier_array(x, d.output_multiplier[0], d.output_shift[0], False)
        assert (up != away).sum() > 50, case


def test_wrap_cases_overflow_int32():
    model, inputs = build_case("conv16_wrap_int32")
    x = inputs["x"].astype(np.int64).reshape(4, -1)
    w = tensor_data(model, 0, model.subgraphs[0].operators[0].inputs[1]).astype(np.int64).reshape(2, -1)
    sums = x @ w.T
    assert np.abs(sums).max() > 2 ** 33
    ours = run_ours(model, inputs)[0]
    model64, _ = build_case("conv16_no_wrap_int64")
    assert (ours != run_ours(model64, inputs)[0]).any()


# ------------------------------------------------------------------------------------------------
# refusals: where TFLite refuses, ours refuses (and litert really does); where TFLite would read an
# int32 bias as int64 (undefined output), ours refuses


def with_zero_points(build, **zps):
    def b(name):
        builder, inputs = build(name)
        for i, t in enumerate(builder.tensors):
            if t.name in zps:
                qp = t.quantization
                builder.tensors[i] = dataclasses.replace(
                    t, quantization=ModelBuilder.quant(qp.scale, zps[t.name], qp.quantized_dimension))
        return builder, inputs
    return b


def drop_bias_slot(build, keep_slot):
    def b(name):
        builder, inputs = build(name)
        op = builder.operators[0]
        ins = op.inputs[:-1] + ((-1,) if keep_slot else ())
        builder.operators[0] = dataclasses.replace(op, inputs=ins)
        return builder, inputs
    return b


REFUSED = {
    "conv16_input_zero_point": (with_zero_points(conv16((1, 6, 6, 3), (4, 3, 3, 3)), x=5), KernelError, True),
    "conv16_output_zero_point": (with_zero_points(conv16((1, 6, 6, 3), (4, 3, 3, 3)), y=-5), KernelError, True),
    "conv16_no_bias_two_inputs": (drop_bias_slot(conv16((1, 6, 6, 3), (4, 3, 3, 3)), False), KernelError, True),
    "conv16_no_bias_optional_slot": (drop_bias_slot(conv16((1, 6, 6, 3), (4, 3, 3, 3)), True), KernelError, True),
    "conv16_int64_bias_option_int32": (conv16((1, 6, 6, 3), (4, 3, 3, 3), qbt=TT.INT32), KernelError, True),
    "conv16_int32_bias_option_unset": (conv16((1, 6, 6, 3), (4, 3, 3, 3), bias_dtype=np.int32), KernelError, None),
    "dw16_int32_bias": (None, UnsupportedOpError, True),
    "dw16_optional_bias_slot": (drop_bias_slot(depthwise16((1, 6, 6, 4), (3, 3)), True), KernelError, True),
    "fc16_input_zero_point": (with_zero_points(fc16((4, 16), 5), x=3), KernelError, True),
    "tconv16_input_zero_point": (with_zero_points(tconv(np.int16, (1, 5, 6, 3), (11, 3, 3, 3), (10, 12),
                                                        stride=(2, 2)), x=3), KernelError, True),
    "tconv16_int32_bias_option_unset": (tconv(np.int16, (1, 5, 6, 3), (11, 3, 3, 3), (10, 12), stride=(2, 2),
                                              bias_dtype=np.int32), KernelError, None),
    "bmm16_zero_point": (bmm((2, 7, 33), (2, 33, 9), np.int16, np.int16, np.int16, qa=(0.001, 2), qb=(0.002, 0)),
                         KernelError, True),
}


def dw16_int32_bias(name):
    builder, inputs = depthwise16((1, 6, 6, 4), (3, 3))(name)
    for i, t in enumerate(builder.tensors):
        if t.name == "bias":
            data = bytes(builder.buffers[t.buffer].data)
            arr = np.frombuffer(data, np.int64).astype(np.int32)
            builder.buffers[t.buffer] = dataclasses.replace(builder.buffers[t.buffer], data=memoryview(arr.tobytes()))
            builder.tensors[i] = dataclasses.replace(t, type=TT.INT32)
    return builder, inputs


REFUSED["dw16_int32_bias"] = (dw16_int32_bias, UnsupportedOpError, True)


def fc16_bias_scale_off(name):
    builder, inputs = fc16((2, 8), 3, per_channel=False)(name)
    for i, t in enumerate(builder.tensors):
        if t.name == "bias":
            qp = t.quantization
            builder.tensors[i] = dataclasses.replace(t, quantization=ModelBuilder.quant([qp.scale[0] * 1000], [0]))
    return builder, inputs


REFUSED["fc16_per_tensor_bias_scale_off"] = (fc16_bias_scale_off, KernelError, True)


def fc16_without_options_table(name):
    """No options table: TFLite's parser zero-fills the params, so quantized_bias_type is 0 (not the
    FLOAT32 an absent field gives), which its 16x8 Prepare refuses."""
    b = ModelBuilder()
    x = b.input("x", (2, 8), np.int16, quantization=q(0.0005, 0))
    w = b.constant("w", rand(rng_for(name), np.int8, (3, 8)), quantization=q([0.006] * 3, [0] * 3, 0))
    y = b.tensor("y", (2, 3), np.int16, quantization=q(0.01, 0))
    b.op(B.FULLY_CONNECTED, [x, w], [y], None)
    b.output(y)
    return b, {"x": rand(rng_for(name), np.int16, (2, 8))}


REFUSED["fc16_without_options_table"] = (fc16_without_options_table, KernelError, True)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_like_tflite(case):
    build, error, litert_refuses = REFUSED[case]
    builder, inputs = build(case)
    model = builder.build()
    with pytest.raises(error) as info:
        Interpreter(model=model).allocate_tensors()
    assert "node 0" in str(info.value)
    if litert_refuses:
        with pytest.raises(RuntimeError, match="failed to prepare"):
            run_calls(dump(model), [("invoke", list(inputs.values()))])


def test_bmm_per_channel_operand_refused_because_tflite_outputs_the_zero_point():
    def build(name):
        rng = rng_for(name)
        b = ModelBuilder()
        a = b.input("a", (5, 33), np.int8, quantization=q(0.05, 3))
        w = b.constant("w", rand(rng, np.int8, (33, 9)), quantization=q([0.02 + 0.001 * i for i in range(9)],
                                                                        [0] * 9, 1))
        y = b.tensor("y", (5, 9), np.int8, quantization=q(0.5, 5))
        b.op(B.BATCH_MATMUL, [a, w], [y], BatchMatMulOptions())
        b.output(y)
        return b.build(), rand(rng, np.int8, (5, 33))
    model, x = build("bmm_per_channel")
    with pytest.raises(UnsupportedOpError, match="per channel"):
        Interpreter(model=model).allocate_tensors()
    theirs = run_calls(dump(model), [("invoke", [x])])[0][0]
    assert (theirs == 5).all()


def test_errors_are_workbench_errors_naming_the_op():
    builder, _ = REFUSED["conv16_int32_bias_option_unset"][0]("x")
    with pytest.raises(WorkbenchError, match="CONV_2D.*quantized_bias_type=INT32"):
        Interpreter(model=builder.build()).allocate_tensors()


# ------------------------------------------------------------------------------------------------
# the converter-made 16x8 sample model: its CONV_2D / FULLY_CONNECTED nodes, with their stored
# (int8-era) versions 3 and 4 and their converter-made weights, cut out one by one


SAMPLE = workbench.load(litert_runner.RUNNER.parents[2] / "sample_models" / "int16x8_conv_fc.tflite")


def sample_node_model(index):
    """Operator ``index`` of the sample model alone, with an int16 input, its constants, its options
    and its stored operator version."""
    sg = SAMPLE.subgraphs[0]
    op = sg.operators[index]
    code = SAMPLE.operator_codes[op.opcode_index]
    b = ModelBuilder()
    ids = []
    for t in op.inputs:
        if t < 0:
            ids.append(-1)
            continue
        ten = sg.tensors[t]
        data = tensor_data(SAMPLE, 0, t)
        if data is not None and data.size:
            ids.append(b.constant(ten.name, np.array(data), quantization=ten.quantization))
        else:
            ids.append(b.input(ten.name, ten.shape, ten.type, quantization=ten.quantization))
    out = sg.tensors[op.outputs[0]]
    y = b.tensor(out.name, out.shape, out.type, quantization=out.quantization)
    b.op(code.builtin_code, ids, [y], op.builtin_options, version=code.version)
    b.output(y)
    return b.build()


@pytest.mark.parametrize("index", [1, 4, 5])
def test_sample_model_16x8_nodes_bit_exact(index):
    model = sample_node_model(index)
    version = model.operator_codes[0].version
    assert version in (3, 4)                  # the int8 versions the flatbuffer quantizer stamped
    it = Interpreter(model=model)
    it.allocate_tensors()
    detail = it.get_input_details()[0]
    rng = rng_for(f"sample{index}")
    x = rand(rng, np.int16, detail["shape"])
    ours = run_ours(model, {detail["name"]: x})
    assert_equal_all(ours, run_ours(model, {detail["name"]: x}, reference=True), f"node {index}")
    theirs = run_calls(dump(model), [("invoke", [x])])[0]
    assert_equal_all(ours, theirs, f"sample node {index}")
    _, _, d, _ = it.prepared()[0]
    assert d.bias_type in ("int64", "none") and d.quantized_bias_type == "int64"


def test_sample_model_runs_bit_exact_end_to_end():
    """QUANTIZE → CONV_2D → MAX_POOL_2D → RESHAPE → FULLY_CONNECTED ×2 → SOFTMAX → DEQUANTIZE, int16
    activations throughout.  The file stores the int8-era versions (CONV_2D 3, FULLY_CONNECTED 4, ...);
    TFLite registers one kernel for all versions of an op and picks the arithmetic from the tensor
    types, so litert runs them as 16x8 — and so do we (the same kernel class serves v3 and v8)."""
    versions = {B(c.builtin_code).name: c.version for c in SAMPLE.operator_codes}
    assert versions["CONV_2D"] == 3 and versions["FULLY_CONNECTED"] == 4
    rng = rng_for("sample end to end")
    xs = [rng.uniform(-1.2, 1.2, (1, 8, 8, 3)).astype(np.float32) for _ in range(4)]
    xs.append(np.zeros((1, 8, 8, 3), np.float32))
    theirs = run_calls(dump(SAMPLE), [("invoke", [x]) for x in xs])
    for reference in (False, True):
        it = Interpreter(model=SAMPLE, reference=reference)
        it.allocate_tensors()
        kinds = {type(d).__name__ for _, _, d, _ in it.prepared()}
        assert {"Conv2DInt16Data", "FullyConnectedInt16Data"} <= kinds
        for x, want in zip(xs, theirs):
            it.set_tensor(it.get_input_details()[0]["index"], x)
            it.invoke()
            got = it.get_tensor(it.get_output_details()[0]["index"])
            assert got.tobytes() == want[0].tobytes(), (reference, got, want[0])


# ------------------------------------------------------------------------------------------------
# the shared 16x8 helpers of workbench.interpreter.quant


def test_int64_multiplier_array_matches_the_scalar_version():
    rng = rng_for("mbqm64")
    x = rng.integers(-(1 << 40), 1 << 40, 2000)
    m = rng.integers(1 << 30, (1 << 31) - 1, 2000)
    m[:5] = [0x7FFF0000, 0x7FFFFFFF, 0x7FFF8000, 1 << 30, (1 << 31) - 1]
    s = rng.integers(-31, 8, 2000)
    got = quant.multiply_by_quantized_multiplier_int64_array(x, m, s)
    want = [quant.multiply_by_quantized_multiplier_int64(int(a), int(b), int(c)) for a, b, c in zip(x, m, s)]
    assert got.tolist() == want
    # one rounding, ties toward +infinity: 0.25·(−6) = −1.5 → −1, 0.25·6 = 1.5 → 2
    mm, ss = quant.quantize_multiplier(0.25)
    assert quant.multiply_by_quantized_multiplier_int64_array([-6, 6, -2, 2], mm, ss).tolist() == [-1, 2, 0, 1]


@pytest.mark.parametrize("up_channels", [0, 3, 7])
def test_requantize_jit_equals_numpy(up_channels):
    rng = rng_for(f"requantize{up_channels}")
    acc = rng.integers(-(1 << 34), 1 << 34, (50, 7))
    acc[:, 0] = rng.integers(-5000, 5000, 50) * 4 + 2                  # ties for shift -2
    bias = rng.integers(-(1 << 20), 1 << 20, 7)
    mult = rng.integers(1 << 30, (1 << 31) - 1, 7)
    shift = np.array([-2, -9, -14, 1, 3, -20, 0])
    for fn_jit, fn_np, extra in ((requantize.requantize_int32_rows_jit, quant.requantize_int32_rows, (up_channels,)),
                                 (requantize.requantize_int64_rows_jit, quant.requantize_int64_rows, ())):
        a = np.empty(acc.shape, np.int16)
        b = np.empty(acc.shape, np.int16)
        fn_jit(acc.astype(np.float64), bias, mult, shift, 0, -32768, 32767, a, *extra)
        fn_np(acc, bias, mult, shift, 0, -32768, 32767, b, *extra)
        assert (a == b).all(), fn_np.__name__
    # the int32 recipe: ties of channel 0 go up when it is one of the "up" channels, else away
    out = np.empty((1, 7), np.int16)
    quant.requantize_int32_rows(np.array([[-6] + [0] * 6]), np.zeros(7, np.int64), np.full(7, 1 << 30),
                                np.full(7, -1), 0, -32768, 32767, out, up_channels)
    assert out[0, 0] == (-1 if up_channels else -2)


def test_round_half_away_double_is_c_round():
    v = np.array([0.49999999999999994, 0.5, -0.5, 1.5, 2.5, -2.5, 4503599627370497.0, -0.49999999999999994])
    assert quant.round_half_away_double(v).tolist() == [0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 4503599627370497.0, -0.0]


def test_scale_by_double_sends_values_beyond_int32_to_int32_min():
    got = quant.scale_by_double(np.array([2 ** 40, -(2 ** 40), 3, -3]), 0.5, 0, -32768, 32767)
    assert got.tolist() == [-32768, -32768, 2, -2]


def test_exact_matmul_dtype_follows_the_bounds():
    assert quant.exact_matmul_dtype(32768, 2 ** 24 / 32768 - 1) == np.float32
    assert quant.exact_matmul_dtype(32768, 2 ** 24 / 32768) == np.float64
    assert quant.exact_matmul_dtype(32768, 2 ** 53 / 32768) is None
    model, _ = build_case("conv16_big_k")
    it = Interpreter(model=model)
    it.allocate_tensors()
    kname = it.prepared()[0][1]
    assert "float64" in kname and it._sg(0).fast[0].weights.dtype == np.float64
