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
[-1, 1) values, 16 batches unless ``--samples`` says otherwise.  The hand-made blocks that became
sample models (aspp, yolo_head, crnn_gru and crnn_lstm, tconv_decoder, grouped_conv, pixel_ops,
bilstm) are built by ``convert_sample_models.py``'s functions, imported from it.
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

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the architectures both scripts build (and their seeded helpers) live in convert_sample_models.py,
# so the sweep's files of a sample model's name are that sample model's bytes
from convert_sample_models import ARCHITECTURES, _crnn_model, _fresh, _random_batchnorm, _rep  # noqa: E402

L = keras.layers
MODES = ("int8", "int8fio", "16x8", "dynamic")
AEQ_RECIPES = ("static_wi8_ai8", "static_wi8_ai16", "dynamic_wi8_afp32")
AEQ_SCRIPT = Path(__file__).resolve().parent / "aeq_quantize.py"


# ------------------------------------------------------------------------------------------------
# Converter settings


def _converter(model, mode: str, shapes, samples: int, tf_keras_model: bool = False):
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if mode == "dynamic":
        return conv
    conv.representative_dataset = _rep(shapes, count=samples)
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


def _app(factory, size: int, seed: int, **kwargs):
    def build():
        _fresh(seed)
        model = factory(weights=None, input_shape=(size, size, 3), classes=10, **kwargs)
        return _random_batchnorm(model, seed)
    return build


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
    def shared(name):  # an architecture of convert_sample_models.py
        build, shapes = ARCHITECTURES[name]
        return lambda: (build(), shapes)

    reg = {
        "aspp": shared("aspp"),
        "yolo_head": shared("yolo_head"),
        "vit_gelu": _vit(False),
        "vit_gelu_tanh": _vit(True),
        "crnn_lstm": lambda: (_crnn_model("lstm"), [(1, 40, 16)]),
        "crnn_gru": shared("crnn_gru"),
        "tconv_decoder": shared("tconv_decoder"),
        "grouped_conv": shared("grouped_conv"),
        "pixel_ops": shared("pixel_ops"),
        "vit_relu": _vit_relu,
        "bilstm": shared("bilstm"),
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
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a dev tool: record and go on (no tf_keras: SystemExit)
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
