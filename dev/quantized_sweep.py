"""Convert real architectures into quantized .tflite files for a bit-exactness sweep (a dev tool).

The sample models are small on purpose; this script makes the bigger, real ones a reviewer may
try: ``keras.applications`` networks (random but seeded weights, seeded BatchNormalization
statistics, small inputs) and hand-made blocks that real models use (DeepLab ASPP, a YOLO head, a
small ViT, an audio CRNN, transposed-conv decoders), each converted by ``tf.lite.TFLiteConverter``
into the post-training quantized flavours::

    int8       full-integer, int8 input and output
    int8fio    full-integer, float input and output (QUANTIZE / DEQUANTIZE at the edges)
    16x8       EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8 (int16 activations)
    dynamic    dynamic-range (int8 weights, float activations, hybrid kernels)

and, with ``--aeq-python`` (a Python with ``ai-edge-quantizer``), the float model quantized by the AI
Edge Quantizer (``dev/aeq_quantize.py``) with the recipes in ``--aeq-recipes`` (default
``static_wi8_ai8 static_wi8_ai16 dynamic_wi8_afp32``): files ``NAME_aeq_RECIPE.tflite``.

Run it with the TensorFlow venv (TensorFlow is never a dependency of the project), then compare
with the project's venv::

    /tmp/tfvenv/bin/python dev/quantized_sweep.py                       # everything -> /tmp/qsweep
    /tmp/tfvenv/bin/python dev/quantized_sweep.py --list
    /tmp/tfvenv/bin/python dev/quantized_sweep.py aspp yolo_head --modes int8 16x8 --out DIR
    /tmp/tfvenv/bin/python dev/quantized_sweep.py --modes --aeq-python /tmp/aeqvenv/bin/python   # AEQ only
    python dev/compare_with_litert.py /tmp/qsweep/*.tflite --seeds 0 1 2
    python dev/compare_per_op.py --seeds 0,1 /tmp/qsweep/*.tflite       # which operator differs first

Models are built and converted one at a time (the machine is shared).  A conversion the converter
refuses is recorded, not fatal.  ``OUT/manifest.json`` lists, per file, the architecture, mode,
size, sha256 and the TensorFlow/Keras versions; refused conversions carry the converter's last
error line.  The representative dataset is the one of ``convert_sample_models.py``: seeded uniform
[-1, 1) values, 16 batches unless ``--samples`` says otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

L = keras.layers
MODES = ("int8", "int8fio", "16x8", "dynamic")
AEQ_RECIPES = ("static_wi8_ai8", "static_wi8_ai16", "dynamic_wi8_afp32")
AEQ_SCRIPT = Path(__file__).resolve().parent / "aeq_quantize.py"


# ------------------------------------------------------------------------------------------------
# Converter settings


def _rep(shapes, count: int, seed: int = 0):
    def gen():
        rng = np.random.default_rng(seed)
        for _ in range(count):
            yield [rng.uniform(-1, 1, size=s).astype(np.float32) for s in shapes]
    return gen


def _converter(model, mode: str, shapes, samples: int, tf_keras_model: bool = False):
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if mode == "dynamic":
        return conv
    conv.representative_dataset = _rep(shapes, samples)
    if mode == "16x8":
        conv.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        return conv
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if mode == "int8":
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv


# ------------------------------------------------------------------------------------------------
# Building blocks


def _fresh(n: int) -> None:
    keras.backend.clear_session()
    keras.utils.set_random_seed(n)


def _random_batchnorm(model, n: int):
    """Seeded, non-trivial BatchNormalization statistics (the initial ones fold to a no-op)."""
    rng = np.random.default_rng(n)
    for layer in model.layers:
        if isinstance(layer, L.BatchNormalization):
            w = layer.get_weights()
            c = w[0].shape[0]
            new = []
            if layer.scale:
                new.append(rng.uniform(0.5, 1.5, c).astype(np.float32))
            if layer.center:
                new.append(rng.normal(0, 0.2, c).astype(np.float32))
            new += [rng.normal(0, 0.2, c).astype(np.float32), rng.uniform(0.5, 1.5, c).astype(np.float32)]
            layer.set_weights(new)
    return model


def _app(factory, size: int, seed: int, **kwargs):
    def build():
        _fresh(seed)
        model = factory(weights=None, input_shape=(size, size, 3), classes=10, **kwargs)
        return _random_batchnorm(model, seed)
    return build


def _aspp():
    """DeepLab v3 style: a stride-2 stem, ASPP (1x1 conv, 3x3 convs at rates 2/4/6, image pooling
    upsampled by RESIZE_BILINEAR), CONCATENATION, a 1x1 projection, and a bilinear upsampling to the
    input size both with half-pixel centers (Keras) and with align_corners (TF1 DeepLab)."""
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
    up1 = L.Resizing(32, 32, interpolation="bilinear")(logits)
    up2 = L.Lambda(lambda t: tf.compat.v1.image.resize_bilinear(t, (32, 32), align_corners=True))(logits)
    return _random_batchnorm(keras.Model(x, [up1, up2]), 31), [(1, 32, 32, 3)]


def _yolo_head():
    """A YOLOv3-tiny-like detector: conv + LEAKY_RELU(0.1) backbone, an upsampled (nearest) second
    scale, heads RESHAPEd to (cells, anchors, 5 + classes), SPLIT into xy / wh / objectness /
    classes; SIGMOID on xy, objectness and classes, EXP on wh, MUL by anchor sizes, ADD of the
    cell grid, CONCATENATION of everything."""
    _fresh(32)
    x = keras.Input((32, 32, 3), batch_size=1)

    def cbl(t, f, k=3, s=1):
        t = L.Conv2D(f, k, strides=s, padding="same", use_bias=False)(t)
        return L.LeakyReLU(negative_slope=0.1)(L.BatchNormalization()(t))

    y = cbl(x, 8)
    y = L.MaxPooling2D(2)(y)
    y = cbl(y, 16)
    f1 = L.MaxPooling2D(2)(y)              # 8x8
    f1 = cbl(f1, 24)
    f2 = cbl(L.MaxPooling2D(2)(f1), 32)    # 4x4
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
    return _random_batchnorm(keras.Model(x, L.Concatenate(axis=1)(outs)), 32), [(1, 32, 32, 3)]


class _ClassToken(L.Layer):
    def build(self, shape):
        self.token = self.add_weight(shape=(1, 1, shape[-1]), initializer="random_normal", name="token")
        self.pos = self.add_weight(shape=(1, shape[1] + 1, shape[-1]), initializer="random_normal", name="pos")

    def call(self, x):
        token = tf.tile(self.token, [tf.shape(x)[0], 1, 1])
        return tf.concat([token, x], axis=1) + self.pos


def _vit(approximate: bool):
    def build():
        """A small ViT: 4x4 patches, a class token and position table, two pre-norm encoder layers
        (LayerNormalization, three-head attention: BATCH_MATMUL + SOFTMAX, a GELU MLP), the class
        token's LayerNorm and a Dense head."""
        _fresh(33 + approximate)
        x = keras.Input((16, 16, 3), batch_size=1)
        t = L.Reshape((16, 24))(L.Conv2D(24, 4, strides=4)(x))
        t = _ClassToken(name="class_token")(t)
        for _ in range(2):
            h = L.LayerNormalization(epsilon=1e-6)(t)
            t = L.Add()([t, L.MultiHeadAttention(num_heads=3, key_dim=8)(h, h)])
            h = L.LayerNormalization(epsilon=1e-6)(t)
            h = L.Dense(48)(h)
            h = L.Lambda(lambda v: tf.nn.gelu(v, approximate=approximate))(h)
            t = L.Add()([t, L.Dense(24)(h)])
        t = L.LayerNormalization(epsilon=1e-6)(t)
        cls = L.Lambda(lambda v: v[:, 0])(t)
        return keras.Model(x, L.Dense(10, activation="softmax")(cls)), [(1, 16, 16, 3)]
    return build


