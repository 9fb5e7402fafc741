"""Quantized recurrent kernels, bit-exact against ai-edge-litert's builtin kernels.

* the integer ("8x8_16") LSTM: UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM with int8 input / output state /
  weights, int16 cell state, 5 intermediate tensors (the gate scales of a layer-norm LSTM and the
  effective hidden scale): every int8 output element equal;
* hybrid (dynamic-range) LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM, RNN, UNIDIRECTIONAL_SEQUENCE_RNN and
  EMBEDDING_LOOKUP: float32 input and output, int8 weights: every float output bit equal (compared
  byte for byte).  Rows that are entirely zero and layouts that put gate buffers off 16-byte
  boundaries (Eigen's one-value logistic path) are part of the cases.

Every case is a tiny one-op model built with ModelBuilder, versioned by the workbench's rules, and run
as a session (invoke x1, invoke x2 with the state carried over, reset_all_variables, invoke x1) in
our interpreter -- speed layer and teaching layer -- and in litert (child process).  The converter-made
sample_models/kws_lstm_int8.tflite and kws_lstm_dynamic.tflite (a Keras LSTM keyword spotter) run
too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import litert_session
from helpers.quantized_rnn_cases import CASES, _int_lstm_model, assert_bitwise, build_case, ours, rng_for
from workbench import dump, load
from workbench.errors import UnsupportedOpError
from workbench.interpreter import Interpreter
from workbench.schema import (
    ActivationFunctionType as Act,
)

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "sample_models"


# ------------------------------------------------------------------------------------------------
# running


def calls_for(feeds):
    return [("invoke", feeds[0]), ("invoke", feeds[1]), ("reset",), ("invoke", feeds[0])]


@pytest.fixture(scope="module")
def litert_results():
    return litert_session.run_cases(sorted(CASES), build_case, calls_for, workers=2)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_litert(name, litert_results):
    model, feeds = build_case(name)
    theirs = litert_results[name]
    assert not isinstance(theirs, Exception), theirs
    mine = ours(model, calls_for(feeds))
    assert_bitwise(mine, theirs, name)
    first, second, _, again = mine
    np.testing.assert_array_equal(first[0], again[0])           # reset really resets
    if not name.startswith("embedding"):                        # stateless
        fresh = ours(model, [("invoke", feeds[1])])[0]
        assert any(not np.array_equal(a, c) for a, c in zip(second, fresh))   # the state really carries over


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_matches_reference(name):
    model, feeds = build_case(name)
    assert_bitwise(ours(model, calls_for(feeds)), ours(model, calls_for(feeds), reference=True), name)


# ------------------------------------------------------------------------------------------------
# converter-made models: a Keras LSTM keyword spotter (sample_models, dev/convert_sample_models.py)


def lstm_only(model):
    """The model cut after its first operator (the LSTM), so its output is compared directly (the
    float FULLY_CONNECTED / SOFTMAX after it are other kernels' business)."""
    import dataclasses
    sg = model.subgraphs[0]
    op = sg.operators[0]
    cut = dataclasses.replace(sg, operators=(op,), outputs=tuple(op.outputs))
    return dataclasses.replace(model, subgraphs=(cut,) + tuple(model.subgraphs[1:]))


@pytest.mark.parametrize("file, kind", [("kws_lstm_int8.tflite", "integer"), ("kws_lstm_dynamic.tflite", "hybrid")])
def test_keras_keyword_spotter_lstm_matches_litert(file, kind):
    model = load((SAMPLES / file).read_bytes())
    it = Interpreter(model=model)
    it.allocate_tensors()
    node, _, data, _ = it.prepared()[0]
    assert node.op_name == "UNIDIRECTIONAL_SEQUENCE_LSTM" and data.kind == kind
    cut = lstm_only(model)
    det = it.get_input_details()[0]
    rng = rng_for(file)
    if kind == "integer":
        feeds = [[rng.integers(-128, 128, det["shape"]).astype(np.int8)] for _ in range(2)]
        assert data.integer_lstm_param.hidden_zp == -1            # the state's zero point is not 0
    else:
        feeds = [[rng.uniform(-1.0, 1.0, det["shape"]).astype(np.float32)] for _ in range(2)]
        assert data.hybrid.asymmetric_quantize_inputs
    calls = calls_for(feeds)
    theirs = litert_session.run_calls(dump(cut), calls)
    assert_bitwise(ours(cut, calls), theirs, file)
    assert_bitwise(ours(cut, calls, reference=True), theirs, file + " (reference)")
    # the whole model (LSTM, strided slice, fully connected, softmax) runs too
    whole = ours(model, calls)
    assert whole[0][0].shape == tuple(it.get_output_details()[0]["shape"])


# ------------------------------------------------------------------------------------------------
# versions, OpData, refusals


def test_versions_from_the_rules():
    want = {"int_basic": 1, "hyb_basic": 2, "hyb_asymmetric": 3, "lstm_int_basic": 1, "lstm_hyb_basic": 3,
            "lstm_hyb_asym_peephole_projection": 4, "rnn_hyb_tanh": 2, "rnn_hyb_relu_asym": 3,
            "usrnn_hyb_batch_major": 2, "usrnn_hyb_time_major_relu6_asym": 3}
    for name, version in want.items():
        model, _ = build_case(name)
        assert [c.version for c in model.operator_codes] == [version], name


def test_opdata_has_tflite_names():
    model, _ = build_case("int_layer_norm_everything")
    it = Interpreter(model=model)
    it.allocate_tensors()
    p = it.prepared()[0][2].integer_lstm_param
    assert p.cell_scale == -11 and p.hidden_zp == -3
    assert set(p.multipliers) >= {"effective_input_to_forget_scale", "effective_recurrent_to_cell_scale",
                                  "effective_cell_to_output_scale", "effective_hidden_scale", "layer_norm_forget_scale"}
    assert "effective_input_to_input_scale" not in p.multipliers           # CIFG
    m, s = p.multipliers["effective_hidden_scale"]
    assert 2 ** 30 <= m < 2 ** 31 and abs(m * 2.0 ** (s - 31) - p.effective_scales["effective_hidden_scale"]) < 1e-9
    assert p.quantized_cell_clip == int(0.5 * 2 ** 11)
    assert set(p.effective_biases) >= {"input_to_forget_effective_bias", "recurrent_to_output_effective_bias"}


@pytest.mark.parametrize("kw, match", [
    ({"n_intermediates": 12}, "8x8_8"),
    ({"n_intermediates": 0}, "5 intermediate"),
    ({"cell_scale": 0.001}, "power of two"),
    ({"cell_scale": 2.0 ** -4}, "integer tanh"),
    ({"act": Act.RELU}, "always uses tanh"),
])
def test_bad_integer_lstm_models_are_named_errors(kw, match):
    it = Interpreter(model=_int_lstm_model(**kw))
    with pytest.raises(UnsupportedOpError, match=match):
        it.allocate_tensors()
