"""The LSTM family -- LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM -- in one file, as they share
``kernels/_lstm*.py`` (teaching layer) and ``fast/lstm.py`` (speed layer): float32, hybrid and integer
(8x8_16) cases (tests/helpers/recurrent_cases.py).

The teaching layer computes the speed layer's bits under both variants; hybrid and integer outputs are
bit-exact with LiteRT's builtin kernels and with its BUILTIN_REF kernels; float32 outputs agree with both to
1e-5 (TFLite's float FullyConnected sums in another order than numpy's BLAS).  The two variants never
differ: BUILTIN_REF registers the very same LSTM kernels as BUILTIN.  Recurrent ops keep their state in
variable tensors, so every case also runs two invokes on one interpreter against LiteRT.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import litert_batch
from helpers import recurrent_cases as rc
from helpers.op_layers import OpLayers
from workbench import dump
from workbench.interpreter import Interpreter

CASES = rc.cases(rc.LSTM_OPS)
LAYERS = OpLayers(CASES)
FLOAT = {n for n in CASES if n in rc.floats.CASES}          # float32: close to LiteRT, not bit for bit
EXACT = sorted(set(CASES) - FLOAT)
# UNIDIRECTIONAL_SEQUENCE_LSTM v4 (diagonal recurrent tensors) is not in BUILTIN_REF (registered up to v3)
NOT_IN_BUILTIN_REF = {"uslstm_diagonal_v4"}
REF = sorted(set(CASES) - NOT_IN_BUILTIN_REF)


@pytest.mark.parametrize("case", sorted(CASES))
def test_teaching_layer_is_the_speed_layer(case):
    LAYERS.check_layers(case)


@pytest.mark.parametrize("case", EXACT)
def test_bit_exact_with_litert_builtin(case):
    LAYERS.check_litert(case)


@pytest.mark.parametrize("case", sorted(FLOAT))
def test_float_close_to_litert_builtin(case):
    rc.assert_close(LAYERS.run(case), LAYERS.litert(case), f"{case} (ours vs LiteRT builtin)")


@pytest.mark.parametrize("case", REF)
def test_reference_variant_matches_litert_builtin_ref(case):
    if case in FLOAT:
        rc.assert_close(LAYERS.run(case, reference=True, variant="reference"), LAYERS.litert(case, "BUILTIN_REF"),
                        f"{case} (reference variant vs LiteRT BUILTIN_REF)")
    else:
        LAYERS.check_reference_variant(case)


def test_builtin_ref_has_no_diagonal_lstm():
    # so the diagonal case stays out of the reference-variant check; this fails when LiteRT adds it
    model, inputs = LAYERS.build("uslstm_diagonal_v4")
    [(status, message)] = litert_batch.run_many([(dump(model), inputs)], resolver="BUILTIN_REF")
    assert status == "error" and \
        "Didn't find op for builtin opcode 'UNIDIRECTIONAL_SEQUENCE_LSTM' version '4'" in message, (status, message)


def test_both_builds_compute_the_lstm_alike():
    # BUILTIN_REF registers the same LSTM kernels (lstm_eval.cc) as BUILTIN: no policy of the variants applies
    assert all(LAYERS.differing_variants(case) == 0 for case in CASES)


# -- two invokes: the state carries over --------------------------------------------------------------


@pytest.fixture(scope="module")
def litert_sessions():
    return rc.litert_sessions(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_two_invokes_carry_the_state_as_litert(case, litert_sessions):
    rc.check_two_invokes(case, litert_sessions, builtin_ref_refuses=case in NOT_IN_BUILTIN_REF, close=case in FLOAT)


# -- the speed layer -------------------------------------------------------------------------------


def _prepared(case):
    model, _ = LAYERS.build(case)
    it = Interpreter(model=model)
    it.allocate_tensors()
    return it.prepared()[0]


@pytest.mark.parametrize("case, label", [
    ("uslstm_basic", "unidirectional_sequence_lstm"),
    ("hyb_asymmetric", "unidirectional_sequence_lstm/hybrid(row sums at prepare)"),
    ("int_basic", "unidirectional_sequence_lstm/8x8_16(activation tables)"),
    ("lstm_hyb_basic", "lstm/hybrid(row sums at prepare)"),
    ("lstm_int_basic", "lstm/8x8_16(activation tables)"),
    ("bilstm_hyb_time_major", "bidirectional_sequence_lstm/hybrid(row sums at prepare)"),
    ("bilstm_separate_outputs", "bidirectional_sequence_lstm"),
])
def test_fast_paths_are_bound_at_prepare(case, label):
    assert _prepared(case)[1] == label


def test_opdata_holds_facts_only():
    # the row sums and lookup tables live in the fast path, not in the OpData
    for case in ("hyb_asymmetric", "int_basic", "bilstm_hyb_time_major"):
        text = repr(_prepared(case)[2])
        assert "row_sums" not in text and "table" not in text, text


def test_integer_lstm_activation_tables_are_the_fixed_point_functions():
    """The fast integer LSTM step looks gemmlowp's sigmoid / tanh up in tables (int16 in, Q0.15 out)."""
    from workbench.interpreter import quant
    from workbench.interpreter.fast.lstm import int16_activation_table

    sig, tanh = int16_activation_table("logistic", 3), int16_activation_table("tanh", 3)
    assert sig.shape == (65536,) and sig[32768] == 16384 and tanh[32768] == 0      # σ(0) = 0.5, tanh(0) = 0
    assert 0 <= sig.min() and sig.max() <= 32767 and sig[0] < 100 and sig[-1] > 32700
    for bits in (0, 4, 6):          # the cell state's tanh: 15 + cell_scale integer bits
        x = np.arange(-32768, 32768, 97, dtype=np.int64)
        np.testing.assert_array_equal(int16_activation_table("tanh", bits)[x + 32768], quant.fp_tanh(x, bits, 16))