def _crnn(rnn: str):
    def build():
        """An audio CRNN over 40 frames x 16 mel bins, in Keras 2 (tf_keras, whose LSTM the converter
        fuses into UNIDIRECTIONAL_SEQUENCE_LSTM): Conv1D (EXPAND_DIMS + CONV_2D), a strided Conv1D,
        BatchNorm, then a GRU (a WHILE loop) or an LSTM, and a softmax head."""
        import tf_keras
        tf_keras.backend.clear_session()
        tf_keras.utils.set_random_seed(34)
        tl = tf_keras.layers
        x = tf_keras.Input((40, 16), batch_size=1)
        y = tl.Conv1D(24, 3, padding="same", activation="relu")(x)
        y = tl.BatchNormalization()(y)
        y = tl.Conv1D(32, 3, strides=2, padding="same", activation="relu")(y)
        y = tl.MaxPooling1D(2)(y)
        if rnn == "lstm":
            y = tl.LSTM(32, return_sequences=True)(y)
            y = tl.LSTM(32)(y)
        else:
            y = tl.GRU(32, unroll=True)(y)
        model = tf_keras.Model(x, tl.Dense(5, activation="softmax")(y))
        rng = np.random.default_rng(34)
        for layer in model.layers:
            if isinstance(layer, tl.BatchNormalization):
                c = layer.get_weights()[0].shape[0]
                layer.set_weights([rng.uniform(0.5, 1.5, c).astype(np.float32), rng.normal(0, 0.2, c).astype(np.float32),
                                   rng.normal(0, 0.2, c).astype(np.float32), rng.uniform(0.5, 1.5, c).astype(np.float32)])
        return model, [(1, 40, 16)]
    return build


