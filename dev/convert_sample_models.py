"""Make the converter-made sample models in ``sample_models/`` (a dev tool; needs TensorFlow).

Run it with a Python that has ``tensorflow-cpu`` and ``tf-keras`` of the same version (a separate
venv: TensorFlow is never a dependency of the project); the ``*_aeq_*`` models also need a second
venv with ``ai-edge-quantizer`` (it pins its own ai-edge-litert), named by ``--aeq-python``::

    python -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0 tf-keras==2.21.0
    python -m venv /tmp/aeqvenv && /tmp/aeqvenv/bin/pip install ai-edge-quantizer==0.10.0
    /tmp/tfvenv/bin/python dev/convert_sample_models.py --aeq-python /tmp/aeqvenv/bin/python   # all + manifest.json
    ... dev/convert_sample_models.py NAME ...     # only these (their manifest entries are merged)
    ... dev/convert_sample_models.py --out DIR    # write somewhere else
    ... dev/convert_sample_models.py --check      # rebuild in memory, compare with the manifest's sha256

Every model is a small Keras model or ``tf.function`` with fixed seeds (weights from
``keras.utils.set_random_seed`` or ``numpy.random.default_rng``; representative datasets from a
seeded generator), converted by the current ``tf.lite.TFLiteConverter``.  The files are committed;
the library and the test suite never import TensorFlow.  ``sample_models/manifest.json`` records,
per file: sha256, size, the TensorFlow/Keras versions and converter settings that made it, what
it demonstrates and which tests use it.

Each entry of :data:`MODELS` is ``name → (build function, converter settings, demonstrates)``; a
build function returns a converter ready to run (the settings are applied by :func:`_configure`).
The first fifteen are one-feature models (versions, options, runtimes); :data:`REALISTIC` adds small
but architecturally realistic ones (MobileNetV2/V3 and EfficientNet blocks, a ResNet stem and
blocks, a U-Net, a ViT-like encoder, a 1-D audio conv net, a keyword-spotting LSTM, a GRU, an SSD
head), each as float32 and as the quantized variants the converter accepts; :data:`SWEEP_MADE` adds
the architectures of the bit-exactness sweep ``dev/quantized_sweep.py`` (DeepLab ASPP, a YOLO head,
an audio CRNN with a GRU, a bidirectional LSTM, transposed-conv decoders, grouped convolutions,
pixel plumbing), each as the one quantized variant that brought operators, options or dtypes the
others lack; :data:`QUANTIZER_MADE` quantizes some of the float ones with the AI Edge Quantizer,
which writes int8 / int16 tensors but keeps the float model's operator versions.
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

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "sample_models"
SCRIPT = "dev/convert_sample_models.py"
USED_BY = ["tests/sample_models/test_sample_models.py", "tests/cli/test_cli_versions.py"]
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
UINT8_LEGACY = {"mode": "legacy quantization-aware training export (TF1 graph with FakeQuant ops, "
                        "tf.compat.v1.lite.TFLiteConverter.from_session)",
                "inference_type": "uint8", "quantized_input_stats": {"image": [127.5, 127.5]}}


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


class _LegacyUint8:
    """Quacks like a converter: a TF1 graph whose every tensor passes through a FakeQuant op (what
    quantization-aware training left in a graph before TF2), converted the old way to an all-uint8
    model — the format of the classic hosted "_quant" models (asymmetric uint8 weights with zero
    point 128 for narrow-range weights, uint8 activations, int32 biases)."""

    workbench_source = "tf.compat.v1.lite.TFLiteConverter.from_session, inference_type uint8"

    def convert(self) -> bytes:
        tf1 = tf.compat.v1
        rng = np.random.default_rng(8)

        def fq(t, lo, hi):
            return tf.quantization.fake_quant_with_min_max_vars(t, lo, hi)

        def weights(shape, scale, lim):
            w = tf1.constant(rng.standard_normal(shape).astype(np.float32) * scale)
            return tf.quantization.fake_quant_with_min_max_vars(w, -lim, lim, narrow_range=True)

        def bias(n):
            return tf1.constant(rng.standard_normal(n).astype(np.float32) * 0.1)

        def conv(t, shape, stride, padding, scale=0.3, lim=0.8):
            return tf.nn.conv2d(t, weights(shape, scale, lim), [1, stride, stride, 1], padding)

        g = tf1.Graph()
        with g.as_default():
            x = tf1.placeholder(tf.float32, [1, 24, 24, 3], name="image")
            h = fq(x, -1.0, 1.0)
            h = fq(tf.nn.relu6(conv(h, (3, 3, 3, 8), 2, "SAME") + bias(8)), 0.0, 6.0)
            dw = tf.nn.depthwise_conv2d(h, weights((3, 3, 8, 2), 0.4, 1.0), [1, 1, 1, 1], "SAME")
            d = fq(tf.nn.relu6(dw + bias(16)), 0.0, 6.0)
            p = fq(tf.nn.relu(conv(d, (1, 1, 16, 16), 1, "VALID") + bias(16)), 0.0, 8.0)
            a = fq(tf.nn.avg_pool2d(p, 3, 2, "SAME"), 0.0, 8.0)
            m = fq(tf.nn.max_pool2d(p, 2, 2, "VALID"), 0.0, 8.0)
            s = fq(a + m, 0.0, 12.0)
            t = fq(tf.nn.tanh(fq(conv(s, (3, 3, 16, 8), 1, "SAME", 0.2, 0.6) + bias(8), -6.0, 6.0)), -1.0, 1.0)
            gate = fq(tf.nn.sigmoid(fq(conv(s, (1, 1, 16, 8), 1, "SAME", 0.2, 0.6) + bias(8), -6.0, 6.0)), 0.0, 1.0)
            gated = fq(t * gate, -1.0, 1.0)
            up = fq(tf1.image.resize_bilinear(gated, [12, 12], half_pixel_centers=True), -1.0, 1.0)
            side = fq(conv(h, (1, 1, 8, 8), 1, "SAME"), -4.0, 4.0)
            cat = fq(tf.concat([up, side], axis=3), -4.0, 4.0)
            padded = fq(tf.pad(cat, [[0, 0], [1, 1], [1, 1], [0, 0]]), -4.0, 4.0)
            mean = fq(tf.reduce_mean(padded, axis=[1, 2]), -4.0, 4.0)
            emb = fq(tf.math.l2_normalize(mean, axis=-1), -1.0, 1.0)
            logits = fq(tf.matmul(emb, weights((16, 10), 0.5, 1.2)) + bias(10), -6.0, 6.0)
            probs = tf.identity(fq(tf.nn.softmax(logits), 0.0, 1.0), name="probabilities")
            emb = tf.identity(emb, name="embedding")
            with tf1.Session(graph=g) as sess:
                conv_ = tf1.lite.TFLiteConverter.from_session(sess, [x], [probs, emb])
                conv_.inference_type = tf.uint8
                conv_.quantized_input_stats = {"image": tuple(UINT8_LEGACY["quantized_input_stats"]["image"])}
                return conv_.convert()


def uint8_legacy_cnn():
    return _LegacyUint8()


# ------------------------------------------------------------------------------------------------
# Small but architecturally realistic models: the blocks real models are made of, with a few
# channels each, converted as a user would (the converter's defaults plus the settings recorded).
# Each builder starts from a fresh Keras session, so its tensor names (and bytes) do not depend on
# which models were built before it in the same process.


def _fresh(n: int) -> None:
    keras.backend.clear_session()
    keras.utils.set_random_seed(n)


def _random_batchnorm(model, n: int, batchnorm=None):
    """Seeded, non-trivial BatchNormalization statistics (Keras' initial ones fold to a no-op).

    Per layer: gamma (if the layer has ``scale``), beta (if it has ``center``), moving mean, moving
    variance, drawn in that order.  ``batchnorm`` is the layer class to look for (default Keras 3's;
    pass ``tf_keras.layers.BatchNormalization`` for a Keras 2 model)."""
    batchnorm = batchnorm or L.BatchNormalization
    rng = np.random.default_rng(n)
    for layer in model.layers:
        if isinstance(layer, batchnorm):
            c = layer.get_weights()[0].shape[0]
            new = []
            if layer.scale:
                new.append(rng.uniform(0.5, 1.5, c).astype(np.float32))
            if layer.center:
                new.append(rng.normal(0, 0.2, c).astype(np.float32))
            new += [rng.normal(0, 0.2, c).astype(np.float32), rng.uniform(0.5, 1.5, c).astype(np.float32)]
            layer.set_weights(new)
    return model


def _conv_bn(x, filters, size, strides=1, activation=None, padding="same"):
    x = L.Conv2D(filters, size, strides=strides, padding=padding, use_bias=False)(x)
    x = L.BatchNormalization()(x)
    return L.Activation(activation)(x) if activation else x


def _depthwise_bn(x, size, strides=1, activation=None, padding="same"):
    x = L.DepthwiseConv2D(size, strides=strides, padding=padding, use_bias=False)(x)
    x = L.BatchNormalization()(x)
    return L.Activation(activation)(x) if activation else x


def _mobilenet_v3_block_model():
    """A MobileNetV2 inverted residual (RELU6) and two MobileNetV3 blocks (HARD_SWISH, squeeze-excite
    with a hard-sigmoid gate, the 'correct pad' ZeroPadding2D before a stride-2 depthwise)."""
    _fresh(11)
    x = keras.Input((32, 32, 3), batch_size=1)
    y = _conv_bn(x, 8, 3, 2, "hard_swish")
    e = _conv_bn(y, 24, 1, activation="relu6")
    d = _depthwise_bn(e, 3, activation="relu6")
    y = L.Add()([y, _conv_bn(d, 8, 1)])
    for expand, out, size, strides in ((32, 16, 5, 2), (48, 16, 3, 1)):
        e = _conv_bn(y, expand, 1, activation="hard_swish")
        if strides == 2:
            e = L.ZeroPadding2D(((1, 2), (1, 2)))(e)
        d = _depthwise_bn(e, size, strides, "hard_swish", padding="valid" if strides == 2 else "same")
        s = L.GlobalAveragePooling2D(keepdims=True)(d)
        s = L.Conv2D(expand // 4, 1, activation="relu")(s)
        s = L.Conv2D(expand, 1, activation="hard_sigmoid")(s)
        p = _conv_bn(L.Multiply()([d, s]), out, 1)
        y = L.Add()([y, p]) if strides == 1 else p
    y = _conv_bn(y, 64, 1, activation="hard_swish")
    y = L.GlobalAveragePooling2D(keepdims=True)(y)
    y = L.Conv2D(32, 1, activation="hard_swish")(y)
    y = L.Dense(10, activation="softmax")(L.Flatten()(y))
    return _random_batchnorm(keras.Model(x, y), 11)


def _efficientnet_block_model():
    """EfficientNet's stem (Rescaling, stride-2 conv, swish) and three MBConv blocks (swish, SE with a
    sigmoid gate, dropout and a residual ADD)."""
    _fresh(12)
    x = keras.Input((32, 32, 3), batch_size=1)
    y = L.Rescaling(2.0, offset=-1.0)(x)
    y = L.ZeroPadding2D(((0, 1), (0, 1)))(y)
    y = _conv_bn(y, 16, 3, 2, "swish", padding="valid")
    for expand, out, size, strides in ((1, 8, 3, 1), (4, 16, 5, 2), (4, 16, 3, 1)):
        c = y.shape[-1]
        e = _conv_bn(y, c * expand, 1, activation="swish") if expand > 1 else y
        d = _depthwise_bn(e, size, strides, "swish")
        s = L.Reshape((1, 1, d.shape[-1]))(L.GlobalAveragePooling2D()(d))
        s = L.Conv2D(max(1, c // 4), 1, activation="swish")(s)
        s = L.Conv2D(d.shape[-1], 1, activation="sigmoid")(s)
        p = _conv_bn(L.Multiply()([d, s]), out, 1)
        y = L.Add()([L.Dropout(0.2)(p), y]) if strides == 1 and c == out else p
    y = _conv_bn(y, 64, 1, activation="swish")
    y = L.Dense(10, activation="softmax")(L.GlobalAveragePooling2D()(y))
    return _random_batchnorm(keras.Model(x, y), 12)


def _resnet_block_model():
    """ResNet's stem (7x7 stride-2 conv, 3x3 stride-2 MAX_POOL after explicit padding) and three basic
    blocks (ADD; a 1x1 stride-2 projection shortcut)."""
    _fresh(13)
    x = keras.Input((32, 32, 3), batch_size=1)
    y = L.ZeroPadding2D(3)(x)
    y = L.Activation("relu")(L.BatchNormalization()(L.Conv2D(8, 7, strides=2)(y)))
    y = L.MaxPooling2D(3, strides=2)(L.ZeroPadding2D(1)(y))
    for filters, strides in ((8, 1), (16, 2), (16, 1)):
        shortcut = y
        if strides != 1 or y.shape[-1] != filters:
            shortcut = L.BatchNormalization()(L.Conv2D(filters, 1, strides=strides)(y))
        z = L.Conv2D(filters, 3, strides=strides, padding="same")(y)
        z = L.Activation("relu")(L.BatchNormalization()(z))
        z = L.BatchNormalization()(L.Conv2D(filters, 3, padding="same")(z))
        y = L.Activation("relu")(L.Add()([shortcut, z]))
    y = L.Dense(10, activation="softmax")(L.GlobalAveragePooling2D()(y))
    return _random_batchnorm(keras.Model(x, y), 13)


def _unet_tiny_model():
    """A two-level U-Net: MAX_POOL down, TRANSPOSE_CONV and bilinear UpSampling2D up, skip
    CONCATENATIONs, a nearest-neighbour side output (Keras writes it as RESHAPE + TILE), sigmoid."""
    _fresh(14)
    x = keras.Input((32, 32, 3), batch_size=1)

    def twice(y, filters):
        y = L.Conv2D(filters, 3, padding="same", activation="relu")(y)
        return L.Conv2D(filters, 3, padding="same", activation="relu")(y)

    e1 = twice(x, 8)
    e2 = twice(L.MaxPooling2D(2)(e1), 12)
    b = twice(L.MaxPooling2D(2)(e2), 16)
    d2 = twice(L.Concatenate()([L.Conv2DTranspose(12, 2, strides=2, padding="same")(b), e2]), 12)
    d1 = twice(L.Concatenate()([L.UpSampling2D(2, interpolation="bilinear")(d2), e1]), 8)
    side = L.UpSampling2D(4, interpolation="nearest")(L.Conv2D(1, 1)(b))
    y = L.Activation("sigmoid")(L.Add()([L.Conv2D(1, 1)(d1), side]))
    return keras.Model(x, y)


class _PositionEmbedding(L.Layer):
    def build(self, shape):
        self.table = self.add_weight(shape=tuple(shape[1:]), initializer="random_normal", name="table")

    def call(self, x):
        return x + self.table


def _transformer_tiny_model():
    """A ViT-like encoder on 4x4 patches: LayerNormalization (MEAN, SQUARED_DIFFERENCE, RSQRT),
    two-head self-attention (FULLY_CONNECTED projections, BATCH_MATMUL, SOFTMAX), a GELU MLP with
    keep_num_dims FULLY_CONNECTED, residual ADDs.  The batch dimension is left unknown, as a user
    writes ``keras.Input((16, 16, 3))``: the reshapes then compute their shapes at run time."""
    _fresh(15)
    x = keras.Input((16, 16, 3))
    t = L.Reshape((16, 32))(L.Conv2D(32, 4, strides=4)(x))
    t = _PositionEmbedding(name="position_embedding")(t)  # a scope name may not start with '_'
    h = L.LayerNormalization(epsilon=1e-6)(t)
    t = L.Add()([t, L.MultiHeadAttention(num_heads=2, key_dim=16)(h, h)])
    h = L.LayerNormalization(epsilon=1e-6)(t)
    t = L.Add()([t, L.Dense(32)(L.Dense(64, activation="gelu")(h))])
    t = L.LayerNormalization(epsilon=1e-6)(t)
    y = L.Dense(10, activation="softmax")(L.GlobalAveragePooling1D()(t))
    return keras.Model(x, y)


def _audio_conv1d_model():
    """A 1-D conv net over 64 frames x 8 mel bins (unknown batch): Conv1D (EXPAND_DIMS + CONV_2D),
    AveragePooling1D, a causal dilated Conv1D (PAD, SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND),
    MaxPooling1D, SeparableConv1D (DEPTHWISE_CONV_2D + CONV_2D), GlobalMaxPooling1D (REDUCE_MAX)."""
    _fresh(16)
    x = keras.Input((64, 8))
    y = L.Conv1D(32, 3, padding="same", activation="relu")(x)
    y = L.AveragePooling1D(2)(y)
    y = L.Conv1D(32, 3, dilation_rate=2, padding="causal", activation="relu")(y)
    y = L.MaxPooling1D(2)(y)
    y = L.SeparableConv1D(48, 3, padding="same", activation="relu")(y)
    y = L.Dense(4, activation="softmax")(L.GlobalMaxPooling1D()(y))
    return keras.Model(x, y)


def _kws_lstm_model():
    """A keyword-spotting LSTM over 20 frames x 32 features.  Built with Keras 2 (``tf_keras``): its
    LSTM layer carries the ``api_implements`` annotation that the converter fuses into one
    UNIDIRECTIONAL_SEQUENCE_LSTM; Keras 3's LSTM converts to a WHILE loop instead (see gru_tiny)."""
    try:
        import tf_keras
    except ImportError as exc:
        raise SystemExit("kws_lstm_*: needs `pip install tf-keras` (the Keras 2 package matching TensorFlow)") from exc
    tf_keras.backend.clear_session()
    tf_keras.utils.set_random_seed(17)
    x = tf_keras.Input((20, 32), batch_size=1)
    y = tf_keras.layers.LSTM(48)(x)  # gate weights of 32x48 and 48x48: big enough for dynamic range
    y = tf_keras.layers.Dense(4, activation="softmax")(y)
    return tf_keras.Model(x, y)


