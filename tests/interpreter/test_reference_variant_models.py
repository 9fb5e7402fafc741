"""Whole integer models under ``variant="reference"``, bit-exact with LiteRT's reference kernels.

LiteRT ships two op resolvers: ``BUILTIN`` (the optimized kernels every other oracle test uses) and
``BUILTIN_REF`` (TFLite's reference kernels).  On int8 models they disagree in the last bit of some
outputs — ruy's ties-up final shift in CONV_2D / FULLY_CONNECTED, depthwise chunks, MEAN's
optimized requantization, blocks of 8 in QUANTIZE / DEQUANTIZE, … (``workbench.interpreter.variants``).
Here every integer model of the repository's sample models, ../shared/models and the corpus runs
with ``Interpreter(variant="reference")`` against ``BUILTIN_REF`` in a child process (its kernels
can abort), on seeded inputs filling each input's range; stateful models over several invokes.

``BUILTIN_REF`` does not register every op version the builtin resolver has; the models it cannot
run are listed in :data:`REF_CANNOT_RUN` with LiteRT's own message, and a test checks that it still
refuses them (so the list cannot go stale).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import litert_steps
from helpers.litert_runner import make_input
from workbench import corpus
from workbench.interpreter import Interpreter
from workbench.schema import load
from workbench.schema.enums import TensorType

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_models"
SHARED = ROOT.parent / "shared" / "models"
INTEGER_TYPES = {TensorType.INT8, TensorType.UINT8, TensorType.INT16}

# model → the op LiteRT 2.3's BUILTIN_REF resolver has no kernel for ("Didn't find op for builtin opcode …")
REF_CANNOT_RUN = {
    "grouped_conv_aeq_static_wi8_ai8": "'ELU' version '1'",
    "pixel_ops_int8": "'DEPTH_TO_SPACE' version '2'",
    "unet_tiny_int8": "'TILE' version '3'",
    "unet_tiny_int16x8": "'TILE' version '3'",
    "yolo_head_int8": "'TILE' version '3'",
}


def is_integer_model(path: Path) -> bool:
    """A model with quantized integer activations (int8 / uint8 / int16 tensors that carry a scale)."""
    model = load(path)

    def constant(t) -> bool:
        return bool(t.buffer) and model.buffers[t.buffer].data is not None and len(model.buffers[t.buffer].data) > 0

    return any(int(t.type) in INTEGER_TYPES and t.quantization is not None and t.quantization.scale
               and not constant(t) for sg in model.subgraphs for t in (sg.tensors or ()))


def _local_models() -> list[Path]:
    paths = sorted(SAMPLES.glob("*.tflite")) + sorted(SHARED.glob("*_int8.tflite"))
    return [p for p in paths if is_integer_model(p)]


def feeds_for(it: Interpreter, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [make_input(rng, d["dtype"], d["shape"]) for d in it.get_input_details()]


def compare(path: Path) -> None:
    name = path.stem
    shapes = corpus.INPUT_SHAPES.get(name)
    steps = 3 if name in corpus.STATEFUL else 1
    it = Interpreter(model_path=str(path), variant="reference")
    if shapes:
        for d, shape in zip(it.get_input_details(), shapes):
            it.resize_tensor_input(d["index"], list(shape))
    it.allocate_tensors()
    feeds = [feeds_for(it, seed) for seed in range(steps)]
    theirs = litert_steps.run_steps(path.read_bytes(), feeds, input_shapes=shapes, resolver="BUILTIN_REF")
    for step, (feed, expected) in enumerate(zip(feeds, theirs)):
        for d, x in zip(it.get_input_details(), feed):
            it.set_tensor(d["index"], x)
        it.invoke()
        for k, d in enumerate(it.get_output_details()):
            ours, ref = it.get_tensor(d["index"]), expected[k]
            assert ours.shape == ref.shape and ours.dtype == ref.dtype, f"{name} output {k}"
            if ours.dtype.kind == "f":
                bad = int((ours.view(f"u{ours.itemsize}") != ref.view(f"u{ref.itemsize}")).sum())
            else:
                bad = int((ours != ref).sum())
            assert bad == 0, (f"{name} step {step} output {k}: {bad}/{ours.size} elements differ from LiteRT "
                              f"BUILTIN_REF")


LOCAL = [p for p in _local_models() if p.stem not in REF_CANNOT_RUN]


@pytest.mark.parametrize("path", LOCAL, ids=[p.stem for p in LOCAL])
def test_local_integer_model_bit_exact_with_builtin_ref(path):
    compare(path)


# the corpus models with quantized integer activations (the test below keeps this list true)
CORPUS_INTEGER = (
    "aitoolkit_image_classifier", "aitoolkit_object_detector", "microwakeword_alexa", "microwakeword_hey_jarvis",
    "microwakeword_hey_mycroft", "microwakeword_okay_nabu", "mltk_anomaly_detection", "mltk_audio_example1",
    "mltk_autoencoder_example", "mltk_fingerprint_signature_generator", "mltk_image_classification",
    "mltk_image_example1", "mltk_keyword_spotting", "mltk_keyword_spotting_alexa",
    "mltk_keyword_spotting_mobilenetv2", "mltk_keyword_spotting_on_off_v3", "mltk_keyword_spotting_pacman_v3",
    "mltk_keyword_spotting_with_transfer_learning", "mltk_rock_paper_scissors", "mltk_tflite_micro_magic_wand",
    "mltk_tflite_micro_speech", "mltk_visual_wake_words",
)


def test_the_corpus_integer_list_is_every_integer_corpus_model(corpus_paths):
    assert sorted(n for n, p in corpus_paths.items() if is_integer_model(Path(p))) == sorted(CORPUS_INTEGER)


@pytest.mark.parametrize("name", CORPUS_INTEGER)
def test_corpus_integer_model_bit_exact_with_builtin_ref(name, corpus_paths):
    compare(Path(corpus_paths[name]))


@pytest.mark.parametrize("name", sorted(REF_CANNOT_RUN))
def test_builtin_ref_still_cannot_run(name):
    path = SAMPLES / f"{name}.tflite"
    with pytest.raises(RuntimeError) as err:
        litert_steps.run_steps(path.read_bytes(), [[]], resolver="BUILTIN_REF")
    assert f"Didn't find op for builtin opcode {REF_CANNOT_RUN[name]}" in str(err.value)