def _decoder():
    """Transposed-conv decoders: Conv2DTranspose 3x3/stride 2 'same' with bias and BN + ReLU,
    4x4/stride 2 'valid', 2x2/stride 2 without bias, one with output_padding, a Conv1DTranspose
    branch (EXPAND_DIMS + TRANSPOSE_CONV), and a sigmoid output."""
    _fresh(35)
    x = keras.Input((4, 4, 16), batch_size=1)
    y = L.Conv2DTranspose(12, 3, strides=2, padding="same")(x)                     # 8x8
    y = L.Activation("relu")(L.BatchNormalization()(y))
    y = L.Conv2DTranspose(8, 4, strides=2, padding="valid", activation="relu")(y)  # 18x18
    y = L.Conv2DTranspose(8, 2, strides=2, use_bias=False)(y)                        # 36x36
    y = L.Conv2DTranspose(4, 3, strides=2, padding="same", output_padding=1)(y)     # 72x72
    img = L.Activation("sigmoid")(y)
    s = L.Reshape((16, 16))(x)
    s = L.Conv1DTranspose(8, 3, strides=2, padding="same", activation="relu")(s)    # 32x8
    return _random_batchnorm(keras.Model(x, [img, s]), 35), [(1, 4, 4, 16)]


def _grouped():
    """Convolutions real models use beyond the sample models: grouped Conv2Ds (groups 4 and 2; one
    big enough to be quantized in the dynamic-range file: a grouped hybrid CONV_2D), a
    depthwise conv with depth_multiplier 3, a SeparableConv2D with depth_multiplier 2, a strided
    dilated-free 5x5 conv, PReLU, and a GlobalMaxPooling head (REDUCE_MAX); batch 2."""
    _fresh(36)
    x = keras.Input((16, 16, 8), batch_size=2)
    y = L.Conv2D(16, 3, padding="same", groups=4, activation="relu")(x)
    y = L.Conv2D(32, 3, padding="same", groups=4)(y)           # 1152 weights: int8 in dynamic-range files
    y = L.Conv2D(16, 1, groups=2, activation="relu")(y)
    y = L.DepthwiseConv2D(3, depth_multiplier=3, padding="same")(y)
    y = L.PReLU(shared_axes=[1, 2])(L.BatchNormalization()(y))
    y = L.SeparableConv2D(24, 3, depth_multiplier=2, padding="same", activation="relu6")(y)
    y = L.Conv2D(16, 5, strides=2, padding="valid", activation="elu")(y)
    y = L.Conv2D(12, 1, groups=2)(y)
    out = L.Dense(6)(L.GlobalMaxPooling2D()(y))
    return _random_batchnorm(keras.Model(x, out), 36), [(2, 16, 16, 8)]