def _gru_tiny_model():
    """A Keras 3 GRU over 12 steps (return_sequences) and a per-step Dense: the converter writes the
    recurrence as a WHILE loop with cond/body subgraphs."""
    _fresh(18)
    x = keras.Input((12, 16), batch_size=1)
    y = L.GRU(24, return_sequences=True)(x)
    y = L.Dense(3)(y)
    return keras.Model(x, y)


def _ssd_head_model():
    """An SSD-like detector: a small depthwise backbone, box and class heads on two feature maps
    (8x8 with 2 anchors, 4x4 with 3), each RESHAPEd to (anchors, 4) / (anchors, classes) and
    CONCATENATED; the class scores go through LOGISTIC."""
    _fresh(19)
    x = keras.Input((32, 32, 3), batch_size=1)
    y = L.Conv2D(8, 3, strides=2, padding="same", activation="relu6")(x)
    y = L.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6")(y)
    f1 = L.Conv2D(16, 1, activation="relu6")(y)
    y = L.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6")(f1)
    f2 = L.Conv2D(24, 1, activation="relu6")(y)
    boxes, scores = [], []
    for f, anchors in ((f1, 2), (f2, 3)):
        boxes.append(L.Reshape((-1, 4))(L.Conv2D(anchors * 4, 3, padding="same")(f)))
        scores.append(L.Reshape((-1, 3))(L.Conv2D(anchors * 3, 3, padding="same")(f)))
    boxes = L.Concatenate(axis=1)(boxes)
    scores = L.Activation("sigmoid")(L.Concatenate(axis=1)(scores))
    return keras.Model(x, [boxes, scores])


