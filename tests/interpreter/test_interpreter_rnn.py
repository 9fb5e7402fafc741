"""Stateful kernels: LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM, RNN,
UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN (float32) and SVDF (float32 and int8).

Every case is a one-op model built with ModelBuilder (the LSTM's 20/24/48 input slots come from
the helpers below), versioned by the workbench's own rules, and run as a *session*: invoke on x1,
invoke on x2 (the state carried over in the variable tensors), reset_all_variables(), invoke on x1
again (must repeat the first result).  The same calls run in ai-edge-litert in a child process;
every float output of every call must satisfy max|ours - litert| <= 1e-5 * (max|litert| + 1), every
int8 output must be equal.  Our speed
layer is also compared with our teaching layer (``reference=True``); tests/interpreter/kernels/test_lstm.py,
test_rnn.py and test_svdf.py run the same cases through OpLayers (float RNN and SVDF bit for bit).

A Keras-converted LSTM model (tests/data/keras_lstm.tflite, made by dev/make_keras_lstm.py with
TensorFlow 2.21) checks what the converter really emits.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import litert_session
from helpers.interpreter_rnn_cases import CASES, _uslstm, build_case, rng_for
from workbench.errors import UnsupportedOpError
from workbench.interpreter import Interpreter
from workbench.schema import (
    ActivationFunctionType as Act,
)

DATA = Path(__file__).resolve().parents[1] / "data"
TOL = 1e-5


# ------------------------------------------------------------------------------------------------
# running


def calls_for(feeds):
    return [("invoke", feeds[0]), ("invoke", feeds[1]), ("reset",), ("invoke", feeds[0])]


def ours(model, calls, reference=False):
    return litert_session.run_ours(Interpreter(model=model, reference=reference), calls)


def assert_close(a_calls, b_calls, what):
    for k, (a, b) in enumerate(zip(a_calls, b_calls)):
        if a is None:
            assert b is None
            continue
        assert len(a) == len(b)
        for j, (x, y) in enumerate(zip(a, b)):
            assert x.shape == y.shape and x.dtype == y.dtype, f"{what} call {k} output {j}"
            if x.dtype.kind in "iu":          # quantized: bit-exact
                np.testing.assert_array_equal(x, y, err_msg=f"{what} call {k} output {j}")
                continue
            err = float(np.max(np.abs(x - y))) if x.size else 0.0
            assert err <= TOL * (float(np.max(np.abs(y))) + 1), f"{what} call {k} output {j}: max error {err}"


@pytest.fixture(scope="module")
def litert_results():
    return litert_session.run_cases(sorted(CASES), build_case, calls_for, workers=4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_litert(name, litert_results):
    model, feeds = build_case(name)
    theirs = litert_results[name]
    assert not isinstance(theirs, Exception), theirs
    mine = ours(model, calls_for(feeds))
    assert_close(mine, theirs, name)
    # the state really carries over (second call differs from a fresh run) and reset really resets
    first, second, _, again = mine
    np.testing.assert_array_equal(first[0], again[0])
    fresh = ours(model, [("invoke", feeds[1])])[0]
    assert any(not np.allclose(a, c) for a, c in zip(second, fresh))


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_matches_reference(name):
    model, feeds = build_case(name)
    assert_close(ours(model, calls_for(feeds)), ours(model, calls_for(feeds), reference=True), name)


def test_versions_from_the_rules():
    model, _ = build_case("uslstm_diagonal_v4")
    assert [c.version for c in model.operator_codes] == [4]
    for name in ("uslstm_basic", "lstm_basic", "bilstm_aux_weights", "rnn_tanh", "usrnn_batch_major",
                 "birnn_separate", "svdf_f32_relu"):
        model, _ = build_case(name)
        assert [c.version for c in model.operator_codes] == [1], name
    model, _ = build_case("svdf_int8")
    assert [c.version for c in model.operator_codes] == [3]


def test_opdata_tells_the_variant():
    model, _ = build_case("uslstm_layer_norm_everything")
    it = Interpreter(model=model)
    it.allocate_tensors()
    d = it.prepared()[0][2]
    assert (d.use_cifg, d.use_peephole, d.use_projection, d.use_layer_norm) == (True, True, True, True)
    assert (d.max_time, d.n_batch, d.n_input, d.n_cell, d.n_output, d.time_major) == (5, 2, 3, 4, 3, True)
    assert d.activation == "TANH" and d.cell_clip == 1.0


@pytest.mark.parametrize("kw, match", [
    ({"act": Act.NONE}, "NONE"),
    ({"variable": False}, "not a variable tensor"),
    ({"drop": 1}, "input to forget is absent"),
    ({"drop": 4}, "recurrent_to_input_weights must both be present"),
])
def test_bad_lstm_models_are_named_errors(kw, match):
    it = Interpreter(model=_uslstm(**kw))
    with pytest.raises(UnsupportedOpError, match=match):
        it.allocate_tensors()


def test_keras_converted_lstm_matches_litert():
    """A real converter output: Keras LSTM(8) -> UNIDIRECTIONAL_SEQUENCE_LSTM (see dev/make_keras_lstm.py)."""
    data = (DATA / "keras_lstm.tflite").read_bytes()
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    ops = {n.op_name for n in it.nodes}
    assert "UNIDIRECTIONAL_SEQUENCE_LSTM" in ops
    shape = tuple(it.get_input_details()[0]["shape"])
    rng = rng_for("keras")
    feeds = [[rng.uniform(-1, 1, shape).astype(np.float32)] for _ in range(2)]
    calls = calls_for(feeds)
    assert_close(litert_session.run_ours(Interpreter(model_content=data), calls),
                 litert_session.run_calls(data, calls), "keras_lstm")
