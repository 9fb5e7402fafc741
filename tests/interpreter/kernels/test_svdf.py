"""SVDF (``kernels/svdf.py``, speed layer ``fast/svdf.py``): float32, hybrid and int8 cases
(tests/helpers/recurrent_cases.py).

The teaching layer computes the speed layer's bits under both variants; every output -- float32 included
(litert's NEON order of additions, Eigen's tanh) -- is bit-exact with LiteRT's builtin kernels and with its
BUILTIN_REF kernels.  The two variants never differ: BUILTIN_REF registers the very same SVDF kernel as
BUILTIN.  The state is a variable tensor, so every case also runs two invokes on one interpreter against
LiteRT.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import recurrent_cases as rc
from helpers.op_layers import OpLayers
from workbench.interpreter import Interpreter

CASES = rc.cases(rc.SVDF_OPS)
LAYERS = OpLayers(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_variant_bit_exact_with_litert_builtin_ref(case):
    LAYERS.check_reference_variant(case)


def test_both_builds_compute_the_svdf_alike():
    # BUILTIN_REF registers the same SVDF kernel (reference_ops' EvalFloatSVDF / EvalHybridSVDF /
    # EvalIntegerSVDF on tensor_utils) as BUILTIN
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)


@pytest.fixture(scope="module")
def litert_sessions():
    return rc.litert_sessions(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_two_invokes_carry_the_state_as_litert(case, litert_sessions):
    rc.check_two_invokes(case, litert_sessions)


def _prepared(case, **kw):
    model, _ = LAYERS.build(case)
    it = Interpreter(model=model, **kw)
    it.allocate_tensors()
    return it.prepared()[0]


@pytest.mark.parametrize("case, label", [
    ("svdf_f32_relu", "svdf"),
    ("svdf_int8", "svdf"),
    ("svdf_hyb_tanh", "svdf/hybrid(weights_time and row sums at prepare)"),
])
def test_fast_paths_are_bound_at_prepare(case, label):
    assert _prepared(case)[1] == label


def test_hybrid_svdf_opdata():
    d = _prepared("svdf_hyb_asym_relu")[2]
    assert d.kind == "hybrid" and d.asymmetric_quantize_inputs and d.rank == 2 and d.memory_size == 6
    assert d.weights_feature_scale == pytest.approx(0.0123) and d.weights_time_scale == pytest.approx(0.0071)
    # TFLite's float_weights_time and the row sums are made by the speed layer (at prepare) or by the
    # teaching layer (at invoke), not kept in the OpData
    assert "float_weights_time" not in repr(d) and "row_sums" not in repr(d)
    it = Interpreter(model=LAYERS.build("svdf_hyb_asym_relu")[0])
    it.allocate_tensors()
    fast = it._sg(0).fast[0].prepared
    assert fast["float_weights_time"].dtype == np.float32 and fast["float_weights_time"].shape == (6, 6)
    assert fast["row_sums"].shape == (d.num_filters,)