# The architectures below are those of dev/quantized_sweep.py, the bit-exactness sweep over real
# models, whose quantized files first showed operators and options the sample models above lacked.
# They live here so that the committed files depend on this script alone; the sweep imports them
# (and _fresh, _random_batchnorm, _rep, _tf_keras) from here, so its files of the same name are
# these files.


def _tf_keras(seed: int):
    """Keras 2 (``tf_keras``, whose LSTM the converter fuses), from a fresh session with ``seed``."""
    try:
        import tf_keras
    except ImportError as exc:
        raise SystemExit("needs `pip install tf-keras` (the Keras 2 package matching TensorFlow)") from exc
    tf_keras.backend.clear_session()
    tf_keras.utils.set_random_seed(seed)
    return tf_keras


def _aspp_model():
    """DeepLab v3's ASPP: a stride-2 stem, a 1x1 conv, 3x3 convs at rates 2 / 4 / 6, a dilated
    depthwise branch, image pooling upsampled by RESIZE_BILINEAR, CONCATENATION, a 1x1 projection,
    and two bilinear upsamplings to the input size: half-pixel centers (Keras) and align_corners
    (TF1 DeepLab)."""
    _fresh(31)
    x = keras.Input((32, 32, 3), batch_size=1)
    y = L.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(x)
    y = L.Activation("relu")(L.BatchNormalization()(y))
    branches = [L.Activation("relu")(L.BatchNormalization()(L.Conv2D(12, 1, use_bias=False)(y)))]
    for rate in (2, 4, 6):
        b = L.Conv2D(12, 3, padding="same", dilation_rate=rate, use_bias=False)(y)
        branches.append(L.Activation("relu")(L.BatchNormalization()(b)))
    b = L.DepthwiseConv2D(3, padding="same", dilation_rate=3)(y)  # a dilated separable branch
    branches.append(L.Conv2D(12, 1, activation="relu")(b))
    pool = L.GlobalAveragePooling2D(keepdims=True)(y)
    pool = L.Conv2D(12, 1, activation="relu")(pool)
    branches.append(L.Resizing(16, 16, interpolation="bilinear")(pool))
    y = L.Concatenate()(branches)
    y = L.Activation("relu")(L.BatchNormalization()(L.Conv2D(16, 1, use_bias=False)(y)))
    logits = L.Conv2D(5, 1)(y)
    half_pixel = L.Resizing(32, 32, interpolation="bilinear")(logits)
    aligned = L.Lambda(lambda t: tf.compat.v1.image.resize_bilinear(t, (32, 32), align_corners=True))(logits)
    return _random_batchnorm(keras.Model(x, [half_pixel, aligned]), 31)