def _pixel_ops():
    """Tensor plumbing that detection / segmentation / super-resolution models use: YOLOv5's
    SPACE_TO_DEPTH 'focus', DEPTH_TO_SPACE (pixel shuffle), MIRROR_PAD (reflect and symmetric), PADV2
    with a non-zero constant, TRANSPOSE, STRIDED_SLICE with a step, GATHER, MAXIMUM / MINIMUM,
    SQUARED_DIFFERENCE, L2_NORMALIZATION, SUM, REDUCE_MAX over channels, ARG_MAX."""
    _fresh(37)
    x = keras.Input((16, 16, 4), batch_size=1)
    y = L.Lambda(lambda t: tf.nn.space_to_depth(t, 2))(x)                          # 8x8x16
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
    up = L.Lambda(lambda t: tf.nn.depth_to_space(t, 2))(L.Conv2D(16, 1)(d))      # 16x16x4
    t = L.Lambda(lambda t: tf.transpose(t, [0, 2, 1, 3]))(up)
    s = L.Lambda(lambda t: t[:, ::2, 1::2, :])(t)
    g = L.Lambda(lambda t: tf.gather(t, [3, 0, 2, 2, 1], axis=-1))(s)
    n = L.Lambda(lambda t: tf.math.l2_normalize(t, axis=-1))(g)
    tot = L.Lambda(lambda t: tf.reduce_sum(t, axis=[1, 2]))(g)
    mx = L.Lambda(lambda t: tf.reduce_max(t, axis=-1))(n)
    am = L.Lambda(lambda t: tf.argmax(t, axis=-1, output_type=tf.int32))(up)
    return keras.Model(x, [n, tot, mx, am]), [(1, 16, 16, 4)]


def _vit_relu():
    """The small ViT with a ReLU MLP (the 16x8 converter refuses the GELU graphs' NEG), so int16
    BATCH_MATMUL, MEAN, SQUARED_DIFFERENCE, RSQRT and SOFTMAX get converted too."""
    _fresh(38)
    x = keras.Input((16, 16, 3), batch_size=1)
    t = L.Reshape((16, 24))(L.Conv2D(24, 4, strides=4)(x))
    t = _ClassToken(name="class_token")(t)
    for _ in range(2):
        h = L.LayerNormalization(epsilon=1e-6)(t)
        t = L.Add()([t, L.MultiHeadAttention(num_heads=3, key_dim=8)(h, h)])
        h = L.LayerNormalization(epsilon=1e-6)(t)
        t = L.Add()([t, L.Dense(24)(L.Dense(48, activation="relu")(h))])
    t = L.LayerNormalization(epsilon=1e-6)(t)
    return keras.Model(x, [t, L.Dense(10)(L.GlobalAveragePooling1D()(t))]), [(1, 16, 16, 3)]


def _bilstm():
    """A Keras 2 Bidirectional LSTM (two fused UNIDIRECTIONAL_SEQUENCE_LSTMs + REVERSE_V2) over 12
    frames x 10 features, per-frame output.  (With a SimpleRNN after it, TF 2.21's int8 conversion
    dies with a segmentation fault.)"""
    import tf_keras
    tf_keras.backend.clear_session()
    tf_keras.utils.set_random_seed(39)
    tl = tf_keras.layers
    x = tf_keras.Input((12, 10), batch_size=1)
    y = tl.Bidirectional(tl.LSTM(16, return_sequences=True))(x)
    return tf_keras.Model(x, tl.Dense(4)(y)), [(1, 12, 10)]


def _applications():
    A = keras.applications
    return {
        "mobilenet_a025": (_app(A.MobileNet, 64, 41, alpha=0.25), 64),
        "mobilenetv2_a035": (_app(A.MobileNetV2, 64, 42, alpha=0.35), 64),
        "mobilenetv3small": (_app(A.MobileNetV3Small, 64, 43, minimalistic=False), 64),
        "mobilenetv3small_min": (_app(A.MobileNetV3Small, 64, 44, minimalistic=True), 64),
        "mobilenetv3large": (_app(A.MobileNetV3Large, 64, 45, minimalistic=False), 64),
        "mobilenetv3large_min": (_app(A.MobileNetV3Large, 64, 46, minimalistic=True), 64),
        "efficientnetb0": (_app(A.EfficientNetB0, 64, 47), 64),
        "efficientnetv2b0": (_app(A.EfficientNetV2B0, 64, 48), 64),
        "resnet50": (_app(A.ResNet50, 64, 49), 64),
        "densenet121": (_app(A.DenseNet121, 64, 50), 64),
        "nasnetmobile": (_app(A.NASNetMobile, 64, 51), 64),
        "inceptionv3": (_app(A.InceptionV3, 75, 52), 75),
        "xception": (_app(A.Xception, 71, 53), 71),
        "convnexttiny": (_app(A.ConvNeXtTiny, 32, 54), 32),
    }


