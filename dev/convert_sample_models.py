"""Make the converter-made sample models in ``sample_models/`` (a dev tool; needs TensorFlow).

Run it with a Python that has ``tensorflow-cpu`` (a separate venv: TensorFlow is never a dependency
of the project)::

    python dev/convert_sample_models.py              # all models + manifest.json
    python dev/convert_sample_models.py NAME ...     # only these (their manifest entries are merged)
    python dev/convert_sample_models.py --out DIR    # write somewhere else
    python dev/convert_sample_models.py --check      # rebuild in memory, compare with the manifest's sha256

Every model is a small Keras model or ``tf.function`` with fixed seeds (weights from
``keras.utils.set_random_seed`` or ``numpy.random.default_rng``; representative datasets from a
seeded generator), converted by the current ``tf.lite.TFLiteConverter``.  The files are committed;
the library and the test suite never import TensorFlow.  ``sample_models/manifest.json`` records,
per file: sha256, size, the TensorFlow/Keras versions and converter settings that made it, what
it demonstrates and which tests use it.

Each entry of :data:`MODELS` is ``name → (build function, converter settings, demonstrates)``; a
build function returns a converter ready to run (the settings are applied by :func:`_configure`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "sample_models"
SCRIPT = "dev/convert_sample_models.py"
USED_BY = ["tests/test_sample_models.py", "tests/test_cli_versions.py"]
MAX_BYTES = 1 << 20

# ------------------------------------------------------------------------------------------------
# Converter settings (recorded in the manifest as data)

REP = "seeded uniform [-1, 1), 16 samples"
FLOAT = {"mode": "float32 (no optimizations)"}
INT8 = {"mode": "full-integer post-training quantization", "optimizations": ["DEFAULT"],
        "representative_dataset": REP, "supported_ops": ["TFLITE_BUILTINS_INT8"],
        "inference_input_type": "int8", "inference_output_type": "int8"}
INT8_FLOAT_IO = {"mode": "full-integer post-training quantization, float input/output",
                 "optimizations": ["DEFAULT"], "representative_dataset": REP,
                 "supported_ops": ["TFLITE_BUILTINS_INT8"]}
INT16X8 = {"mode": "16x8 post-training quantization", "optimizations": ["DEFAULT"],
           "representative_dataset": REP,
           "supported_ops": ["EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8"]}
DYNAMIC_RANGE = {"mode": "dynamic-range post-training quantization", "optimizations": ["DEFAULT"]}
FLOAT16 = {"mode": "float16 post-training quantization", "optimizations": ["DEFAULT"],
           "supported_types": ["float16"]}
RESOURCE_VARIABLES = {"mode": "float32 with resource variables", "experimental_enable_resource_variables": True}


def _seed(n: int) -> None:
    keras.utils.set_random_seed(n)


def _rep(shapes, seed: int = 0, count: int = 16):
    """A representative dataset: ``count`` batches of seeded uniform [-1, 1) values per input."""
    def gen():
        rng = np.random.default_rng(seed)
        for _ in range(count):
            yield [rng.uniform(-1, 1, size=s).astype(np.float32) for s in shapes]
    return gen


def _configure(conv, settings: dict, rep_shapes=None):
    opts = {"DEFAULT": tf.lite.Optimize.DEFAULT}
    ops = {"TFLITE_BUILTINS": tf.lite.OpsSet.TFLITE_BUILTINS,
           "TFLITE_BUILTINS_INT8": tf.lite.OpsSet.TFLITE_BUILTINS_INT8,
           "EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8":
               tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8}
    types = {"int8": tf.int8, "float16": tf.float16, "int16": tf.int16}
    if "optimizations" in settings:
        conv.optimizations = [opts[o] for o in settings["optimizations"]]
    if "representative_dataset" in settings:
        conv.representative_dataset = _rep(rep_shapes)
    if "supported_ops" in settings:
        conv.target_spec.supported_ops = [ops[o] for o in settings["supported_ops"]]
    if "supported_types" in settings:
        conv.target_spec.supported_types = [types[t] for t in settings["supported_types"]]
    if "inference_input_type" in settings:
        conv.inference_input_type = types[settings["inference_input_type"]]
    if "inference_output_type" in settings:
        conv.inference_output_type = types[settings["inference_output_type"]]
    if settings.get("experimental_enable_resource_variables"):
        conv.experimental_enable_resource_variables = True
    return conv


def _keras(model, settings, rep_shapes=None):
    conv = _configure(tf.lite.TFLiteConverter.from_keras_model(model), settings, rep_shapes)
    conv.workbench_source = "TFLiteConverter.from_keras_model"
    return conv


def _function(module, fn, settings, rep_shapes=None):
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], module)
    conv = _configure(conv, settings, rep_shapes)
    conv.workbench_source = "TFLiteConverter.from_concrete_functions (a tf.function of a tf.Module)"
    return conv


L = keras.layers
RANDOM_BIAS = "random_normal"  # Keras' zero biases would be folded away by the converter

# ------------------------------------------------------------------------------------------------
# The models


def dilated_depthwise_float():
    _seed(1)
    x = keras.Input((16, 16, 4), batch_size=1)
    y = L.Conv2D(8, 3, padding="same", activation="relu", bias_initializer=RANDOM_BIAS)(x)
    y = L.DepthwiseConv2D(3, padding="same", dilation_rate=2, bias_initializer=RANDOM_BIAS)(y)
    y = L.Conv2D(4, 1, bias_initializer=RANDOM_BIAS)(y)
    return _keras(keras.Model(x, y), FLOAT)


def int8_cnn():
    _seed(2)
    x = keras.Input((16, 16, 3), batch_size=1)
    c = L.Conv2D(8, 3, padding="same", activation="relu")(x)
    d = L.DepthwiseConv2D(3, padding="same")(c)
    a = L.Add()([c, d])
    gate = L.Conv2D(8, 1, activation="sigmoid")(a)
    m = L.Multiply()([a, gate])
    p = L.Concatenate()([L.MaxPooling2D(2)(m), L.AveragePooling2D(2)(m)])  # 8x8x16
    p = L.ZeroPadding2D(1)(p)  # 10x10x16
    r = L.Resizing(20, 20, interpolation="bilinear")(p)
    g = L.GlobalAveragePooling2D()(r)
    y = L.Dense(10, activation="softmax")(g)
    return _keras(keras.Model(x, y), INT8, [(1, 16, 16, 3)])


def int8_float_io():
    """Full-int8 kernels, float input/output: QUANTIZE at the entry, DEQUANTIZE at the exit."""
    _seed(3)
    x = keras.Input((6, 8), batch_size=1)
    y = L.Dense(8, use_bias=False)(x)  # rank-3 input: keep_num_dims, and no bias
    y = L.Permute((2, 1))(y)  # TRANSPOSE
    y = L.Flatten()(y)
    y = L.Dense(12, activation="relu")(y)
    y = L.Reshape((3, 4))(y)
    y = L.Activation("tanh")(y)
    return _keras(keras.Model(x, y), INT8_FLOAT_IO, [(1, 6, 8)])


def int16x8_conv_fc():
    _seed(4)
    x = keras.Input((8, 8, 3), batch_size=1)
    c = L.Conv2D(8, 3, padding="same", activation="relu")(x)
    c = L.MaxPooling2D(2)(c)
    f = L.Flatten()(c)
    f = L.Dense(16, activation="relu")(f)
    y = L.Dense(4, activation="softmax")(f)
    return _keras(keras.Model(x, y), INT16X8, [(1, 8, 8, 3)])


def hybrid_fc_conv():
    _seed(5)
    x = keras.Input((8, 8, 16), batch_size=1)
    c = L.Conv2D(32, 3, padding="same", activation="relu")(x)  # 4608 weights: quantized
    g = L.GlobalAveragePooling2D()(c)
    y = L.Dense(64, activation="relu")(g)  # 2048 weights: quantized
    y = L.Dense(48)(y)  # 3072 weights
    return _keras(keras.Model(x, y), DYNAMIC_RANGE)


def float16_weights():
    _seed(6)
    x = keras.Input((8, 8, 3), batch_size=1)
    c = L.Conv2D(8, 3, padding="same", activation="relu")(x)
    d = L.DepthwiseConv2D(3, padding="same")(c)
    g = L.GlobalAveragePooling2D()(d)
    y = L.Dense(5)(g)
    return _keras(keras.Model(x, y), FLOAT16)


def fc_variants_float():
    _seed(7)
    x = keras.Input((4, 8), batch_size=1)
    k = L.Dense(6, bias_initializer=RANDOM_BIAS)(x)  # rank-3 input kept: keep_num_dims=True → v5
    f = L.Flatten()(k)
    y = L.Dense(3, use_bias=False)(f)  # no bias: written as a -1 bias slot, so not v6
    z = L.Dense(3, bias_initializer=RANDOM_BIAS)(f)  # plain: v1
    return _keras(keras.Model(x, [y, z]), FLOAT)


class _Resize(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([1, 4, 4, 2], tf.float32)])
    def __call__(self, x):
        bilinear = tf.image.resize(x, (8, 8), method="bilinear")  # TF2: half_pixel_centers=True
        nearest = tf.image.resize(x, (8, 8), method="nearest")
        aligned = tf.compat.v1.image.resize_bilinear(x, (7, 7), align_corners=True)  # v1: align alone
        return bilinear + nearest, aligned


def resize_half_pixel():
    m = _Resize()
    return _function(m, m.__call__, FLOAT)


def transpose_conv():
    _seed(8)
    x = keras.Input((4, 4, 6), batch_size=1)
    # bias + RELU fused → v4; bias only → v3; neither → v1 (the three share one OperatorCode: v4)
    y = L.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu", bias_initializer=RANDOM_BIAS)(x)
    y = L.Conv2DTranspose(3, 3, strides=1, padding="same", bias_initializer=RANDOM_BIAS)(y)
    y = L.Conv2DTranspose(2, 3, strides=1, padding="same", use_bias=False)(y)
    return _keras(keras.Model(x, y), FLOAT)


class _Slices(tf.Module):
    # With a known rank the converter rewrites ellipsis and new-axis masks away (new axes become
    # a RESHAPE); only an input of unknown rank keeps them in the file.
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x):
        a = x[..., 1:3]  # ellipsis_mask
        b = x[..., tf.newaxis, 0]  # ellipsis_mask + new_axis_mask + shrink_axis_mask
        return a, b


def strided_slice_masks():
    m = _Slices()
    return _function(m, m.__call__, FLOAT)


class _MatMul(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([2, 3, 4], tf.float32), tf.TensorSpec([2, 5, 4], tf.float32)])
    def __call__(self, a, b):
        return tf.matmul(a, b, transpose_b=True)


def batch_matmul():
    m = _MatMul()
    return _function(m, m.__call__, FLOAT)


class _Gather(tf.Module):
    # constant indices: random full-range int32 inputs would be out of bounds
    @tf.function(input_signature=[tf.TensorSpec([2, 5, 3], tf.float32)])
    def __call__(self, params):
        indices = tf.constant([[4, 0, 2, 2], [1, 3, 0, 4]], tf.int32)
        return tf.gather(params, indices, axis=1, batch_dims=1)


def gather_batch_dims():
    m = _Gather()
    return _function(m, m.__call__, FLOAT)


class _While(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.constant(np.random.default_rng(9).uniform(-0.5, 0.5, (4, 4)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 4], tf.float32), tf.TensorSpec([], tf.int32)])
    def step(self, x, n):
        def cond(i, y):
            return i < n

        def body(i, y):
            return i + 1, tf.tanh(tf.matmul(y, self.w))

        n = tf.math.floormod(n, 5)  # any int32 input gives 0-4 iterations
        _, y = tf.while_loop(cond, body, (tf.constant(0), x))
        return {"y": y}


def while_loop():
    m = _While()
    return _function(m, m.step, FLOAT)


class _Counter(tf.Module):
    def __init__(self):
        super().__init__()
        self.total = tf.Variable(np.zeros((1, 3), np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 3], tf.float32)])
    def accumulate(self, x):
        self.total.assign_add(x)
        return self.total.read_value() * 2.0


def resource_variable():
    m = _Counter()
    return _function(m, m.accumulate, RESOURCE_VARIABLES)


class _Strings(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([2, 4], tf.string)])
    def __call__(self, words):
        middle = words[:, 1:3]  # STRIDED_SLICE of strings → v5
        flat = tf.reshape(words, [8])
        picked = tf.gather(flat, tf.constant([5, 0, 2], tf.int32))  # GATHER of strings (no rule: v1)
        # EQUAL of strings → v3; boolean outputs (string outputs would not survive np.savez/np.load)
        return tf.equal(middle, tf.constant("beta")), tf.equal(picked, tf.constant("e"))


def string_ops():
    m = _Strings()
    return _function(m, m.__call__, FLOAT)


# name → (build, settings, demonstrates)
MODELS = {
    "dilated_depthwise_float": (dilated_depthwise_float, FLOAT,
        "float CONV_2D v1 + DEPTHWISE_CONV_2D with dilation 2 (v2): minimum runtime 1.12.0"),
    "int8_cnn": (int8_cnn, INT8,
        "full int8 (int8 input/output, per-channel weights): CONV_2D v3, DEPTHWISE_CONV_2D v3, ADD v2, "
        "MUL v2, LOGISTIC v2, MAX_POOL_2D / AVERAGE_POOL_2D v2, CONCATENATION v2, PAD v2, RESIZE_BILINEAR "
        "with half_pixel_centers (v3: the option outranks int8), MEAN v2, FULLY_CONNECTED v4, SOFTMAX v2: "
        "minimum runtime 2.2.0"),
    "int8_float_io": (int8_float_io, INT8_FLOAT_IO,
        "int8 kernels behind float input/output: QUANTIZE v1 (float → int8 per-tensor), DEQUANTIZE v2, "
        "TRANSPOSE v2, TANH v2; a bias-less keep_num_dims FULLY_CONNECTED (v5) shares its OperatorCode "
        "with an int8 FULLY_CONNECTED (v4), so the code stores the max, v5"),
    "int16x8_conv_fc": (int16x8_conv_fc, INT16X8,
        "int16 activations / int8 weights (16x8): the converter's flatbuffer-level quantizer stamps the "
        "int8 versions (CONV_2D 3, FULLY_CONNECTED 4, MAX_POOL_2D 2, SOFTMAX 2, QUANTIZE 1, DEQUANTIZE 2) "
        "and keeps the float model's min_runtime_version 1.5.0; today's rules compute CONV_2D v8, "
        "FULLY_CONNECTED v11, MAX_POOL_2D v3, SOFTMAX v3, QUANTIZE v2, DEQUANTIZE v3 (runtime 2.15.0)"),
    "hybrid_fc_conv": (hybrid_fc_conv, DYNAMIC_RANGE,
        "dynamic-range (hybrid) quantization, per-channel int8 weights with float activations: CONV_2D v5, "
        "FULLY_CONNECTED v12: minimum runtime 2.17.0"),
    "float16_weights": (float16_weights, FLOAT16,
        "float16 weights dequantized at run time: DEQUANTIZE of FLOAT16 is v3 (runtime 1.15.0)"),
    "fc_variants_float": (fc_variants_float, FLOAT,
        "FULLY_CONNECTED with keep_num_dims (v5), without bias (the converter writes a -1 bias slot, so v1, "
        "never the 2-input v6) and plain (v1); the three share one OperatorCode, which stores the max, v5"),
    "resize_half_pixel": (resize_half_pixel, FLOAT,
        "RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR with half_pixel_centers (v3, runtime 2.3.0 for nearest); "
        "a bilinear resize with align_corners only is v1 but shares the v3 OperatorCode"),
    "transpose_conv": (transpose_conv, FLOAT,
        "TRANSPOSE_CONV with bias and fused RELU (v4, runtime 2.13.0), with bias only (v3), with neither "
        "(v1); one OperatorCode stores v4"),
    "strided_slice_masks": (strided_slice_masks, FLOAT,
        "STRIDED_SLICE with ellipsis_mask and new_axis_mask (v6, runtime 2.6.0) on an input of unknown "
        "rank (with a known rank the converter rewrites the masks away)"),
    "batch_matmul": (batch_matmul, FLOAT, "BATCH_MATMUL of two inputs with adj_y (v1, runtime 2.3.0)"),
    "gather_batch_dims": (gather_batch_dims, FLOAT, "GATHER with batch_dims=1 (v5, runtime 2.5.0)"),
    "while_loop": (while_loop, FLOAT,
        "a WHILE loop (cond and body subgraphs; WHILE v1, runtime 1.15.0), FLOOR_MOD, and a SignatureDef"),
    "resource_variable": (resource_variable, RESOURCE_VARIABLES,
        "resource variables: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE and an initializer subgraph run by "
        "CALL_ONCE (runtime 2.6.0)"),
    "string_ops": (string_ops, FLOAT,
        "a STRING input tensor: STRIDED_SLICE of strings (v5, runtime 2.5.0), EQUAL of strings (v3), "
        "GATHER of strings (v1)"),
}


# ------------------------------------------------------------------------------------------------


def build(name: str) -> tuple[bytes, str]:
    """The converted bytes and how the converter was made."""
    make, _, _ = MODELS[name]
    conv = make()
    data = conv.convert()
    if len(data) > MAX_BYTES:
        raise SystemExit(f"{name}: {len(data)} bytes is over the {MAX_BYTES} byte limit")
    return data, conv.workbench_source


def entry(name: str, data: bytes, source: str) -> dict:
    _, settings, demonstrates = MODELS[name]
    return {
        "name": f"{name}.tflite",
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "made_by": {"script": SCRIPT, "function": name, "tensorflow": tf.__version__,
                    "keras": keras.__version__, "numpy": np.__version__, "converter": source,
                    "settings": settings},
        "demonstrates": demonstrates,
        "used_by": list(USED_BY),
    }


def write_manifest(out: Path, entries: dict) -> None:
    path = out / "manifest.json"
    old = {}
    if path.exists():
        old = {e["name"]: e for e in json.loads(path.read_text())["models"]}
    old.update(entries)
    known = {f"{n}.tflite" for n in MODELS}
    models = [old[k] for k in sorted(old) if k in known]
    doc = {"about": "Small models made by the current TFLite converter for the workbench's tests; "
                    f"regenerate with `python {SCRIPT}` in a venv with tensorflow-cpu (see README.md).",
           "models": models}
    path.write_text(json.dumps(doc, indent=2) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help=f"models to make (default all: {', '.join(MODELS)})")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--check", action="store_true", help="rebuild in memory and compare with the manifest's sha256")
    args = p.parse_args(argv)
    names = args.names or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        p.error(f"unknown model(s) {unknown}")
    if args.check:
        manifest = {e["name"]: e for e in json.loads((OUT / "manifest.json").read_text())["models"]}
        bad = 0
        for n in names:
            digest = hashlib.sha256(build(n)[0]).hexdigest()
            same = manifest.get(f"{n}.tflite", {}).get("sha256") == digest
            bad += not same
            print(f"{n}: {'same' if same else 'DIFFERENT'}")
        return 1 if bad else 0
    args.out.mkdir(parents=True, exist_ok=True)
    entries = {}
    for n in names:
        data, source = build(n)
        (args.out / f"{n}.tflite").write_bytes(data)
        entries[f"{n}.tflite"] = entry(n, data, source)
        print(f"{n}.tflite: {len(data):,} bytes", flush=True)
    write_manifest(args.out, entries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