def _yolo_head_model():
    """A YOLOv3-tiny-like detector: conv + BatchNorm + LEAKY_RELU(0.1) backbone, a nearest-upsampled
    second scale, heads RESHAPEd to (cells, anchors, 5 + classes) and SPLIT (SPLIT_V) into xy / wh /
    objectness / classes; LOGISTIC on xy, objectness and classes, EXP on wh times the anchor sizes,
    the cell grid added, all CONCATENATED."""
    _fresh(32)
    x = keras.Input((32, 32, 3), batch_size=1)

    def cbl(t, filters, size=3):
        t = L.Conv2D(filters, size, padding="same", use_bias=False)(t)
        return L.LeakyReLU(negative_slope=0.1)(L.BatchNormalization()(t))

    y = cbl(x, 8)
    y = L.MaxPooling2D(2)(y)
    y = cbl(y, 16)
    f1 = cbl(L.MaxPooling2D(2)(y), 24)  # 8x8
    f2 = cbl(L.MaxPooling2D(2)(f1), 32)  # 4x4
    u = L.UpSampling2D(2)(cbl(f2, 16, 1))
    f1 = L.Concatenate()([u, f1])
    classes, anchors = 3, 2
    outs = []
    for f, grid in ((f2, 4), (f1, 8)):
        h = L.Conv2D(anchors * (5 + classes), 1)(cbl(f, 16))
        h = L.Reshape((grid * grid, anchors, 5 + classes))(h)
        xy, wh, obj, cls = L.Lambda(lambda t: tf.split(t, [2, 2, 1, classes], axis=-1))(h)
        gy, gx = np.meshgrid(np.arange(grid), np.arange(grid), indexing="ij")
        cells = np.stack([gx, gy], -1).reshape(1, grid * grid, 1, 2).astype(np.float32)
        anchor = np.array([[10, 14], [23, 27]], np.float32).reshape(1, 1, anchors, 2) / 32.0
        xy = L.Lambda(lambda t, c=cells, g=grid: (tf.sigmoid(t) + c) / g)(xy)
        wh = L.Lambda(lambda t, a=anchor: tf.exp(t) * a)(wh)
        obj = L.Activation("sigmoid")(obj)
        cls = L.Activation("sigmoid")(cls)
        outs.append(L.Reshape((grid * grid * anchors, 5 + classes))(L.Concatenate()([xy, wh, obj, cls])))
    return _random_batchnorm(keras.Model(x, L.Concatenate(axis=1)(outs)), 32)


def _crnn_model(rnn: str):
    """An audio CRNN over 40 frames x 16 mel bins in Keras 2 (tf_keras): Conv1D (EXPAND_DIMS +
    CONV_2D), BatchNorm, a strided Conv1D, MaxPooling1D, then ``rnn``: "gru", an unrolled GRU (its
    steps as UNPACK, FULLY_CONNECTED, SPLIT of the gates, LOGISTIC / TANH / MUL / SUB / ADD), or
    "lstm", two LSTMs (fused into UNIDIRECTIONAL_SEQUENCE_LSTM; the sweep's crnn_lstm); and a
    softmax head."""
    tk = _tf_keras(34)
    tl = tk.layers
    x = tk.Input((40, 16), batch_size=1)
    y = tl.Conv1D(24, 3, padding="same", activation="relu")(x)
    y = tl.BatchNormalization()(y)
    y = tl.Conv1D(32, 3, strides=2, padding="same", activation="relu")(y)
    y = tl.MaxPooling1D(2)(y)
    if rnn == "lstm":
        y = tl.LSTM(32, return_sequences=True)(y)
        y = tl.LSTM(32)(y)
    else:
        y = tl.GRU(32, unroll=True)(y)
    model = tk.Model(x, tl.Dense(5, activation="softmax")(y))
    return _random_batchnorm(model, 34, tl.BatchNormalization)


def _crnn_gru_model():
    """The audio CRNN with an unrolled GRU (see :func:`_crnn_model`)."""
    return _crnn_model("gru")


def _tconv_decoder_model():
    """Transposed-conv decoders: Conv2DTranspose 3x3 / stride 2 'same' with BatchNorm + ReLU, 4x4 /
    stride 2 'valid', 2x2 / stride 2 without bias, 3x3 / stride 2 with output_padding, a sigmoid
    output, and a Conv1DTranspose branch (EXPAND_DIMS + TRANSPOSE_CONV)."""
    _fresh(35)
    x = keras.Input((4, 4, 16), batch_size=1)
    y = L.Conv2DTranspose(12, 3, strides=2, padding="same")(x)  # 8x8
    y = L.Activation("relu")(L.BatchNormalization()(y))
    y = L.Conv2DTranspose(8, 4, strides=2, padding="valid", activation="relu")(y)  # 18x18
    y = L.Conv2DTranspose(8, 2, strides=2, use_bias=False)(y)  # 36x36
    y = L.Conv2DTranspose(4, 3, strides=2, padding="same", output_padding=1)(y)  # 72x72
    img = L.Activation("sigmoid")(y)
    s = L.Reshape((16, 16))(x)
    s = L.Conv1DTranspose(8, 3, strides=2, padding="same", activation="relu")(s)  # 32x8
    return _random_batchnorm(keras.Model(x, [img, s]), 35)


def _grouped_conv_model():
    """Grouped Conv2Ds (groups 4 and 2; one of 1152 weights, quantized in the dynamic-range file),
    a depthwise conv with depth_multiplier 3, PReLU after BatchNorm, a SeparableConv2D with
    depth_multiplier 2 and RELU6, a 5x5 stride-2 conv with ELU, a GlobalMaxPooling head (REDUCE_MAX);
    batch 2."""
    _fresh(36)
    x = keras.Input((16, 16, 8), batch_size=2)
    y = L.Conv2D(16, 3, padding="same", groups=4, activation="relu")(x)
    y = L.Conv2D(32, 3, padding="same", groups=4)(y)
    y = L.Conv2D(16, 1, groups=2, activation="relu")(y)
    y = L.DepthwiseConv2D(3, depth_multiplier=3, padding="same")(y)
    y = L.PReLU(shared_axes=[1, 2])(L.BatchNormalization()(y))
    y = L.SeparableConv2D(24, 3, depth_multiplier=2, padding="same", activation="relu6")(y)
    y = L.Conv2D(16, 5, strides=2, padding="valid", activation="elu")(y)
    y = L.Conv2D(12, 1, groups=2)(y)
    out = L.Dense(6)(L.GlobalMaxPooling2D()(y))
    return _random_batchnorm(keras.Model(x, out), 36)


