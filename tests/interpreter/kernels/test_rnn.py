"""The RNN family -- RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN -- in one file, as they share
``kernels/_rnn.py`` (teaching layer) and ``fast/rnn.py`` (speed layer): float32 and hybrid cases
(tests/helpers/recurrent_cases.py).

The teaching layer computes the speed layer's bits under both variants, and every output -- float32
included (the products in litert's NEON order, Eigen's tanh) -- is bit-exact with LiteRT's builtin kernels
and with its BUILTIN_REF kernels.  The two variants never differ: BUILTIN_REF registers the very same RNN
kernels as BUILTIN.  Recurrent ops keep their state in variable tensors, so every case also runs two
invokes on one interpreter against LiteRT.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import litert_session
from helpers import recurrent_cases as rc
from helpers.op_layers import OpLayers
from workbench import dump
from workbench.interpreter import Interpreter

CASES = rc.cases(rc.RNN_OPS)
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


def test_both_builds_compute_the_rnn_alike():
    # BUILTIN_REF registers the same RNN kernels (kernel_utils.cc's RnnBatchStep) as BUILTIN
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)


@pytest.fixture(scope="module")
def litert_sessions():
    return rc.litert_sessions(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_two_invokes_carry_the_state_as_litert(case, litert_sessions):
    rc.check_two_invokes(case, litert_sessions)


@pytest.mark.parametrize("case, label", [
    ("rnn_tanh", "rnn/numba"),
    ("usrnn_batch_major", "unidirectional_sequence_rnn/numba"),
    ("birnn_separate", "bidirectional_sequence_rnn/numba"),
    ("rnn_hyb_relu_asym", "rnn/hybrid(row sums at prepare)"),
    ("usrnn_hyb_batch_major", "unidirectional_sequence_rnn/hybrid(row sums at prepare)"),
    ("birnn_hyb_batch_major", "bidirectional_sequence_rnn/hybrid(row sums at prepare)"),
])
def test_fast_paths_are_bound_at_prepare(case, label):
    model, _ = LAYERS.build(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    assert it.prepared()[0][1] == label
    it = Interpreter(model=model, reference=True)
    it.allocate_tensors()
    assert it.prepared()[0][1] == label.split("/")[0] + "/reference"


def test_hybrid_bidirectional_rnn_time_major_runs_the_sequence_max_time_times():
    """litert's hybrid time-major loop, checked on litert itself: its output is that of max_time sweeps of
    both cells over the sequence (the state carried from sweep to sweep), not of one sweep."""
    from workbench.interpreter.kernels import _rnn

    model, feeds = rc.more.build_case("birnn_hyb_time_major_repeats_the_sequence")
    it = Interpreter(model=model)
    it.allocate_tensors()
    node, _, d, _ = it.prepared()[0]
    assert d.kind == "hybrid" and d.time_major and d.max_time == 4
    theirs = litert_session.run_calls(dump(model), [("invoke", feeds[0])])[0][0]
    value = {k: it.get_tensor(node.inputs[k]) for k in (1, 2, 3)}
    x = feeds[0][0]

    def forward_after(sweeps):
        h = np.zeros((d.n_batch, d.fw_num_units), np.float32)
        for _ in range(sweeps):
            y = _rnn.eval_hybrid(x, None, value[1], value[2], value[3], None, h, d.activation_code,
                                 d.fw_weight_scales, False, True)
        return y

    rc.quantized.assert_bitwise([[forward_after(d.max_time)]], [[theirs]], "max_time sweeps")
    assert not np.array_equal(forward_after(1), theirs)


def test_float_rnn_matrix_products_add_in_neon_order():
    """quant.recurrent's float MatrixBatchVectorMultiplyAccumulate: four lanes, ((l0 + l1) + l2) + l3 added to
    the result, then the tail column by column (left to right in float32 the 1s next to 1e8 are lost)."""
    from workbench.interpreter.quant.recurrent import matrix_batch_vector_multiply_accumulate

    m = np.float32([[1e8, 1, 0, 0, -1e8, 1, 0, 0, 1]])
    got = matrix_batch_vector_multiply_accumulate(m, np.ones((1, 9), np.float32), np.float32([[0.5]]))
    assert got.tolist() == [[3.5]]        # lanes (1e8 − 1e8, 1 + 1, 0, 0): 0.5 + 2, then + 1
    # the lane sum is always added (+0.0 with fewer than 4 columns), so a −0.0 bias comes out +0.0
    zero = matrix_batch_vector_multiply_accumulate(np.float32([[-0.0]]), np.ones((1, 1), np.float32),
                                                   np.float32([[-0.0]]))
    assert zero[0, 0] == 0 and not np.signbit(zero[0, 0])
