"""Train the small digits CNN in ``sample_models/`` (a dev tool; needs TensorFlow and scikit-learn).

A real classification task whose labels are available offline: the 8x8 handwritten digits that ship
with scikit-learn (``sklearn.datasets.load_digits``, 1797 images, 10 classes; UCI "Optical
Recognition of Handwritten Digits", bundled in the scikit-learn wheel, so nothing is downloaded).
The float model and the train / held-out split are committed, so the library, the tests, the
benchmarks and the notebooks never need TensorFlow or scikit-learn:

* ``sample_models/digits_cnn_float.tflite`` -- float32 input ``[1, 8, 8, 1]`` (pixel values 0..16
  divided by 16, so in [0, 1]), float32 output ``[1, 10]`` (softmax over the digits 0-9); converted
  by ``tf.lite.TFLiteConverter.from_keras_model`` without optimizations (no quantization).
* ``sample_models/digits_split.npz`` -- ``x_train`` (1347, 8, 8, 1) float32, ``y_train`` (1347,)
  int64, ``x_test`` (450, 8, 8, 1) float32, ``y_test`` (450,) int64: ``train_test_split`` with
  ``test_size=0.25, random_state=0, stratify=y``.  The npz is written with fixed zip timestamps,
  so a rerun writes the same bytes.
* its entry in ``sample_models/manifest.json`` (merged; other entries are kept): sha256, size,
  versions, seeds, training settings and the held-out accuracy measured with TensorFlow Lite's
  interpreter on the converted file.

The network is meant for heterogeneous execution (the TI paper's Table I, ``benchmarks/table1.py``):
a TIDL-like accelerator (``workbench/partition/targets/tidl.json``) takes the convolutions, the
pool, FULLY_CONNECTED and SOFTMAX, but not MEAN (global average pooling), so the graph splits into
an accelerator part, a CPU op and a second accelerator part::

    CONV_2D 3x3 8 (relu) -> CONV_2D 3x3 16 (relu) -> MAX_POOL_2D 2x2 -> CONV_2D 3x3 32 (relu)
    -> MEAN (global average pool) -> FULLY_CONNECTED 10 -> SOFTMAX          6,218 parameters

Run it with a Python that has TensorFlow and scikit-learn (a separate venv: TensorFlow is never a
dependency of the project)::

    python -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0 scikit-learn==1.9.1
    /tmp/tfvenv/bin/python dev/train_digits.py            # writes the two files and the manifest entry
    /tmp/tfvenv/bin/python dev/train_digits.py --check    # retrain in memory, compare with the manifest
    .venv/bin/pytest -q -n 0 tests/sample_models/test_digits_model.py tests/sample_models/test_sample_models.py

Made with TensorFlow 2.21.0 (tensorflow-cpu), Keras 3.15.1, numpy 2.4.6, scikit-learn 1.9.1 on
x86-64 Linux (CPU only, about 20 s): two runs write byte-identical files.  Seeds: the split's
``random_state=0``; ``keras.utils.set_random_seed(0)`` (Python, numpy and TensorFlow: weight
initialisation and the shuffling of each epoch) with ``tf.config.experimental.enable_op_determinism()``.
Another TensorFlow release, or another CPU, may give other weights and a slightly different
accuracy: then review the new figures, commit the files, and let the manifest record them.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import zipfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import sklearn  # noqa: E402
import tensorflow as tf  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "sample_models"
SCRIPT = "dev/train_digits.py"
MODEL_FILE = "digits_cnn_float.tflite"
SPLIT_FILE = "digits_split.npz"

SPLIT_SEED = 0          # train_test_split(random_state=...)
TEST_SIZE = 0.25
TRAIN_SEED = 0          # keras.utils.set_random_seed(...)
EPOCHS = 60
BATCH_SIZE = 32
LEARNING_RATE = 3e-3

USED_BY = ["tests/sample_models/test_digits_model.py", "tests/sample_models/test_sample_models.py",
           "tests/cli/test_cli_versions.py", "benchmarks/table1.py", "notebooks/06_heterogeneous_execution.ipynb"]
DEMONSTRATES = ("a trained classifier on a real, offline task (scikit-learn's 8x8 handwritten digits, held-out "
                "split in digits_split.npz): CONV_2D 3x3 (relu) -> CONV_2D 3x3 (relu) -> MAX_POOL_2D 2x2 -> "
                "CONV_2D 3x3 (relu) -> MEAN -> FULLY_CONNECTED -> SOFTMAX, float32 [1, 8, 8, 1] in [0, 1] -> "
                "[1, 10]; a TIDL-like accelerator offloads all but the MEAN (the TI paper's Table I: CPU float "
                "vs heterogeneous int8 execution, accuracy on the held-out set)")


# ------------------------------------------------------------------------------------------------
# data


def load_split():
    """The digits scaled to [0, 1] as NHWC float32, labels int64; stratified 75 / 25 split."""
    digits = load_digits()
    x = (digits.images.astype(np.float32) / np.float32(16.0))[..., None]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=TEST_SIZE, random_state=SPLIT_SEED, stratify=y)
    return {"x_train": np.ascontiguousarray(x_train), "y_train": np.ascontiguousarray(y_train),
            "x_test": np.ascontiguousarray(x_test), "y_test": np.ascontiguousarray(y_test)}


def npz_bytes(arrays: dict) -> bytes:
    """An .npz (what ``np.savez_compressed`` writes) with fixed member timestamps: reproducible bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, value in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(value), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


# ------------------------------------------------------------------------------------------------
# model