def _pixel_ops_model():
    """Tensor plumbing of detection / segmentation / super-resolution models: YOLOv5's SPACE_TO_DEPTH
    'focus', MIRROR_PAD (reflect and symmetric), PADV2 with a non-zero constant, STRIDED_SLICE,
    MAXIMUM / MINIMUM, SQUARED_DIFFERENCE, DEPTH_TO_SPACE (pixel shuffle), TRANSPOSE, a strided
    STRIDED_SLICE, GATHER of channels, L2_NORMALIZATION, SUM, REDUCE_MAX and ARG_MAX."""
    _fresh(37)
    x = keras.Input((16, 16, 4), batch_size=1)
    y = L.Lambda(lambda t: tf.nn.space_to_depth(t, 2))(x)  # 8x8x16
    y = L.Conv2D(16, 3, padding="same", activation="relu")(y)
    r = L.Lambda(lambda t: tf.pad(t, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT"))(y)
    r = L.Conv2D(16, 3, padding="valid")(r)
    sym = L.Lambda(lambda t: tf.pad(t, [[0, 0], [2, 2], [2, 2], [0, 0]], mode="SYMMETRIC"))(r)
    sym = L.Conv2D(8, 5, padding="valid")(sym)
    c = L.Lambda(lambda t: tf.pad(t, [[0, 0], [1, 0], [0, 1], [0, 0]], constant_values=0.5))(sym)
    c = L.Lambda(lambda t: t[:, 1:, :-1, :])(c)
    m = L.Lambda(lambda ab: tf.maximum(ab[0], ab[1]))([c, r[..., :8]])
    m = L.Lambda(lambda ab: tf.minimum(ab[0], 0.8 * ab[1]))([m, y[..., 8:]])
    d = L.Lambda(lambda ab: tf.math.squared_difference(ab[0], ab[1]))([m, c])
    up = L.Lambda(lambda t: tf.nn.depth_to_space(t, 2))(L.Conv2D(16, 1)(d))  # 16x16x4
    t = L.Lambda(lambda t: tf.transpose(t, [0, 2, 1, 3]))(up)
    s = L.Lambda(lambda t: t[:, ::2, 1::2, :])(t)
    g = L.Lambda(lambda t: tf.gather(t, [3, 0, 2, 2, 1], axis=-1))(s)
    n = L.Lambda(lambda t: tf.math.l2_normalize(t, axis=-1))(g)
    total = L.Lambda(lambda t: tf.reduce_sum(t, axis=[1, 2]))(g)
    peak = L.Lambda(lambda t: tf.reduce_max(t, axis=-1))(n)
    best = L.Lambda(lambda t: tf.argmax(t, axis=-1, output_type=tf.int32))(up)
    return keras.Model(x, [n, total, peak, best])


def _bilstm_model():
    """A Keras 2 Bidirectional LSTM over 12 frames x 10 features with a per-frame Dense: two fused
    UNIDIRECTIONAL_SEQUENCE_LSTMs, the backward one between two REVERSE_V2s."""
    tk = _tf_keras(39)
    tl = tk.layers
    x = tk.Input((12, 10), batch_size=1)
    y = tl.Bidirectional(tl.LSTM(16, return_sequences=True))(x)
    return tk.Model(x, tl.Dense(4)(y))


ARCHITECTURES = {
    "mobilenet_v3_block": (_mobilenet_v3_block_model, [(1, 32, 32, 3)]),
    "efficientnet_block": (_efficientnet_block_model, [(1, 32, 32, 3)]),
    "resnet_block": (_resnet_block_model, [(1, 32, 32, 3)]),
    "unet_tiny": (_unet_tiny_model, [(1, 32, 32, 3)]),
    "transformer_tiny": (_transformer_tiny_model, [(1, 16, 16, 3)]),
    "audio_conv1d": (_audio_conv1d_model, [(1, 64, 8)]),
    "kws_lstm": (_kws_lstm_model, [(1, 20, 32)]),
    "gru_tiny": (_gru_tiny_model, [(1, 12, 16)]),
    "ssd_head": (_ssd_head_model, [(1, 32, 32, 3)]),
    "aspp": (_aspp_model, [(1, 32, 32, 3)]),
    "yolo_head": (_yolo_head_model, [(1, 32, 32, 3)]),
    "crnn_gru": (_crnn_gru_model, [(1, 40, 16)]),
    "tconv_decoder": (_tconv_decoder_model, [(1, 4, 4, 16)]),
    "grouped_conv": (_grouped_conv_model, [(2, 16, 16, 8)]),
    "pixel_ops": (_pixel_ops_model, [(1, 16, 16, 4)]),
    "bilstm": (_bilstm_model, [(1, 12, 10)]),
}
# the architectures built with Keras 2 (tf_keras): the converter fuses their LSTM layers
TF_KERAS = {"kws_lstm", "crnn_gru", "bilstm"}


def _architecture(arch: str, settings: dict):
    """A build function: the architecture converted with ``settings``."""
    def make():
        model_fn, shapes = ARCHITECTURES[arch]
        conv = _keras(model_fn(), settings, shapes)
        if arch in TF_KERAS:
            conv.workbench_source = "TFLiteConverter.from_keras_model (a Keras 2 / tf_keras model)"
        return conv
    make.__name__ = ARCHITECTURES[arch][0].__name__
    return make


# The AI Edge Quantizer (pip package ai-edge-quantizer) quantizes an already converted float file.
# It pins its own ai-edge-litert and needs no TensorFlow, so it runs in a venv of its own:
# dev/aeq_quantize.py is started with the Python named by --aeq-python or $WORKBENCH_AEQ_PYTHON.
AEQ_SCRIPT = ROOT / "dev" / "aeq_quantize.py"
AEQ_PYTHON = [os.environ.get("WORKBENCH_AEQ_PYTHON", "")]
AEQ_RECIPES = {
    "static_wi8_ai8": "AI Edge Quantizer static_wi8_ai8: int8 activations and int8 per-channel weights",
    "static_wi8_ai16": "AI Edge Quantizer static_wi8_ai16: int16 activations and int8 per-channel weights",
    "dynamic_wi8_afp32": "AI Edge Quantizer dynamic_wi8_afp32: int8 per-channel weights, float activations",
}


def _aeq_settings(float_name: str, recipe: str) -> dict:
    settings = {"mode": AEQ_RECIPES[recipe], "tool": "ai-edge-quantizer (dev/aeq_quantize.py)",
                "recipe": recipe, "float_model": f"{float_name}.tflite"}
    if recipe.startswith("static"):
        settings["calibration_data"] = REP + " (one dict per sample, the model's serving_default signature)"
    return settings


class _AEQ:
    """Quacks like a converter: ``convert()`` quantizes the float sample model with the AI Edge Quantizer."""

    def __init__(self, float_name: str, recipe: str):
        self.float_name, self.recipe = float_name, recipe
        self.workbench_source = "ai_edge_quantizer.Quantizer on the converted float file"

    def convert(self) -> bytes:
        import subprocess
        import tempfile

        python = AEQ_PYTHON[0]
        if not python:
            raise SystemExit(f"{self.float_name} → {self.recipe}: needs a Python with ai-edge-quantizer "
                             "(--aeq-python PATH or $WORKBENCH_AEQ_PYTHON)")
        data, _ = build(self.float_name)
        with tempfile.TemporaryDirectory() as tmp:
            src, out = Path(tmp) / "float.tflite", Path(tmp) / "quantized.tflite"
            src.write_bytes(data)
            proc = subprocess.run([python, str(AEQ_SCRIPT), str(src), str(out), self.recipe],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"ai-edge-quantizer failed on {self.float_name}:\n{proc.stderr[-3000:]}")
            report = json.loads(proc.stdout.strip().splitlines()[-1])
            self.workbench_source += f" (ai-edge-quantizer {report['ai_edge_quantizer']})"
            return out.read_bytes()


def _aeq(float_name: str, recipe: str):
    def make():
        return _AEQ(float_name, recipe)
    make.__name__ = f"{float_name}→{recipe}"
    return make


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
    "uint8_legacy_cnn": (uint8_legacy_cnn, UINT8_LEGACY,
        "the classic all-uint8 format of quantization-aware training (TF1 FakeQuant graph, v1 converter with "
        "inference_type uint8): uint8 CONV_2D / DEPTHWISE_CONV_2D (multiplier 2) / FULLY_CONNECTED with "
        "asymmetric uint8 weights (zero point 128), AVERAGE_POOL_2D, MAX_POOL_2D, ADD, MUL, TANH, LOGISTIC, "
        "RESIZE_BILINEAR with half_pixel_centers (v3), CONCATENATION, PAD, MEAN, L2_NORMALIZATION, SOFTMAX, "
        "requantizing uint8 QUANTIZE before ops whose output range the graph fixed; all v1 otherwise "
        "(runtime 2.2.0, from RESIZE_BILINEAR v3), two uint8 outputs"),
    "string_ops": (string_ops, FLOAT,
        "a STRING input tensor: STRIDED_SLICE of strings (v5, runtime 2.5.0), EQUAL of strings (v3), "
        "GATHER of strings (v1)"),
}

# The realistic architectures: name → (architecture, settings, demonstrates).  Variants the
# converter refuses are left out and said why: 16x8 of HARD_SWISH (mobilenet_v3_block), of NEG
# (transformer_tiny, from LayerNormalization's graph) and of UNIDIRECTIONAL_SEQUENCE_LSTM
# (kws_lstm) raise "Quantization to 16x8-bit not yet supported for op"; full-int8 conversion of the
# Keras 3 GRU (a WHILE loop) crashes the converter (segmentation fault, TensorFlow 2.21.0).
REALISTIC = {
    "mobilenet_v3_block_float": ("mobilenet_v3_block", FLOAT,
        "MobileNetV2/V3 blocks in float32: 1x1 expand / depthwise / 1x1 project CONV_2D and DEPTHWISE_CONV_2D with"
        " folded BatchNorm, residual ADD, HARD_SWISH v1 (runtime 1.15.0), squeeze-excite as MEAN (keepdims) → "
        "CONV_2D → CONV_2D → MUL, where the converter writes the hard-sigmoid gate as the conv with +3 folded into"
        " its bias and a fused RELU6, then a MUL by 1/6; the 'correct pad' ZeroPadding2D before the stride-2 "
        "depthwise is folded into SAME padding"),
    "mobilenet_v3_block_int8": ("mobilenet_v3_block", INT8,
        "the MobileNet blocks fully int8 (int8 input/output): int8 HARD_SWISH (still v1), per-channel CONV_2D / "
        "DEPTHWISE_CONV_2D v3, ADD / MUL / MEAN v2, FULLY_CONNECTED v4, SOFTMAX v2 (16x8 is refused by the "
        "converter: HARD_SWISH)"),
    "mobilenet_v3_block_dynamic": ("mobilenet_v3_block", DYNAMIC_RANGE,
        "dynamic-range: only the two convs with at least 1024 weights become hybrid CONV_2D v5 (int8 per-channel "
        "weights, float activations; runtime 2.4.0); the small ones stay float v1 but share the v5 OperatorCode"),
    "efficientnet_block_float": ("efficientnet_block", FLOAT,
        "EfficientNet's stem and MBConv blocks in float32: Rescaling as MUL + ADD, swish as LOGISTIC + MUL (there "
        "is no fused op), squeeze-excite with a sigmoid gate (MEAN → CONV_2D → CONV_2D → LOGISTIC → MUL), folded "
        "BatchNorm, Dropout gone, one residual ADD"),
    "efficientnet_block_int8": ("efficientnet_block", INT8,
        "the EfficientNet blocks fully int8: 13 int8 LOGISTIC v2 and 14 MUL v2 (swish, the SE gates, the "
        "Rescaling), MEAN v2, ADD v2, CONV_2D / DEPTHWISE_CONV_2D v3, FULLY_CONNECTED v4, SOFTMAX v2"),
    "efficientnet_block_int16x8": ("efficientnet_block", INT16X8,
        "the EfficientNet blocks as 16x8 (int16 activations, int8 weights, float input/output): int16 LOGISTIC / "
        "MUL / MEAN / ADD; the flatbuffer quantizer stamps the int8 versions (INT16X8 in the tests), today's rules"
        " give CONV_2D v8, FULLY_CONNECTED v11, MUL v4, ADD v3 and, for a 16x8 DEPTHWISE_CONV_2D (TFLite has no "
        "rule for it), v1"),
    "resnet_block_float": ("resnet_block", FLOAT,
        "ResNet's stem and basic blocks in float32: explicit ZeroPadding2D (PAD v1) before the 7x7 stride-2 conv "
        "and the 3x3 stride-2 MAX_POOL_2D, folded BatchNorm, residual ADD with a fused RELU, a 1x1 stride-2 "
        "projection shortcut, MEAN and a softmax classifier"),
    "resnet_block_int8": ("resnet_block", INT8,
        "the ResNet blocks fully int8: PAD v2, MAX_POOL_2D v2, CONV_2D v3, ADD v2 with a fused RELU, MEAN v2, "
        "FULLY_CONNECTED v4, SOFTMAX v2"),
    "resnet_block_int16x8": ("resnet_block", INT16X8,
        "the ResNet blocks as 16x8: int16 PAD / MAX_POOL_2D / ADD / MEAN / SOFTMAX and 16x8 CONV_2D / "
        "FULLY_CONNECTED with int64 biases; the int8 versions are stored, the metadata is the float model's 1.6.0,"
        " the stored versions need 1.14.0 and today's rules 2.15.0"),
    "resnet_block_dynamic": ("resnet_block", DYNAMIC_RANGE,
        "dynamic-range ResNet: the five convs with at least 1024 weights become hybrid CONV_2D v5 (runtime 2.4.0),"
        " the three smaller ones stay float and share the v5 code"),
    "unet_tiny_float": ("unet_tiny", FLOAT,
        "a two-level U-Net in float32: MAX_POOL_2D down, TRANSPOSE_CONV (stride 2, v1) and a bilinear UpSampling2D"
        " (RESIZE_BILINEAR with half_pixel_centers, v3, runtime 2.2.0) up, skip CONCATENATIONs, a nearest "
        "UpSampling2D that Keras 3 writes as RESHAPE + TILE + RESHAPE, a LOGISTIC output"),
    "unet_tiny_int8": ("unet_tiny", INT8,
        "the U-Net fully int8: TRANSPOSE_CONV v2, TILE v3 (int8: runtime 2.8.0), RESIZE_BILINEAR v3, CONCATENATION"
        " v2, LOGISTIC v2"),
    "unet_tiny_int16x8": ("unet_tiny", INT16X8,
        "the U-Net as 16x8: int16 TRANSPOSE_CONV, TILE, RESIZE_BILINEAR, CONCATENATION, LOGISTIC, the input "
        "QUANTIZE and two requantizing int16 → int16 QUANTIZE before the CONCATENATIONs (v2); today's rules give "
        "TILE v1 and TRANSPOSE_CONV v2, below the stamped v3 (TFLite has no int16 rule for them)"),
    "transformer_tiny_float": ("transformer_tiny", FLOAT,
        "a ViT-like encoder with an unknown batch dimension: LayerNormalization as MEAN / SQUARED_DIFFERENCE / "
        "RSQRT / MUL / NEG / ADD, two-head attention as FULLY_CONNECTED (keep_num_dims, v5) + TRANSPOSE + "
        "BATCH_MATMUL + SOFTMAX, GELU (v1, runtime 2.9.0), and run-time shapes (SHAPE / STRIDED_SLICE / GATHER / "
        "REDUCE_PROD / PACK / CONCATENATION) feeding RESHAPE"),
    "transformer_tiny_int8": ("transformer_tiny", INT8_FLOAT_IO,
        "the encoder with int8 kernels behind float input/output (what full-int8 gives without inference types): "
        "int8 SQUARED_DIFFERENCE / RSQRT / GELU / BATCH_MATMUL / TRANSPOSE / MEAN v2, QUANTIZE / DEQUANTIZE around"
        " the int32 shape arithmetic (16x8 is refused by the converter: NEG)"),
    "transformer_tiny_dynamic": ("transformer_tiny", DYNAMIC_RANGE,
        "dynamic-range encoder: hybrid FULLY_CONNECTED v12 with keep_num_dims (runtime 2.17.0) and a hybrid "
        "CONV_2D v5 patch embedding; the small classifier stays float and shares the v12 code"),
    "audio_conv1d_float": ("audio_conv1d", FLOAT,
        "a 1-D conv net with an unknown batch dimension: Conv1D as EXPAND_DIMS + CONV_2D + RESHAPE, "
        "AveragePooling1D / MaxPooling1D as 2-D pools, a causal dilated Conv1D as PAD + SPACE_TO_BATCH_ND + "
        "CONV_2D + BATCH_TO_SPACE_ND (v3, runtime 2.3.0), SeparableConv1D as DEPTHWISE_CONV_2D + CONV_2D, a "
        "standalone RELU, GlobalMaxPooling1D as REDUCE_MAX"),
    "audio_conv1d_int8": ("audio_conv1d", INT8,
        "the audio net fully int8: SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND v3, REDUCE_MAX v2, PAD v2, the pools v2, "
        "RELU v2"),
    "audio_conv1d_int16x8": ("audio_conv1d", INT16X8,
        "the audio net as 16x8 (float input/output): int16 SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND (v4 by today's "
        "rules), REDUCE_MAX, RELU, PAD and pools"),
    "audio_conv1d_dynamic": ("audio_conv1d", DYNAMIC_RANGE,
        "dynamic-range audio net: the dilated Conv1D (3072 weights) and the separable conv's pointwise CONV_2D "
        "(1536) are hybrid v5 (runtime 2.4.0), the first Conv1D (768) stays float"),
    "kws_lstm_float": ("kws_lstm", FLOAT,
        "a keyword-spotting LSTM (Keras 2 / tf_keras, whose LSTM the converter fuses): "
        "UNIDIRECTIONAL_SEQUENCE_LSTM v1 over 20 steps (runtime 1.13.1), a STRIDED_SLICE of the last step, "
        "FULLY_CONNECTED + SOFTMAX"),
    "kws_lstm_int8": ("kws_lstm", INT8,
        "the LSTM fully int8: UNIDIRECTIONAL_SEQUENCE_LSTM v1 with int8 input and gate weights, int32 gate biases,"
        " an int16 cell state and five 'intermediate' tensors (four empty float ones, the int8 effective hidden "
        "scale); 16x8 is refused by the converter"),
    "kws_lstm_dynamic": ("kws_lstm", DYNAMIC_RANGE,
        "dynamic-range LSTM: a hybrid UNIDIRECTIONAL_SEQUENCE_LSTM with asymmetric_quantize_inputs (v3, runtime "
        "2.3.0)"),
    "gru_tiny_float": ("gru_tiny", FLOAT,
        "a Keras 3 GRU: a WHILE loop (cond and body subgraphs, LESS / LOGICAL_AND) with GATHER of the time step, "
        "SPLIT of the gates, FULLY_CONNECTED (keep_num_dims v5, sharing its code with plain v1 ones), LOGISTIC / "
        "TANH / MUL / SUB / ADD, CONCATENATION of the steps; a per-step Dense after it"),
    "gru_tiny_dynamic": ("gru_tiny", DYNAMIC_RANGE,
        "dynamic-range GRU: hybrid FULLY_CONNECTED v12 inside the WHILE body (runtime 2.17.0); full-int8 "
        "conversion of this model crashes the converter"),
    "ssd_head_float": ("ssd_head", FLOAT,
        "an SSD-like head: box and class CONV_2D heads on two feature maps, RESHAPE to (anchors, 4) / (anchors, "
        "3), CONCATENATION along the anchor axis, LOGISTIC on the scores; two outputs"),
    "ssd_head_int8": ("ssd_head", INT8,
        "the SSD head fully int8: CONCATENATION v2 of differently scaled heads, RESHAPE, LOGISTIC v2, two int8 "
        "outputs"),
    "ssd_head_int16x8": ("ssd_head", INT16X8,
        "the SSD head as 16x8: int16 CONCATENATION after requantizing int16 → int16 QUANTIZE (v2), LOGISTIC, two "
        "DEQUANTIZE outputs"),
}
for _name, (_arch, _settings, _what) in REALISTIC.items():
    MODELS[_name] = (_architecture(_arch, _settings), _settings, _what)

# Found by dev/quantized_sweep.py: one quantized variant per architecture, the one whose operators,
# options or dtypes no other sample model has (plus grouped_conv_float, the AI Edge Quantizer's
# input for grouped_conv_aeq_static_wi8_ai8).  name → (architecture, settings, demonstrates)
SWEEP_MADE = {
    "tconv_decoder_dynamic": ("tconv_decoder", DYNAMIC_RANGE,
        "dynamic-range transposed-conv decoders: the two TRANSPOSE_CONVs with at least 1024 weights are hybrid "
        "(int8 per-channel weights, float input and output; one with bias and a fused RELU, v4, one without bias, "
        "v2), the others float (v1), a Conv1DTranspose as RESHAPE + TRANSPOSE_CONV, output_padding, LOGISTIC; one "
        "OperatorCode stores v4 (runtime 2.13.0)"),
    "grouped_conv_float": ("grouped_conv", FLOAT,
        "grouped convolutions in float32 (the AI Edge Quantizer's input for grouped_conv_aeq_static_wi8_ai8): "
        "CONV_2D with groups 4 and 2 (v6, runtime 2.9.0: the filter has fewer channels than the input) sharing "
        "their code with plain ones (v1), DEPTHWISE_CONV_2D with depth_multiplier 3 and 2, PRELU with a per-"
        "channel slope, ELU, REDUCE_MAX, a bias-less FULLY_CONNECTED; batch 2"),
    "grouped_conv_dynamic": ("grouped_conv", DYNAMIC_RANGE,
        "dynamic-range grouped convolutions: a grouped hybrid CONV_2D (groups 4, int8 per-channel weights, float "
        "activations; the grouped rule gives v6) and two plain hybrid ones (v5), float grouped CONV_2Ds, "
        "DEPTHWISE_CONV_2D with depth_multiplier 3 and 2, float PRELU and ELU, REDUCE_MAX; batch 2, so the "
        "hybrid kernels quantize each batch row with its own scale"),
    "pixel_ops_int8": ("pixel_ops", INT8,
        "tensor plumbing fully int8 (int8 input, four outputs): SPACE_TO_DEPTH, DEPTH_TO_SPACE (runtime 2.5.0), "
        "MIRROR_PAD reflect and symmetric, PADV2 with a non-zero constant, STRIDED_SLICE with steps, MAXIMUM, "
        "MINIMUM, MUL, SQUARED_DIFFERENCE, TRANSPOSE, GATHER of channels, L2_NORMALIZATION, SUM, REDUCE_MAX, and "
        "an int32 ARG_MAX output; all v2"),
    "aspp_int8": ("aspp", INT8,
        "DeepLab's ASPP fully int8: CONV_2D at dilation rates 2, 4 and 6, a dilated DEPTHWISE_CONV_2D, image "
        "pooling as MEAN, CONCATENATION of six differently scaled branches, RESIZE_BILINEAR with half_pixel_centers"
        " (v3) and with align_corners (v2, sharing the v3 code); runtime 2.2.0, two int8 outputs"),
    "yolo_head_int8": ("yolo_head", INT8,
        "a YOLOv3-tiny-like head fully int8: LEAKY_RELU (alpha 0.1), MAX_POOL_2D, a nearest UpSampling2D as "
        "RESHAPE + TILE, SPLIT_V of (xy, wh, objectness, classes), LOGISTIC, requantizing int8 → int8 QUANTIZE, "
        "EXP (v2, runtime 2.12.0) times the anchors (MUL), the cell grid ADDed, CONCATENATIONs"),
    "crnn_gru_16x8": ("crnn_gru", INT16X8,
        "an audio CRNN with an unrolled Keras 2 GRU as 16x8 (int16 activations, float input/output): "
        "Conv1D as 16x8 CONV_2D, MAX_POOL_2D, UNPACK of the time steps, 20 16x8 FULLY_CONNECTED, SPLIT and SPLIT_V"
        " of the gates, LOGISTIC, TANH, MUL, SUB, ADD, SOFTMAX, all int16; the int8 versions are stamped "
        "(INT16X8 in the tests), today's rules give UNPACK v4, SPLIT v4, SUB v5 and, for SPLIT_V (no int16 rule),"
        " v1"),
    "bilstm_int8": ("bilstm", INT8,
        "a Keras 2 Bidirectional LSTM fully int8: two integer UNIDIRECTIONAL_SEQUENCE_LSTMs (int8 gates, int16 "
        "cell state), the backward one between two REVERSE_V2s (v3, runtime 2.5.0), CONCATENATION of the "
        "directions, a keep_num_dims FULLY_CONNECTED (v5) per frame"),
}
for _name, (_arch, _settings, _what) in SWEEP_MADE.items():
    MODELS[_name] = (_architecture(_arch, _settings), _settings, _what)

# Files quantized by the AI Edge Quantizer from the float files above: name → (float model, recipe, demonstrates)
QUANTIZER_MADE = {
    "mobilenet_v3_block_aeq_a16w8": ("mobilenet_v3_block_float", "static_wi8_ai16",
        "the AI Edge Quantizer's int16-activation recipe on the float MobileNet blocks: int16 input/output, 16x8 "
        "CONV_2D / DEPTHWISE_CONV_2D with int64 biases, int16 ADD (pot_scale_int16 left at its default) / MUL / "
        "MEAN / SOFTMAX, HARD_SWISH left in float between DEQUANTIZE and QUANTIZE; every operator keeps the float "
        "file's version (v1) and the metadata its 1.15.0"),
    "transformer_tiny_aeq_a8w8": ("transformer_tiny_float", "static_wi8_ai8",
        "the AI Edge Quantizer's int8 recipe on the float encoder: int8 input/output, int8 SQUARED_DIFFERENCE / "
        "RSQRT / GELU / BATCH_MATMUL / TRANSPOSE / ADD / MUL / MEAN, int8 FULLY_CONNECTED with keep_num_dims, the "
        "shape arithmetic left int32; all at the float file's versions (v1, FULLY_CONNECTED v5)"),
    "transformer_tiny_aeq_a16w8": ("transformer_tiny_float", "static_wi8_ai16",
        "the AI Edge Quantizer's int16-activation recipe on the encoder: int16 FULLY_CONNECTED / BATCH_MATMUL / "
        "SOFTMAX / GELU / RSQRT / MEAN / MUL / ADD / TRANSPOSE, float NEG and SQUARED_DIFFERENCE between "
        "DEQUANTIZE and QUANTIZE; the versions stay the float file's"),
    "resnet_block_aeq_dynamic": ("resnet_block_float", "dynamic_wi8_afp32",
        "the AI Edge Quantizer's dynamic recipe: every conv, however small, and the FULLY_CONNECTED get int8 "
        "per-channel weights with float activations (hybrid), written as version 1 (today's rules: CONV_2D v5, "
        "FULLY_CONNECTED v12, runtime 2.17.0; the metadata says 1.6.0)"),
    "grouped_conv_aeq_static_wi8_ai8": ("grouped_conv_float", "static_wi8_ai8",
        "the AI Edge Quantizer's int8 recipe on the float grouped convolutions: grouped int8 CONV_2D (groups 4 and "
        "2, v6; LiteRT runs them through its reference kernel, whose last rounding shift takes ties away from "
        "zero where the plain int8 CONV_2Ds' ruy path takes them up), int8 DEPTHWISE_CONV_2D "
        "with depth_multiplier 3 and 2, PRELU, ELU and REDUCE_MAX left in float between DEQUANTIZE and QUANTIZE, "
        "an int8 FULLY_CONNECTED without bias; the versions stay the float file's"),
}
for _name, (_float, _recipe, _what) in QUANTIZER_MADE.items():
    MODELS[_name] = (_aeq(_float, _recipe), _aeq_settings(_float, _recipe), _what)


# ------------------------------------------------------------------------------------------------


# The first models name their Keras tensors from the process-wide layer counters (they were made
# before _fresh existed, and their committed bytes are kept): building one of them alone would
# give other tensor names.  So whenever one is asked for, all of them up to it are built in order.
LEGACY = [n for n in MODELS if n not in REALISTIC and n not in SWEEP_MADE and n not in QUANTIZER_MADE]


def build_order(names) -> list[str]:
    """``names`` plus the legacy models that must be built before them, in MODELS order."""
    legacy = [LEGACY.index(n) for n in names if n in LEGACY]
    upto = set(LEGACY[: max(legacy) + 1]) if legacy else set()
    return [n for n in MODELS if n in upto or n in names]


# Converting a fused LSTM to full int8 leaves state behind in the converter: the next such conversion in
# the same process writes other bytes into two buffers no tensor uses (the model is the same, its sha256
# is not).  So these files are converted in a child process of their own (``--emit``), and each comes
# out the same whether it is built alone or in a full run.
ISOLATED = {"kws_lstm_int8", "bilstm_int8"}
IN_CHILD = [False]


def _build_in_child(name: str) -> tuple[bytes, str]:
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}.tflite"
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--emit", name, str(out)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{name}: the child process failed:\n{proc.stderr[-3000:]}")
        return out.read_bytes(), json.loads(proc.stdout.strip().splitlines()[-1])["converter"]


