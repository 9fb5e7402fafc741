"""More quantized recurrent and misc kernels, bit-exact against ai-edge-litert's builtin kernels.

* hybrid SVDF (v2; v4 with asymmetric_quantize_inputs): float32 input and output, int8 weights_feature
  and weights_time; the float32 SVDF (v1) too;
* hybrid BIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_RNN (v2; v3 asymmetric), including
  litert's own loops (the hybrid bidirectional RNN runs a time-major sequence max_time times);
* TOPK_V2 v3 (int16 input, k or indices) and DYNAMIC_UPDATE_SLICE v3 (float16) / v4 (int16) plus the
  element types litert copies at v1.

Every float output is compared byte for byte.  Each case is a tiny one-op model built with ModelBuilder,
versioned by the workbench's rules, run as a session (invoke, invoke with the state carried over, an
all-zero input where it matters, reset_all_variables, invoke) in our interpreter -- speed layer and
teaching layer -- and in litert (child process).  The OpData and fast-path tests of SVDF, the bidirectional
RNN's max_time sweeps and the integer LSTM's lookup tables live in tests/interpreter/kernels/test_svdf.py,
test_rnn.py and test_lstm.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import litert_session
from helpers.quantized_rnn_cases import assert_bitwise, int8_weights, ours, q, rng_for
from helpers.quantized_svdf_bidirectional_cases import CASES, STATELESS, _bad_bidi_rnn_aux, build_case
from workbench.errors import UnsupportedOpError
from workbench.interpreter import Interpreter
from workbench.schema import (
    ActivationFunctionType as Act,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.schema import (
    ModelBuilder,
    SVDFOptions,
)
from workbench.versioning import update_versions

# ------------------------------------------------------------------------------------------------
# running


def calls_for(feeds):
    return [("invoke", f) for f in feeds] + [("reset",), ("invoke", feeds[0])]


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
    assert_bitwise(ours(model, calls_for(feeds), reference=True), theirs, name + " (reference)")
    if name in STATELESS:
        return
    first, second, again = mine[0], mine[1], mine[-1]
    for a, c in zip(first, again):
        np.testing.assert_array_equal(a, c)                                  # reset really resets
    fresh = ours(model, [("invoke", feeds[1])])[0]
    assert any(not np.array_equal(a, c) for a, c in zip(second, fresh))     # the state really carries over


def test_versions_from_the_rules():
    want = {"svdf_hyb_tanh": 2, "svdf_hyb_asym_relu": 4, "bilstm_hyb_time_major": 2,
            "bilstm_hyb_batch_major_asym": 3, "birnn_hyb_batch_major": 2, "birnn_hyb_merged_time_major_asym": 3,
            "topk_int16": 3, "topk_float_int16_k": 3, "topk_int8_int16_indices": 3, "dus_float16": 3,
            "dus_int16": 4, "dus_uint8": 1}
    for name, version in want.items():
        model, _ = build_case(name)
        assert [c.version for c in model.operator_codes] == [version], name


def test_hybrid_aux_input_of_another_width_is_refused():
    with pytest.raises(UnsupportedOpError, match="row length"):
        Interpreter(model=_bad_bidi_rnn_aux(2)).allocate_tensors()
    Interpreter(model=_bad_bidi_rnn_aux(4)).allocate_tensors()          # same width: fine


def test_hybrid_svdf_needs_int8_weights_time():
    rng = rng_for("svdf int16 time")
    b = ModelBuilder()
    x = b.input("x", (1, 4))
    ins = [x, int8_weights(b, rng, "wf", (2, 4), 0.01),
           b.constant("wt", rng.integers(-300, 300, (2, 3)).astype(np.int16), quantization=q(0.001)), -1,
           b.tensor("state", (1, 6), is_variable=True)]
    y = b.tensor("y", (1, 2))
    b.op(B.SVDF, ins, [y], SVDFOptions(rank=1, fused_activation_function=Act.RELU))
    b.output(y)
    with pytest.raises(UnsupportedOpError, match="weights_time"):
        Interpreter(model=update_versions(b.build())).allocate_tensors()


def test_dynamic_update_slice_v5_is_not_registered():
    model, _ = build_case("dus_int16")
    import dataclasses
    codes = tuple(dataclasses.replace(c, version=5) for c in model.operator_codes)
    with pytest.raises(UnsupportedOpError, match="version 5 is not registered"):
        Interpreter(model=dataclasses.replace(model, operator_codes=codes)).allocate_tensors()