def registry() -> dict:
    """name -> function returning (model, representative input shapes)."""
    reg = {
        "aspp": _aspp,
        "yolo_head": _yolo_head,
        "vit_gelu": _vit(False),
        "vit_gelu_tanh": _vit(True),
        "crnn_lstm": _crnn("lstm"),
        "crnn_gru": _crnn("gru"),
        "tconv_decoder": _decoder,
        "grouped_conv": _grouped,
        "pixel_ops": _pixel_ops,
        "vit_relu": _vit_relu,
        "bilstm": _bilstm,
    }
    for name, (build, size) in _applications().items():
        reg[name] = (lambda b=build, s=size: (b(), [(1, s, s, 3)]))
    return reg


# ------------------------------------------------------------------------------------------------


def _aeq(model, name: str, args, manifest: dict) -> None:
    """The float conversion of ``model``, quantized by the AI Edge Quantizer in a child process."""
    import subprocess
    import tempfile

    try:
        data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    except Exception as exc:  # noqa: BLE001
        print(f"{name}_float REFUSED by the converter: {str(exc).splitlines()[-1][:200]}", flush=True)
        return
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "float.tflite"
        src.write_bytes(data)
        for recipe in args.aeq_recipes:
            fname = f"{name}_aeq_{recipe}.tflite"
            t1 = time.time()
            proc = subprocess.run([args.aeq_python, str(AEQ_SCRIPT), str(src), str(args.out / fname), recipe,
                                   "--samples", str(args.samples)], capture_output=True, text=True)
            if proc.returncode != 0:
                lines = [s for s in proc.stderr.splitlines() if s.strip()]
                msg = lines[-1].strip()[:300] if lines else f"exit {proc.returncode}"
                print(f"{fname:40s} REFUSED by ai-edge-quantizer: {msg}", flush=True)
                manifest[fname] = {"architecture": name, "mode": f"aeq {recipe}", "error": msg}
                continue
            out = (args.out / fname).read_bytes()
            manifest[fname] = {"architecture": name, "mode": f"aeq {recipe}", "bytes": len(out),
                               "sha256": hashlib.sha256(out).hexdigest(), "tensorflow": tf.__version__,
                               "keras": keras.__version__, "samples": args.samples,
                               "quantizer": json.loads(proc.stdout.strip().splitlines()[-1])}
            print(f"{fname:40s} {len(out):>10d} bytes  {time.time() - t1:6.1f} s", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="models to make (default: all)")
    p.add_argument("--out", type=Path, default=Path("/tmp/qsweep"))
    p.add_argument("--modes", nargs="*", choices=MODES, default=list(MODES))
    p.add_argument("--aeq-python", default=None, help="a Python with ai-edge-quantizer: also make NAME_aeq_RECIPE")
    p.add_argument("--aeq-recipes", nargs="+", default=list(AEQ_RECIPES))
    p.add_argument("--samples", type=int, default=16, help="representative batches")
    p.add_argument("--list", action="store_true")
    args = p.parse_args(argv)
    reg = registry()
    if args.list:
        print("\n".join(reg))
        return 0
    names = args.names or list(reg)
    unknown = [n for n in names if n not in reg]
    if unknown:
        p.error(f"unknown model(s) {unknown}; --list shows the names")
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name in names:
        t0 = time.time()
        try:
            model, shapes = reg[name]()
        except Exception as exc:  # noqa: BLE001 - a dev tool: record and go on
            print(f"{name:24s} build failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}", flush=True)
            manifest[name] = {"error": f"build: {exc}"[:500]}
            continue
        for mode in args.modes:
            fname = f"{name}_{mode}.tflite"
            t1 = time.time()
            try:
                data = _converter(model, mode, shapes, args.samples).convert()
            except Exception as exc:  # noqa: BLE001
                lines = [s for s in str(exc).splitlines() if s.strip()]
                msg = next((s for s in lines if "error" in s.lower()), lines[-1] if lines else type(exc).__name__)
                print(f"{fname:40s} REFUSED by the converter: {msg.strip()[:200]}", flush=True)
                manifest[fname] = {"architecture": name, "mode": mode, "error": msg.strip()[:500]}
                continue
            (args.out / fname).write_bytes(data)
            manifest[fname] = {"architecture": name, "mode": mode, "bytes": len(data),
                               "sha256": hashlib.sha256(data).hexdigest(),
                               "tensorflow": tf.__version__, "keras": keras.__version__,
                               "samples": args.samples}
            print(f"{fname:40s} {len(data):>10d} bytes  {time.time() - t1:6.1f} s", flush=True)
            manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        if args.aeq_python:
            _aeq(model, name, args, manifest)
            manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        print(f"{name:24s} done in {time.time() - t0:.1f} s", flush=True)
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
