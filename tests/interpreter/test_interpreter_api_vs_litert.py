"""API completeness against ai-edge-litert: signatures, tensor details, tensor(), threads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers.builders import add_fc_model
from helpers.control_flow_models import assert_same
from helpers.litert_session import run_calls, run_ours
from workbench import dump
from workbench.interpreter import Interpreter
from workbench.interpreter import interpreter as interpreter_module
from workbench.schema import AddOptions, ModelBuilder, SignatureDef, TensorMap
from workbench.schema import BuiltinOperator as B

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def two_signature_model():
    """Main: (b, a) -> (z_sum, y_prod); inputs listed in non-alphabetical order on purpose."""
    import dataclasses

    b = ModelBuilder()
    bb = b.input("b_in", (2,))
    aa = b.input("a_in", (2,))
    s = b.tensor("sum", (2,))
    b.op(B.ADD, [aa, bb], [s], AddOptions())
    p = b.tensor("prod", (2,))
    b.op(B.MUL, [aa, s], [p])
    b.output(s, p)
    m = b.build()
    sig = SignatureDef(inputs=(TensorMap(name="b", tensor_index=bb), TensorMap(name="a", tensor_index=aa)),
                       outputs=(TensorMap(name="z_sum", tensor_index=s), TensorMap(name="y_prod", tensor_index=p)),
                       signature_key="serve", subgraph_index=0)
    sig2 = dataclasses.replace(sig, signature_key="also")
    return dataclasses.replace(m, signature_defs=(sig, sig2))


def _jsonable(d):
    out = {}
    for k, v in d.items():
        if isinstance(v, np.ndarray):
            v = v.tolist()
        elif k == "dtype":
            v = np.dtype(v).name
        elif isinstance(v, dict):
            v = _jsonable(v)
        elif isinstance(v, tuple):
            v = list(v)
        out[k] = v
    return out


@pytest.mark.parametrize("name", ["while_loop.tflite", "resource_variable.tflite", None])
def test_signature_list_and_tensor_details_match_litert(name):
    data = (SAMPLES / name).read_bytes() if name else dump(two_signature_model())
    theirs = run_calls(data, [("signature_list",), ("details",)])
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    assert it.get_signature_list() == theirs[0]
    ours_details = it.get_tensor_details()
    assert len(ours_details) == len(theirs[1])
    for a, b in zip(ours_details, theirs[1]):
        assert set(a) == set(b)
        assert _jsonable(a) == _jsonable(b), (a["name"], a, b)


def test_signature_runner_matches_litert_and_names_outputs():
    data = dump(two_signature_model())
    a = np.array([1.0, 2.0], np.float32)
    bv = np.array([0.5, -4.0], np.float32)
    calls = [("signature", "serve", {"a": a, "b": bv}), ("signature", "also", {"a": bv, "b": a})]
    theirs = run_calls(data, calls)
    it = Interpreter(model_content=data)
    ours = run_ours(it, calls)
    assert_same(ours, theirs)
    np.testing.assert_allclose(ours[0]["y_prod"], a * (a + bv))
    runner = it.get_signature_runner("serve")
    assert set(runner.get_input_details()) == {"a", "b"}
    assert runner.get_output_details()["z_sum"]["index"] == 2
    with pytest.raises(ValueError, match="signature_key is None"):
        it.get_signature_runner()
    with pytest.raises(ValueError, match="no signature"):
        it.get_signature_runner("missing")


def test_signature_runner_resizes_inputs_like_litert():
    data = dump(add_fc_model())
    Interpreter(model_content=data)
    from workbench.schema import load
    m = load(data)
    import dataclasses
    sig = SignatureDef(inputs=(TensorMap(name="x", tensor_index=0),), outputs=(TensorMap(name="y", tensor_index=5),),
                       signature_key="s", subgraph_index=0)
    data = dump(dataclasses.replace(m, signature_defs=(sig,)))
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    theirs = run_calls(data, [("signature", "s", {"x": x})])
    ours = run_ours(Interpreter(model_content=data), [("signature", "s", {"x": x})])
    assert_same(ours, theirs)
    assert ours[0]["y"].shape == (3, 3)


def test_tensor_gives_live_views_for_reading_and_writing():
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    inp = it.tensor(it.get_input_details()[0]["index"])
    out = it.tensor(it.get_output_details()[0]["index"])
    results = []
    for k in range(3):
        inp().fill(float(k))
        it.invoke()
        results.append(out().copy())
        assert np.shares_memory(out(), out())           # a view, not a copy
    assert not np.allclose(results[0], results[1])
    it.set_tensor(0, np.full((1, 4), 2.0, np.float32))
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(5), results[2])


def test_num_threads_is_capped_by_the_cpus_and_does_not_change_results(monkeypatch):
    calls = []
    monkeypatch.setattr(interpreter_module._blas, "set_threads", lambda n: calls.append(n))
    x = np.ones((1, 4), np.float32)
    outs = []
    for n in (None, 1, 64):
        it = Interpreter(model=add_fc_model(), num_threads=n)
        it.allocate_tensors()
        it.set_tensor(0, x)
        it.invoke()
        outs.append(it.get_tensor(5))
        assert it.blas_threads == (1 if n in (None, 1) else min(64, interpreter_module._available_cpus()))
    assert calls == [1, 1, min(64, interpreter_module._available_cpus())]
    np.testing.assert_array_equal(outs[0], outs[2])


def test_num_subgraphs_and_subgraph_tensor_access():
    data = (SAMPLES / "while_loop.tflite").read_bytes()
    it = Interpreter(model_content=data)
    assert it.num_subgraphs() == 3
    it.allocate_tensors()
    it.set_tensor(0, np.ones((1, 4), np.float32))
    it.set_tensor(1, np.array(2, np.int32))
    it.invoke()
    # the body ran, so its tensors have values; they are readable by subgraph index
    assert it.get_tensor(0, subgraph_index=2).shape == ()
    assert [d["name"] for d in it.get_tensor_details(1)][:2] == ["while_cond_arg0", "while_cond_arg1"]
