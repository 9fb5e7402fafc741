"""int8 kernels, bit-exact: tiny one-op models built in code, each run three ways.

  * our fast kernels vs our plain int64 numpy references: every element equal;
  * our fast kernels vs ai-edge-litert's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES, in a
    child process): every element equal (100 %, no tolerance);
  * scales and zero points are chosen so that the outputs use the whole int8 range (so the
    requantization, rounding and clamps are all exercised).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import litert_runner
from helpers.quantized_cases import litert_outputs, run_ours
from helpers.quantized_ops_cases import CASES, assert_equal_all, build_case
from workbench.interpreter import Interpreter


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_int8_kernels_equal_references(case):
    model, inputs = build_case(case)
    assert_equal_all(run_ours(model, inputs), run_ours(model, inputs, reference=True), case)


@pytest.fixture(scope="session")
def litert_q_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_qops"), CASES, build_case, workers=4)


@pytest.mark.parametrize("case", sorted(CASES))
def test_int8_kernels_bit_exact_with_litert(case, litert_q_results):
    model, inputs = build_case(case)
    theirs = litert_outputs(litert_q_results[case])
    assert_equal_all(run_ours(model, inputs), theirs, case)


def test_versions_are_the_int8_ones():
    model, _ = build_case("conv_1x1_per_channel")
    assert model.operator_codes[0].version == 3
    model, _ = build_case("depthwise_dilation_stride")
    assert model.operator_codes[0].version == 3
    model, _ = build_case("fc_relu")
    assert model.operator_codes[0].version == 4


def test_conv_opdata_has_tflm_field_names():
    model, _ = build_case("conv_3x3_same_relu")
    it = Interpreter(model=model)
    it.allocate_tensors()
    _, kname, d, _ = it.prepared()[0]
    for field in ("input_zero_point", "output_zero_point", "output_multiplier", "output_shift",
                  "output_activation_min", "output_activation_max", "effective_scale"):
        assert hasattr(d, field), field
    assert len(d.output_multiplier) == 6 and d.per_channel
    assert "exact" in kname
    assert d.output_activation_min == d.output_zero_point      # RELU clamps at the zero point


def test_exact_blas_dtype_follows_the_bound():
    """float32 BLAS only when 128·max Σ|w| < 2^24 (every partial sum an exact float32 integer)."""
    from workbench.interpreter.quant import exact_float_dtype

    assert exact_float_dtype(2 ** 24 / 128 - 1) == np.float32
    assert exact_float_dtype(2 ** 24 / 128) == np.float64
    for case, want in (("conv_big_k_float64", "float64"), ("conv_1x1_per_channel", "float32")):
        model, _ = build_case(case)
        it = Interpreter(model=model)
        it.allocate_tensors()
        kname = it.prepared()[0][1]
        assert want in kname and it._sg(0).fast[0].weights.dtype == np.dtype(want), kname
