"""SUM: the teaching layer (kernels/sum.py; no speed layer) gives the same bits under both variants
whatever runs it, the default interpreter is bit-exact with LiteRT's builtin kernels and the reference
variant with its BUILTIN_REF kernels; float32 (sequential sums, long rows included), int32 and int64
(wrapping), uint8, int8 and int16 (float32 rescaling in the builtin kernel, fixed point in the
reference one).  LiteRT's BUILTIN_REF gets int8 and int16 SUM wrong (it reads their bytes as uint8):
those cases are checked against the scalar formula instead, and the slip is pinned down in a test."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.misc_cases import F32, I8, I16, I32, I64, U8, litert_one, prepared, reduce
from helpers.op_layers import OpLayers
from workbench.schema import BuiltinOperator as B

S = B.SUM
CASES = {
    "float32_axis1": reduce(S, F32, (3, 50, 41), [1], False),
    "float32_all": reduce(S, F32, (3, 50, 41), [0, 1, 2], False),
    "float32_long_rows": reduce(S, F32, (4, 100), [-1], True),
    "float32_two_axes": reduce(S, F32, (2, 3, 4, 5), [1, 3], False),
    "float32_negative_zeros": reduce(S, F32, (2, 3), [1], False, values=np.full((2, 3), -0.0, np.float32)),
    "int32_wraps": reduce(S, I32, (3, 5, 4), [1], True, values=np.full((3, 5, 4), 2 ** 30, np.int32)),
    "int32_axis1": reduce(S, I32, (3, 5, 4), [1], True),
    "int64_two_axes": reduce(S, I64, (3, 5, 4), [0, 2], False),
    "uint8_axis1": reduce(S, U8, (2, 7, 3), [1], False, (0.05, 128), (0.3, 100)),
    "uint8_keep_two_axes": reduce(S, U8, (2, 3, 4, 5), [1, 3], True, (0.01, 255), (0.12, 0)),
    "uint8_many_rows": reduce(S, U8, (64, 9), [1], False, (0.05, 128), (0.15, 120)),
    "int8_v2": reduce(S, I8, (4, 9), [-1], False, (0.05, -3), (0.2, 11)),
    "int8_all": reduce(S, I8, (3, 4, 2), [0, 1, 2], True, (0.05, 127), (0.5, -128)),
    "int8_ties": reduce(S, I8, (4, 8), [1], False, (0.25, 0), (1.0, 0)),
    "int8_many_rows": reduce(S, I8, (200, 13), [1], False, (0.0123, 7), (0.0771, -3)),
    "int16_axis1": reduce(S, I16, (3, 6, 2), [1], False, (0.0005, 0), (0.002, 0)),
    "int16_many_rows": reduce(S, I16, (64, 5), [1], False, (0.0005, 0), (0.0015, 0)),
}
LAYERS = OpLayers(CASES)
# LiteRT's reference SUM passes int8 / int16 data to QuantizedMeanOrSum<uint8_t> (kernels/reduce.cc)
REF_MISREADS = sorted(c for c in CASES if c.startswith(("int8", "int16")))


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(set(CASES) - set(REF_MISREADS)))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


@pytest.mark.parametrize("case", REF_MISREADS)
def test_litert_reference_sum_reads_int8_and_int16_as_uint8(case):
    """BUILTIN_REF's output bytes are the fixed-point formula applied to the input's first bytes read
    as uint8 and clamped to [0, 255] — not the int8 / int16 sum; the reference variant does not copy
    that (it is checked against the scalar formula below)."""
    from workbench.interpreter.kernels.sum import sum_fixed_point

    status, theirs = litert_one(LAYERS, case)
    assert status == "ok", theirs
    x = LAYERS.build(case)[1][0]
    d = prepared(LAYERS, case, "reference")
    misread = sum_fixed_point(x.view(np.uint8).reshape(-1)[:x.size].reshape(x.shape), d)
    assert np.array_equal(theirs[0].view(np.uint8).reshape(-1)[:misread.size], misread.reshape(-1))
    assert not np.array_equal(theirs[0], LAYERS.run(case, reference=True, variant="reference")[0])


@pytest.mark.parametrize("case", sorted(c for c in CASES if c.startswith(("uint8", "int8", "int16"))))
def test_quantized_sum_is_the_scalar_formula(case):
    """Both rescalings of the module docstring, one output at a time with scalar arithmetic."""
    from workbench.interpreter import quant
    from workbench.interpreter.kernels._reduce import reduced_rows

    x = LAYERS.build(case)[1][0]
    d = prepared(LAYERS, case)
    lo, hi = quant.quantized_range(x.dtype)
    float32, fixed = [], []
    for row in reduced_rows(x, d.axes):
        acc = quant._wrap_int32(sum(int(v) for v in row))
        f = np.float32(np.float32(acc) * np.float32(d.scale)) + np.float32(d.bias)
        float32.append(int(np.copysign(np.floor(abs(float(f)) + 0.5), float(f))) + d.output_zero_point)
        shifted = quant._wrap_int32(acc - d.input_zero_point * d.count)
        fixed.append(quant.multiply_by_quantized_multiplier(shifted, d.output_multiplier, d.output_shift)
                     + d.output_zero_point)
    for variant, want in (("litert-x86", float32), ("reference", fixed)):
        want = np.clip(np.array(want, np.int64), lo, hi).astype(x.dtype).reshape(d.output_shape)
        np.testing.assert_array_equal(LAYERS.run(case, reference=True, variant=variant)[0], want, variant)


@pytest.mark.parametrize("case", ["uint8_many_rows", "int8_many_rows", "int16_many_rows"])
def test_float32_and_fixed_point_rescaling_differ(case):
    # round(Σx · scale + bias) in float32 against MBQM(Σx − zp·count): off by one on some outputs
    assert LAYERS.differing_variants(case) > 0


def test_the_reference_kernel_starts_its_sums_from_zero():
    # 0 + (−0) = +0 in the reference kernel; the optimized one starts from the first value: −0
    assert not np.signbit(LAYERS.run("float32_negative_zeros", variant="reference")[0]).any()
    assert np.signbit(LAYERS.run("float32_negative_zeros")[0]).all()