def build_model(batch_size: int | None = 1) -> keras.Model:
    """The network; batch 1 for the converted file (as it runs on a device), None for training."""
    L = keras.layers
    x = keras.Input((8, 8, 1), batch_size=batch_size, name="image")
    y = L.Conv2D(8, 3, padding="same", activation="relu", name="conv1")(x)
    y = L.Conv2D(16, 3, padding="same", activation="relu", name="conv2")(y)
    y = L.MaxPooling2D(2, name="pool")(y)
    y = L.Conv2D(32, 3, padding="same", activation="relu", name="conv3")(y)
    y = L.GlobalAveragePooling2D(name="gap")(y)
    y = L.Dense(10, activation="softmax", name="probs")(y)
    return keras.Model(x, y, name="digits_cnn")


def train(split: dict) -> tuple[keras.Model, dict]:
    keras.utils.set_random_seed(TRAIN_SEED)
    tf.config.experimental.enable_op_determinism()
    trainer = build_model(batch_size=None)  # trained in batches of BATCH_SIZE
    trainer.compile(optimizer=keras.optimizers.Adam(LEARNING_RATE),
                    loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = trainer.fit(split["x_train"], split["y_train"], epochs=EPOCHS, batch_size=BATCH_SIZE,
                          shuffle=True, verbose=0)
    model = build_model(batch_size=1)
    model.set_weights(trainer.get_weights())
    _, keras_acc = trainer.evaluate(split["x_test"], split["y_test"], verbose=0)
    info = {"final_train_loss": round(float(history.history["loss"][-1]), 4),
            "final_train_accuracy": round(float(history.history["accuracy"][-1]), 4),
            "keras_test_accuracy": round(float(keras_acc), 4)}
    return model, info


def convert(model: keras.Model) -> bytes:
    return tf.lite.TFLiteConverter.from_keras_model(model).convert()


def tflite_accuracy(data: bytes, x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    """Held-out accuracy of the converted file in TensorFlow Lite's interpreter, one image at a time."""
    it = tf.lite.Interpreter(model_content=data, experimental_op_resolver_type=(
        tf.lite.experimental.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))  # TFLite's builtin kernels
    it.allocate_tensors()
    inp, out = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]
    correct = 0
    for image, label in zip(x, y):
        it.set_tensor(inp, image[None])
        it.invoke()
        correct += int(np.argmax(it.get_tensor(out)[0]) == label)
    return correct / len(y), correct


def make() -> tuple[bytes, bytes, dict]:
    split = load_split()
    model, info = train(split)
    data = convert(model)
    acc, correct = tflite_accuracy(data, split["x_test"], split["y_test"])
    npz = npz_bytes(split)
    params = int(model.count_params())
    entry = {
        "name": MODEL_FILE,
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "made_by": {
            "script": SCRIPT,
            "function": "train",
            "tensorflow": tf.__version__,
            "keras": keras.__version__,
            "numpy": np.__version__,
            "scikit_learn": sklearn.__version__,
            "converter": "TFLiteConverter.from_keras_model",
            "settings": {"mode": "float32 (no optimizations)"},
            "seeds": {"train_test_split.random_state": SPLIT_SEED,
                      "keras.utils.set_random_seed": TRAIN_SEED,
                      "tf.config.experimental.enable_op_determinism": True},
            "training": {"dataset": "sklearn.datasets.load_digits (1797 8x8 images, values 0..16, scaled by 1/16)",
                         "split": f"train_test_split(test_size={TEST_SIZE}, random_state={SPLIT_SEED}, stratify=y)",
                         "optimizer": f"Adam(learning_rate={LEARNING_RATE})",
                         "loss": "sparse_categorical_crossentropy",
                         "epochs": EPOCHS, "batch_size": BATCH_SIZE, **info},
            "parameters": params,
        },
        "data": {"name": SPLIT_FILE, "sha256": hashlib.sha256(npz).hexdigest(), "bytes": len(npz),
                 "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in split.items()}},
        "accuracy": {"held_out": round(acc, 4), "correct": correct, "of": len(split["y_test"]),
                     "measured_with": f"tf.lite.Interpreter (TensorFlow {tf.__version__}, builtin kernels without "
                                      "XNNPACK), one image at a time, argmax of the output"},
        "demonstrates": DEMONSTRATES,
        "used_by": list(USED_BY),
    }
    return data, npz, entry


def write_manifest(entry: dict) -> None:
    path = OUT / "manifest.json"
    doc = json.loads(path.read_text())
    models = {e["name"]: e for e in doc["models"]}
    models[entry["name"]] = entry
    doc["models"] = [models[k] for k in sorted(models)]
    path.write_text(json.dumps(doc, indent=2) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true",
                   help="retrain in memory and compare the files' sha256 with the manifest (writes nothing)")
    args = p.parse_args(argv)
    data, npz, entry = make()
    print(f"{MODEL_FILE}: {len(data):,} bytes, {entry['made_by']['parameters']:,} parameters; "
          f"held-out accuracy {entry['accuracy']['held_out']:.4f} "
          f"({entry['accuracy']['correct']}/{entry['accuracy']['of']}); {SPLIT_FILE}: {len(npz):,} bytes")
    if args.check:
        old = {e["name"]: e for e in json.loads((OUT / "manifest.json").read_text())["models"]}.get(MODEL_FILE, {})
        same_model = old.get("sha256") == entry["sha256"]
        same_split = old.get("data", {}).get("sha256") == entry["data"]["sha256"]
        verdict = {True: "same", False: "DIFFERENT"}
        print(f"{MODEL_FILE}: {verdict[same_model]}; {SPLIT_FILE}: {verdict[same_split]}")
        return 0 if same_model and same_split else 1
    (OUT / MODEL_FILE).write_bytes(data)
    (OUT / SPLIT_FILE).write_bytes(npz)
    write_manifest(entry)
    return 0


if __name__ == "__main__":
    sys.exit(main())
