"""The trained digits CNN (``sample_models/digits_cnn_float.tflite``, made by ``dev/train_digits.py``).

A real classifier with its held-out data committed next to it (``sample_models/digits_split.npz``:
scikit-learn's 8x8 digits, stratified 75 / 25 split, random_state=0), for the heterogeneous-execution
experiments (the TI paper's Table I).  Checked here, without TensorFlow or scikit-learn:

* the files are the ones the manifest records (sha256, size, arrays), and the split is what the script
  says: 1347 + 450 images in [0, 1] (multiples of 1/16), every class in both parts in proportion;
* the model is the documented network (ops, shapes, parameter count) and a TIDL-like target's
  allowlist takes every op but MEAN;
* workbench.Interpreter and ai-edge-litert (in a child process) give the same probabilities, within the
  float tolerance of ``tests/sample_models/test_sample_models.py``, for the whole held-out set run as one batch
  (``resize_tensor_input`` to [450, 8, 8, 1] in both) and for one image at the stored shape [1, 8, 8, 1];
  the batch gives the per-image results;
* the held-out accuracy computed by workbench.Interpreter is at least 0.95 and is what the manifest
  records (measured by TensorFlow Lite when the model was made), to three decimals.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import workbench
from helpers import litert_runner, litert_session
from workbench.interpreter import Interpreter
from workbench.schema import op_name

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"
MODEL = SAMPLES / "digits_cnn_float.tflite"
SPLIT = SAMPLES / "digits_split.npz"
ENTRY = next(e for e in json.loads((SAMPLES / "manifest.json").read_text())["models"]
             if e["name"] == MODEL.name)

FLOAT_RTOL, FLOAT_ATOL = 1e-4, 1e-6  # as tests/sample_models/test_sample_models.py compares float outputs with LiteRT's
OPS = ["CONV_2D", "CONV_2D", "MAX_POOL_2D", "CONV_2D", "MEAN", "FULLY_CONNECTED", "SOFTMAX"]
PER_IMAGE = 25  # held-out images also run one at a time at the stored shape


@pytest.fixture(scope="module")
def split() -> dict[str, np.ndarray]:
    with np.load(SPLIT) as z:
        return {key: z[key] for key in z.files}


@pytest.fixture(scope="module")
def ours(split) -> np.ndarray:
    """workbench.Interpreter on the whole held-out set as one batch."""
    it = Interpreter(model_path=MODEL)
    inp = it.get_input_details()[0]["index"]
    it.resize_tensor_input(inp, split["x_test"].shape)
    it.allocate_tensors()
    it.set_tensor(inp, split["x_test"])
    it.invoke()
    return np.array(it.get_tensor(it.get_output_details()[0]["index"]))


@pytest.fixture(scope="module")
def litert(split) -> np.ndarray:
    """ai-edge-litert (child process) on the same batch: resize_tensor_input, allocate, invoke."""
    (outputs,) = litert_session.run_calls(MODEL.read_bytes(), [("invoke", [split["x_test"]])])
    (probs,) = outputs
    return probs


# --------------------------------------------------------------------------------------------
# the files


def test_files_are_the_ones_the_manifest_records():
    data, npz = MODEL.read_bytes(), SPLIT.read_bytes()
    assert hashlib.sha256(data).hexdigest() == ENTRY["sha256"] and len(data) == ENTRY["bytes"]
    assert ENTRY["bytes"] < 100_000
    assert ENTRY["data"]["name"] == SPLIT.name
    assert hashlib.sha256(npz).hexdigest() == ENTRY["data"]["sha256"] and len(npz) == ENTRY["data"]["bytes"]
    made = ENTRY["made_by"]
    assert made["script"] == "dev/train_digits.py" and (ROOT / made["script"]).is_file()
    assert made["settings"]["mode"] == "float32 (no optimizations)"
    assert made["tensorflow"] and made["scikit_learn"] and made["seeds"]


def test_split_is_the_stratified_digits_split(split):
    want = {k: (tuple(v["shape"]), v["dtype"]) for k, v in ENTRY["data"]["arrays"].items()}
    assert {k: (v.shape, str(v.dtype)) for k, v in split.items()} == want
    assert want == {"x_train": ((1347, 8, 8, 1), "float32"), "y_train": ((1347,), "int64"),
                    "x_test": ((450, 8, 8, 1), "float32"), "y_test": ((450,), "int64")}
    for x in (split["x_train"], split["x_test"]):
        assert x.min() == 0.0 and x.max() == 1.0
        assert np.array_equal(x * 16, np.round(x * 16))  # the digits' 0..16 scaled by 1/16
    train, test = np.bincount(split["y_train"], minlength=10), np.bincount(split["y_test"], minlength=10)
    assert train.sum() + test.sum() == 1797 and len(train) == len(test) == 10
    # stratified: each class is held out in proportion (25 % of its images, rounded either way)
    assert np.all(np.abs(test - 0.25 * (train + test)) <= 1)


# --------------------------------------------------------------------------------------------
# the model


def test_model_is_the_documented_cnn():
    model = workbench.load(MODEL)
    assert not model.load_notes
    sg = model.subgraphs[0]
    assert [op_name(model.operator_codes[o.opcode_index]) for o in sg.operators] == OPS
    (x,), (y,) = sg.inputs, sg.outputs
    assert (sg.tensors[x].shape, sg.tensors[x].type.name) == ((1, 8, 8, 1), "FLOAT32")
    assert (sg.tensors[y].shape, sg.tensors[y].type.name) == ((1, 10), "FLOAT32")
    params = sum(int(np.prod(sg.tensors[i].shape)) for o in sg.operators
                 if op_name(model.operator_codes[o.opcode_index]) in ("CONV_2D", "FULLY_CONNECTED")
                 for i in o.inputs[1:3] if i >= 0)
    assert params == ENTRY["made_by"]["parameters"] == 6218


def test_the_tidl_target_takes_every_op_of_the_cnn_its_mean_as_pooling():
    # TI's TFLite operator table maps a (spatial) MEAN to the pooling layer
    allow = json.loads((ROOT / "workbench" / "partition" / "targets" / "tidl.json").read_text())["ops"]
    assert [op for op in OPS if op not in allow] == []
    assert allow["MEAN"]["reduce_axes"] == [1, 2]


# --------------------------------------------------------------------------------------------
# the runtimes


def test_workbench_and_litert_agree_on_the_held_out_batch(ours, litert):
    assert ours.shape == litert.shape == (450, 10) and ours.dtype == litert.dtype == np.float32
    np.testing.assert_allclose(ours, litert, rtol=FLOAT_RTOL, atol=FLOAT_ATOL)
    assert np.array_equal(ours.argmax(1), litert.argmax(1))
    np.testing.assert_allclose(ours.sum(1), 1.0, rtol=1e-5)


def test_one_image_at_the_stored_shape_agrees_with_litert_and_with_the_batch(split, ours, tmp_path):
    x = split["x_test"][:PER_IMAGE]
    it = Interpreter(model_path=MODEL)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]
    single = []
    for image in x:
        it.set_tensor(inp, image[None])
        it.invoke()
        single.append(np.array(it.get_tensor(out))[0])
    np.testing.assert_allclose(np.stack(single), ours[:PER_IMAGE], rtol=FLOAT_RTOL, atol=FLOAT_ATOL)
    # LiteRT at the stored shape, through the shared runner (no resize)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, input_0=x[:1])
    r = litert_runner.run(MODEL, inputs, tmp_path / "out.npz")
    assert r.ok, r.describe()
    assert r.outputs["output_0"].shape == (1, 10)
    np.testing.assert_allclose(single[0], r.outputs["output_0"][0], rtol=FLOAT_RTOL, atol=FLOAT_ATOL)


def test_held_out_accuracy_is_what_the_manifest_records(split, ours, litert):
    y = split["y_test"]
    accuracy = float(np.mean(ours.argmax(1) == y))
    assert accuracy >= 0.95
    assert round(accuracy, 3) == round(ENTRY["accuracy"]["held_out"], 3)
    assert ENTRY["accuracy"]["of"] == len(y)
    assert float(np.mean(litert.argmax(1) == y)) == accuracy
