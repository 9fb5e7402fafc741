"""uint8 / int8 / int16 element-wise and activation kernels, bit-exact.

Tiny one-op models built in code, each run three ways:

  * our fast kernels (value tables, pair tables, vectorised numpy) vs our plain numpy references
    (``Interpreter(reference=True)``): every element equal;
  * our fast kernels vs ai-edge-litert's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES, in a
    child process): every element equal, no tolerance;
  * inputs cover every value of 8-bit types (every pair for 8-bit binary ops) plus odd-sized tails,
    so the vector loops litert runs in blocks and its scalar tails are both exercised; scales are
    chosen to make multipliers above and below 1, zero points sit at the ends of the ranges, and
    some output scales are small enough to overflow litert's int16 intermediates;
  * int16 ADD / SUB / MUL (and 8-bit ones with the same scales) on inputs searched so that every
    rounding step meets exact ties (a pre-rounding value of exactly k + ½, on both signs), in
    litert's vector loops and in their scalar tails — where one rounding and two roundings part.

Further tests: op versions (op_version.cc's rules as the workbench stamps them, and the
registry's refusal of a version no kernel implements), OpData field names, typed refusals of
what TFLite refuses, typed refusals of scales whose multipliers overflow where litert refuses them too (NaN / inf
beta and alpha and absurd scales elsewhere: tests/interpreter/quant/test_quantized_edge_parameters.py and
tests/interpreter/quant/test_quantized_extreme_scales.py), run-time errors (a zero divisor, a negative
square root) and a few numeric checks of the fixed-point helpers.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import litert_runner
from helpers.quantized_cases import assert_same, litert_outputs, run_ours
from helpers.quantized_elementwise_cases import (
    ADD_GENERAL,
    CASES,
    DIFFER,
    I8,
    I16,
    TIE_CASES,
    TIE_TAIL,
    U8,
    binary,
    build_case,
    q,
    tie_arithmetic,
)
from workbench import dump
from workbench.errors import KernelError, ModelError, UnsupportedOpError
from workbench.interpreter import Interpreter, quant
from workbench.schema import (
    AddOptions,
    ModelBuilder,
    MulOptions,
    SoftmaxOptions,
    SubOptions,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.versioning import update_versions

# ------------------------------------------------------------------------------------------------
# case builders: each returns build(name) -> (ModelBuilder, {input name: array})


SM8 = (1 / 256, -128)


# ------------------------------------------------------------------------------------------------
# int16 ADD / SUB / MUL at exact rounding ties
#
# Two roundings in a row (the reference's SRDHM, then a rounding right shift) and one rounding
# (litert's int16 ADD vector loop) only part where a pre-rounding value is exactly k + ½, and random
# int16 inputs almost never land there.  These cases search, for their scales, inputs that meet an
# exact tie at every rounding step of both arithmetics, on negative and positive values, in
# litert's vector loop and in its scalar tail.  The arithmetic here is the test's own (plain
# integer formulas), not the kernel's.


VECTOR_BLOCK = 16           # litert's int16 ADD vector loop; the values after the last full block


# per case: the rounding steps whose ties the inputs must meet (on negative and positive values, and
# once more in the scalar tail of a flat case)
_IN = {k: (f"input {k} high", f"input {k} shift", "output high", "output shift", f"vector input {k} high",
           "vector output high", "vector output shift", DIFFER) for k in (1, 2)}
REQUIRED_TIES = {
    "add_int16_ties_input2": _IN[2], "add_int16_ties_input1": _IN[1], "add_int16_ties_broadcast": _IN[2],
    "add_int16_ties_truncating_shift": ("input 1 shift", "output high", "output shift", "vector input 1 truncation",
                                        "vector input 1 high", "vector output high", "vector output shift", DIFFER),
    "add_int16_ties_sample_scales": ("input 2 high", "input 2 shift", "output shift", "vector output shift", DIFFER),
    "add_int16_ties_pot": ("input 2 shift",),
    "sub_int16_ties_input2": _IN[2], "sub_int16_ties_input1": _IN[1], "sub_int16_ties_broadcast": _IN[1],
    "sub_int16_ties_truncating_shift": ("input 2 high", "input 2 shift", "output high", "output shift",
                                        "vector input 2 truncation", "vector output high", "vector output shift",
                                        DIFFER),
    "sub_int16_ties_sample_scales": ("input 2 high", "input 2 shift", "output shift", "vector output shift", DIFFER),
    "sub_int16_ties_pot": ("input 1 shift",),
    "mul_int16_ties": ("product high", "product shift"), "mul_int16_ties_broadcast": ("product high", "product shift"),
    "mul_int16_to_int8_ties": ("Q15 product", "shift by 8"),
    "add_int8_every_pair_ties": ("input 2 shift", "output high", "output shift"),
    "add_uint8_every_pair_ties": ("input 1 shift", "output high", "output shift"),
    "sub_int8_every_pair_ties": ("input 1 shift", "output high", "output shift"),
    "sub_uint8_every_pair_ties": ("input 2 shift", "output high", "output shift"),
    "add_int8_every_pair_input_ties": ("input 2 high", "input 2 shift", "output high"),
    "sub_uint8_every_pair_input_ties": ("input 1 high", "input 1 shift", "output high"),
    "mul_int8_every_pair_ties": ("product high", "product shift"),
    "mul_uint8_every_pair_ties": ("product high", "product shift"),
}


@pytest.mark.parametrize("case", sorted(REQUIRED_TIES))
def test_tie_cases_meet_every_rounding_step(case):
    """The searched inputs meet exact ties (on both signs) at every rounding step the scales allow —
    for int16 in litert's vector loop and again in its scalar tail — and the reference and the
    vector loop part on some of them: a kernel that rounds any step differently from litert fails
    ``test_bit_exact_with_litert`` on these cases.  For int16 our kernel (fast and reference) writes
    the test's own arithmetic: litert's vector loop for the whole blocks of 16 of an ADD without
    broadcast, the reference elsewhere."""
    model, inputs = build_case(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    kind = case.split("_")[0]
    a, b = np.broadcast_arrays(inputs["a"], inputs["b"])
    out, steps = tie_arithmetic(kind, d, a, b)
    int16 = case in TIE_CASES
    flat = int16 and inputs["a"].shape == inputs["b"].shape
    n = a.size
    main = np.arange(n).reshape(a.shape) < (n // VECTOR_BLOCK * VECTOR_BLOCK if flat else n)
    for step in REQUIRED_TIES[case]:
        hit = steps[step]
        if step == DIFFER:
            assert hit[main].any(), step
        else:
            assert (hit[main] == -1).any() and (hit[main] == 1).any(), f"{step}: {np.unique(hit[main])}"
        if flat:
            assert hit[~main].any(), f"{step}: no tie in the scalar tail"
    if not int16:
        return                  # 8-bit: litert's vector loops are compared in test_bit_exact_with_litert
    vector_loop = main & (kind == "add" and flat and d.path == "general")
    want = np.where(vector_loop, out.get("vector", out["reference"]), out["reference"])
    for reference in (False, True):
        got = run_ours(model, inputs, reference)[0]
        assert got.shape == want.shape and int((got != want).sum()) == 0, f"reference={reference}"


def test_sub_with_an_output_multiplier_above_one_marks_its_vectorised_outputs():
    """SUB's output multiplier ≥ 1 is where litert's compiler-vectorised loop (4 lanes) and its scalar
    loop part: the OpData marks the vectorised outputs, and on these cases both kinds occur and
    differ somewhere (so test_bit_exact_with_litert checks both rules)."""
    def kinds(case):
        model, inputs = build_case(case)
        it = Interpreter(model=model)
        it.allocate_tensors()
        d = it.prepared()[0][2]
        a, b = np.broadcast_arrays(inputs["a"], inputs["b"])
        from workbench.interpreter.kernels._binary import add_sub_general
        scalar, vector = add_sub_general(a, b, d, -1), add_sub_general(a, b, d, -1, vectorized=True)
        mask = np.zeros(a.shape, bool) if d.vector_mask is None else d.vector_mask
        return d, mask, scalar != vector

    d, mask, differ = kinds("sub_int8_output_multiplier_2_pow_15")        # 65549 values: the last one is scalar
    assert d.output_shift == 15 and mask.sum() == 65548 and not mask.reshape(-1)[-1]
    assert differ[~mask].any() and differ[mask].any()
    d, mask, differ = kinds("sub_int16_output_multiplier_2_pow_15_runs_of_22")     # runs of 22: 20 + 2
    runs = mask.reshape(-1, 22)
    assert runs[:, :20].all() and not runs[:, 20:].any() and differ[~mask].any()
    for case in ("sub_int16_output_multiplier_2_pow_15_last_dim_broadcast",
                 "sub_uint8_output_multiplier_2_pow_15_broadcast"):
        d, mask, differ = kinds(case)
        assert d.vector_mask is None and differ.any(), case        # all scalar
    assert prepared("sub_int16_general")[2].vector_mask is None          # multiplier < 1: no difference


def test_int16_add_vector_loop_is_only_emulated_without_broadcast():
    """The OpData marks litert's vector-loop outputs of an int16 ADD: whole blocks of 16 when the
    shapes agree (after padding with leading 1s), nothing for a broadcast, SUB or MUL."""
    d = prepared("add_int16_ties_input2")[2]
    n = d.vector_mask.size
    assert n % VECTOR_BLOCK == TIE_TAIL and d.vector_mask.sum() == n - TIE_TAIL and d.vector_mask[: n - TIE_TAIL].all()
    for case in ("add_int16_ties_broadcast", "sub_int16_ties_input2", "mul_int16_ties", "add_int16_ties_pot"):
        assert prepared(case)[2].vector_mask is None, case
    b = ModelBuilder()
    x = b.input("x", (2, 8), np.int16, quantization=q(0.001, 0))
    y = b.input("y", (1, 2, 8), np.int16, quantization=q(0.0007, 0))
    o = b.tensor("o", (1, 2, 8), np.int16, quantization=q(0.0015, 0))
    b.op(B.ADD, [x, y], [o], ADD_GENERAL)
    b.output(o)
    it = Interpreter(model=update_versions(b.build()))
    it.allocate_tensors()
    assert it.prepared()[0][2].vector_mask.all()          # (2, 8) against (1, 2, 8): no broadcast


# the version op_version.cc assigns (as workbench.versioning stamps it)
EXPECTED_VERSIONS = {
    "logistic_uint8": 1, "logistic_int16_pot": 3, "tanh_uint8": 1, "tanh_int16_general": 3, "elu_int8": 1,
    "gelu_uint8": 2, "gelu_int8": 2, "gelu_int16": 1, "exp_int8": 2, "exp_int16": 2, "log_int16": 2,
    "rsqrt_int8": 2, "rsqrt_int16": 3, "sqrt_int8": 2, "sqrt_int16": 2, "relu_uint8": 2, "relu_int16": 3,
    "relu6_uint8": 1, "relu6_int16": 3, "relu_n1_to_1_int8": 1, "relu_0_to_1_uint8": 1, "hard_swish_uint8": 1,
    "leaky_relu_uint8": 1, "leaky_relu_int8": 1, "leaky_relu_int16": 2, "abs_int8": 2, "abs_int16": 3,
    "abs_int16_plain": 4, "neg_int8": 1, "softmax_uint8": 1, "softmax_int8_to_int16": 2, "softmax_int16": 3,
    "log_softmax_uint8": 1, "log_softmax_int8": 2, "quantize_float_to_uint8": 1, "quantize_float_to_int16": 2,
    "quantize_float_per_channel_int8": 3, "requantize_int16_to_int8": 1, "requantize_int16_to_int16": 2,
    "requantize_int32_to_int16": 2, "dequantize_uint8": 1, "dequantize_int16": 3, "add_uint8_every_pair": 1,
    "add_int16_general": 3, "add_int16_no_options": 3, "add_int16_pot": 1, "add_int16_plain_relu": 5,
    "sub_uint8_every_pair": 1, "sub_int16_general": 5, "sub_int16_pot": 1, "mul_uint8_every_pair": 1,
    "mul_uint8_multiplier_above_one": 3, "mul_int16": 4, "mul_int16_to_int8": 4, "mul_int16_plain": 7,
    "div_uint8_every_pair": 1, "div_int16": 1, "maximum_uint8": 1, "maximum_int8_broadcast": 2,
    "maximum_int16": 4, "squared_difference_int8_every_pair": 2, "prelu_int16_int8_alpha": 1,
}


assert_equal_all = assert_same      # floats bit for bit, integers by value


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_kernels_equal_references(case):
    model, inputs = build_case(case)
    assert_equal_all(run_ours(model, inputs), run_ours(model, inputs, reference=True), case)


@pytest.fixture(scope="session")
def litert_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_elementwise"), CASES, build_case, workers=2)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert(case, litert_results):
    model, inputs = build_case(case)
    assert_equal_all(run_ours(model, inputs), litert_outputs(litert_results[case]), case)


@pytest.mark.parametrize("case", sorted(EXPECTED_VERSIONS))
def test_versions_follow_op_version_rules(case):
    model, _ = build_case(case)
    assert model.operator_codes[0].version == EXPECTED_VERSIONS[case]


# ------------------------------------------------------------------------------------------------
# OpData, registry, refusals


def prepared(case):
    model, _ = build_case(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    return it.prepared()[0]


def test_opdata_has_tflm_field_names():
    _, _, d, _ = prepared("add_int16_general")
    for field in ("input1_offset", "input2_offset", "output_offset", "left_shift", "input1_multiplier",
                  "input1_shift", "output_multiplier", "output_shift", "output_activation_min",
                  "output_activation_max"):
        assert hasattr(d, field), field
    assert d.left_shift == 15 and d.path == "general"
    _, _, d, _ = prepared("add_int16_pot")
    assert d.path == "pot_int16" and (d.input1_shift, d.input2_shift) == (0, -2)
    _, _, d, _ = prepared("leaky_relu_int16")
    for field in ("output_multiplier_alpha", "output_shift_alpha", "output_multiplier_identity",
                  "output_shift_identity"):
        assert hasattr(d, field), field
    _, _, d, _ = prepared("softmax_int16")
    assert d.exp_lut.shape == (513,) and d.one_over_one_plus_x_lut.shape == (513,)
    assert hasattr(d, "input_multiplier") and hasattr(d, "input_left_shift")
    _, _, d, _ = prepared("logistic_int16_general")
    assert d.input_multiplier > 0 and not d.power_of_two
    _, _, d, _ = prepared("logistic_int16_pot")
    assert d.input_multiplier == 0 and d.power_of_two
    _, _, d, _ = prepared("prelu_int8_broadcast")
    assert {"output_multiplier_1", "output_shift_1", "output_multiplier_2", "alpha_offset"} <= set(d.as_dict())
    _, _, d, _ = prepared("relu_uint8")
    assert d.output_activation_min == d.output_zero_point and d.output_activation_max == 255


# test_the_vector_loops_are_only_emulated_where_they_change_values moved to
# tests/interpreter/kernels/test_add_mul.py (the second tables now live in the speed layer)


def test_unregistered_versions_fail_at_allocate():
    from workbench.errors import UnsupportedOpError as Unsupported
    b = ModelBuilder()
    x = b.input("x", (2, 3), np.int16, quantization=q(0.1, 0))
    y = b.input("y", (2, 3), np.int16, quantization=q(0.1, 0))
    o = b.tensor("o", (2, 3), np.int16, quantization=q(0.1, 0))
    b.op(B.ADD, [x, y], [o], AddOptions(), version=7)          # TFLite's ADD has versions 1 to 6
    b.output(o)
    with pytest.raises(Unsupported, match="version 7"):
        Interpreter(model=b.build()).allocate_tensors()


def refusal_model(op, dt, qi, qo, options=None, out_dt=None, b=None):
    mb = ModelBuilder()
    x = mb.input("x", (2, 8), dt, quantization=q(*qi))
    ins = [x]
    if b is not None:
        bdt, qb = b
        ins.append(mb.input("b", (2, 8), bdt, quantization=q(*qb)))
    y = mb.tensor("y", (2, 8), out_dt or dt, quantization=q(*qo))
    mb.op(op, ins, [y], options)
    mb.output(y)
    return update_versions(mb.build())


REFUSED = {
    "int16 relu with a zero point": refusal_model(B.RELU, I16, (0.001, 3), (0.001, 0)),
    "int16 log with a zero point": refusal_model(B.LOG, I16, (0.001, 3), (0.001, 0)),
    "int16 exp with an output zero point": refusal_model(B.EXP, I16, (0.001, 0), (0.001, 3)),
    "int16 logistic output scale": refusal_model(B.LOGISTIC, I16, (2 ** -12, 0), (2 ** -14, 0)),
    "uint8 logistic output scale": refusal_model(B.LOGISTIC, U8, (0.1, 0), (0.005, 0)),
    "int8 softmax output zero point": refusal_model(B.SOFTMAX, I8, (0.1, 0), (1 / 256, 0), SoftmaxOptions(beta=1.0)),
    "softmax int16 → int8": refusal_model(B.SOFTMAX, I16, (0.1, 0), (1 / 256, -128), SoftmaxOptions(beta=1.0),
                                          out_dt=I8),
    "log_softmax output scale": refusal_model(B.LOG_SOFTMAX, I8, (0.1, 0), (0.1, 127)),
    "uint8 abs": refusal_model(B.ABS, U8, (0.1, 0), (0.1, 0)),
    "int16 elu": refusal_model(B.ELU, I16, (0.1, 0), (0.1, 0)),
    "int16 hard_swish": refusal_model(B.HARD_SWISH, I16, (0.1, 0), (0.1, 0)),
    "int16 relu_n1_to_1": refusal_model(B.RELU_N1_TO_1, I16, (0.1, 0), (0.1, 0)),
    "quantize int8 → int16": refusal_model(B.QUANTIZE, I8, (0.1, 0), (0.1, 0), out_dt=I16),
    "int8 pow": refusal_model(B.POW, I8, (0.1, 0), (0.1, 0), b=(I8, (0.1, 0))),
    "int8 square": refusal_model(B.SQUARE, I8, (0.1, 0), (0.1, 0)),
    "uint8 squared_difference": refusal_model(B.SQUARED_DIFFERENCE, U8, (0.1, 0), (0.1, 0), b=(U8, (0.1, 0))),
    "int16 add with zero points": refusal_model(B.ADD, I16, (0.001, 3), (0.001, 0), AddOptions(pot_scale_int16=False),
                                                b=(I16, (0.001, 0))),
    "int8 add with an output multiplier ≥ 1": refusal_model(B.ADD, I8, (0.05, 0), (1e-9, 0), AddOptions(),
                                                             b=(I8, (0.05, 0))),
    "int16 prelu with int16 alpha": refusal_model(B.PRELU, I16, (0.05, 0), (0.05, 0), b=(I16, (0.01, 0))),
}


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_refusals_are_typed(what):
    with pytest.raises(UnsupportedOpError):
        Interpreter(model=REFUSED[what]).allocate_tensors()


# ------------------------------------------------------------------------------------------------
# option values and scales a kernel cannot compute with (the interpreter fuzzer writes NaN, inf and
# 1e30 into float options): a typed error naming the node and the value, never a raw ValueError /
# OverflowError from turning them into integers

BAD_PARAMETERS = {
    "mul int8 input scale 3e38": (refusal_model(B.MUL, I8, (3e38, 0), (0.03, 0), MulOptions(), b=(I8, (0.05, 0))),
                                  ModelError, "output multiplier"),
    "mul int16 output scale 1e-30": (refusal_model(B.MUL, I16, (0.05, 0), (1e-30, 0), MulOptions(), b=(I16, (0.05, 0))),
                                     ModelError, "output multiplier"),
    "sub int8 input scale 3e38": (refusal_model(B.SUB, I8, (3e38, 0), (0.03, 0), SubOptions(), b=(I8, (0.05, 0))),
                                  UnsupportedOpError, "overflows float32"),
    "sub int16 output multiplier 2^40": (refusal_model(B.SUB, I16, (0.001, 0), (2e-20, 0),
                                                       SubOptions(pot_scale_int16=False), b=(I16, (0.001, 0))),
                                         ModelError, "output multiplier"),
}


@pytest.mark.parametrize("what", sorted(BAD_PARAMETERS))
def test_unusable_parameters_are_refused_naming_the_node(what):
    model, error, match = BAD_PARAMETERS[what]
    with pytest.raises(error, match=match) as info:
        Interpreter(model=model).allocate_tensors()
    assert "(node 0)" in str(info.value)


def test_pot_int16_add_does_not_broadcast():
    build = binary(B.ADD, I16, (2, 3, 40), (3, 1), (2 ** -13, 0), (2 ** -11, 0), (2 ** -11, 0),
                   AddOptions(pot_scale_int16=True))
    model = update_versions(build("pot_broadcast")[0].build())
    with pytest.raises(UnsupportedOpError, match="does not broadcast"):
        Interpreter(model=model).allocate_tensors()


@pytest.mark.parametrize("reference", [False, True])
def test_run_time_errors(reference):
    model, inputs = build_case("div_uint8_broadcast_relu")
    inputs = dict(inputs)
    inputs["b"] = inputs["b"].copy()
    inputs["b"][3] = 128                                   # the divisor's zero point: a real 0
    with pytest.raises(KernelError, match="zero point"):
        run_ours(model, inputs, reference)
    model, inputs = build_case("sqrt_int8")
    with pytest.raises(KernelError, match="non-negative"):
        run_ours(model, {"x": np.full(inputs["x"].shape, -11, np.int8)}, reference)
    model, inputs = build_case("rsqrt_int16")
    with pytest.raises(KernelError, match="non-negative"):
        run_ours(model, {"x": np.full(inputs["x"].shape, -1, np.int16)}, reference)


def test_litert_refuses_a_zero_divisor_too(tmp_path):
    model, inputs = build_case("div_uint8_broadcast_relu")
    inputs["b"] = inputs["b"].copy()
    inputs["b"][0] = 128
    (tmp_path / "m.tflite").write_bytes(dump(model))
    np.savez(tmp_path / "in.npz", input_0=inputs["a"], input_1=inputs["b"])
    result = litert_runner.run(tmp_path / "m.tflite", tmp_path / "in.npz", tmp_path / "out.npz")
    assert not result.ok and "zero_point" in result.stderr


# ------------------------------------------------------------------------------------------------
# the fixed-point helpers


def test_gemmlowp_functions_approximate_their_real_values():
    x = np.arange(-32768, 1, 37)                              # int16, 3 integer bits: [-8, 0]
    e = quant.fp_exp_on_negative_values(x, 3, 16) / 32768.0
    assert np.abs(e - np.exp(x / 4096.0)).max() < 2e-4
    x32 = np.arange(-2 ** 31, 0, 2 ** 21)                    # int32, 5 integer bits: [-32, 0]
    e32 = quant.fp_exp_on_negative_values(x32, 5, 32) / 2.0 ** 31
    assert np.abs(e32 - np.exp(x32 / 2.0 ** 26)).max() < 1e-6
    v = np.arange(-32768, 32768, 11)
    assert np.abs(quant.fp_logistic(v, 3, 16) / 32768.0 - 1 / (1 + np.exp(-v / 4096.0))).max() < 2e-4
    assert np.abs(quant.fp_tanh(v, 3, 16) / 32768.0 - np.tanh(v / 4096.0)).max() < 5e-4
    r, nbou = quant.get_reciprocal(np.array([3 * 2 ** 19, 5 * 2 ** 22]), 12)
    assert np.allclose(r / 2.0 ** 31 * 2.0 ** -nbou * np.array([3.0, 40.0]), 1.0, atol=1e-8)     # Q12.19 inputs


def test_int16_lut_interpolates_its_function():
    lut = quant.lut_int16(10.0 / 65535, 32767, 2.0 / 65535, 0, lambda v: np.exp(np.asarray(v, np.float64)),
                          double=True)
    x = np.arange(-32768, 32768, 3)
    got = quant.lut_lookup_int16(x, lut) / 32767.5
    want = np.exp((x - 32767) * 10.0 / 65535)
    assert np.abs(got - want).max() < 3e-4          # a few int16 steps (the top end saturates)


def test_checked_log2_and_sign_bits():
    assert quant.checked_log2(2 ** -12) == (True, -12)
    assert quant.checked_log2(0.0003)[0] is False
    assert quant.count_leading_sign_bits32(np.array([0, -1, 1, -2 ** 31, 2 ** 31 - 1, 255])).tolist() == \
        [31, 31, 30, 0, 0, 23]


def test_rounding_divide_by_pot_beyond_31_follows_x86():
    """What DIV reaches for tiny dividends: the shift count wraps modulo 32, the mask is all ones."""
    x = np.array([805306368, -805306368, 7, 0])
    # mask = −1 and threshold = −1 (+1 for negative x): non-negative values gain 1, even 0
    assert quant.rounding_divide_by_pot_x86(x, 34).tolist() == [201326593, -201326592, 2, 1]
    assert quant.rounding_divide_by_pot_x86(x, 3).tolist() == quant.rounding_divide_by_pot_array(x, 3).tolist()