def build(name: str) -> tuple[bytes, str]:
    """The converted bytes and how the converter was made."""
    if name in ISOLATED and not IN_CHILD[0]:
        return _build_in_child(name)
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
        "made_by": made_by(name, source, settings),
        "demonstrates": demonstrates,
        "used_by": list(USED_BY),
    }


def made_by(name: str, source: str, settings: dict) -> dict:
    made = {"script": SCRIPT, "function": MODELS[name][0].__name__, "tensorflow": tf.__version__,
            "keras": keras.__version__, "numpy": np.__version__, "converter": source, "settings": settings}
    arch = {**REALISTIC, **SWEEP_MADE}.get(name, ("",))[0]
    if arch in TF_KERAS or (name in QUANTIZER_MADE and name.startswith(tuple(TF_KERAS))):
        import tf_keras
        made["tf_keras"] = tf_keras.__version__
    return made


def write_manifest(out: Path, entries: dict) -> None:
    path = out / "manifest.json"
    old = {}
    if path.exists():
        old = {e["name"]: e for e in json.loads(path.read_text())["models"]}
    old.update(entries)
    known = {f"{n}.tflite" for n in MODELS}
    # entries of another script (dev/train_digits.py's trained model) are kept as they are
    models = [old[k] for k in sorted(old) if k in known or old[k]["made_by"]["script"] != SCRIPT]
    doc = {"about": "Small models made by the current TFLite converter (a few then quantized by the AI Edge "
                    "Quantizer) for the workbench's tests; "
                    f"regenerate with `python {SCRIPT}` in a venv with tensorflow-cpu (see README.md).",
           "models": models}
    path.write_text(json.dumps(doc, indent=2) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help=f"models to make (default all: {', '.join(MODELS)})")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--check", action="store_true", help="rebuild in memory and compare with the manifest's sha256")
    p.add_argument("--aeq-python", default=AEQ_PYTHON[0] or None,
                   help="a Python with ai-edge-quantizer, for the *_aeq_* models (default $WORKBENCH_AEQ_PYTHON)")
    p.add_argument("--emit", nargs=2, metavar=("NAME", "FILE"), help=argparse.SUPPRESS)  # the ISOLATED child
    args = p.parse_args(argv)
    AEQ_PYTHON[0] = args.aeq_python or ""
    if args.emit:
        IN_CHILD[0] = True
        data, source = build(args.emit[0])
        Path(args.emit[1]).write_bytes(data)
        print(json.dumps({"converter": source}))
        return 0
    names = args.names or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        p.error(f"unknown model(s) {unknown}")
    if args.check:
        manifest = {e["name"]: e for e in json.loads((OUT / "manifest.json").read_text())["models"]}
        bad = 0
        for n in build_order(names):
            digest = hashlib.sha256(build(n)[0]).hexdigest()
            if n not in names:
                continue
            same = manifest.get(f"{n}.tflite", {}).get("sha256") == digest
            bad += not same
            print(f"{n}: {'same' if same else 'DIFFERENT'}")
        return 1 if bad else 0
    args.out.mkdir(parents=True, exist_ok=True)
    entries = {}
    for n in build_order(names):
        data, source = build(n)
        if n not in names:
            continue
        (args.out / f"{n}.tflite").write_bytes(data)
        entries[f"{n}.tflite"] = entry(n, data, source)
        print(f"{n}.tflite: {len(data):,} bytes", flush=True)
    write_manifest(args.out, entries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
