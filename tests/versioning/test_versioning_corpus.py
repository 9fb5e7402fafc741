"""Today's version rules against real converter output.

For every corpus model: the computed version is never below the stored one, and every place where
it is higher is listed below as data, with the rule that explains it.  The rules are never bent
to make a model match: a new difference must be added here, with its explanation, by a person.

The current-converter MobileNets (TensorFlow 2.21, in ../shared/models beside the repository)
must match exactly: computed == stored for every builtin operator, and the computed minimum
runtime == the stored ``min_runtime_version`` metadata.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from helpers.versioning_corpus_facts import EXPECTED_BELOW
from workbench import corpus
from workbench.schema import BuiltinOperator as B
from workbench.schema import load, op_name
from workbench.versioning import (
    compare_runtime_version,
    computed_versions,
    min_runtime,
    read_min_runtime_metadata,
    update_versions,
)

# Rules the MediaPipe files' writer did not apply (it predates them or skipped UpdateOpVersion):
FLOAT16_DEQUANTIZE = "v3: in0=FLOAT16"  # DEQUANTIZE of float16 (and int16) is v3 (runtime 1.15.0); stored v2
HALF_PIXEL_BILINEAR = "v3: half_pixel_centers=True"  # RESIZE_BILINEAR half_pixel_centers is v3 (runtime 2.2.0)

# TFLite's legacy post-training quantizer (tensorflow/lite/tools/optimize, the calibrate-and-quantize
# step after conversion) ends with SetOperatorCodeVersion: every operator its property table calls
# quantizable gets its code raised to the table's quantized version, whatever its tensors' types.
# A shape computation left in int32 (SHAPE → STRIDED_SLICE → PACK → RESHAPE) is stored as v2.
LEGACY_QUANTIZER_RAISED = "v1: no rule applies"
# That quantizer also leaves the min_runtime_version metadata the float conversion wrote: the
# int8 operators it made (CONV_2D v3, FULLY_CONNECTED v4, ...) need 1.14.0, the metadata says less.
STALE_METADATA = {"mltk_audio_example1", "mltk_fingerprint_signature_generator", "mltk_keyword_spotting_mobilenetv2",
                  "mltk_keyword_spotting_with_transfer_learning", "mltk_tflite_micro_magic_wand",
                  "mltk_tflite_micro_speech", "mltk_anomaly_detection", "mltk_image_classification",
                  "mltk_keyword_spotting", "mltk_visual_wake_words"}

# model → {(op, stored, computed): (number of operators, reason op_version gives)}
EXPECTED_DIFFERENCES: dict[str, dict[tuple[str, int, int], tuple[int, str]]] = {
    "face_detection_full_range_sparse": {},
    "face_detection_short_range": {("DEQUANTIZE", 2, 3): (74, FLOAT16_DEQUANTIZE)},
    "face_landmark": {("DEQUANTIZE", 2, 3): (113, FLOAT16_DEQUANTIZE)},
    "face_landmark_with_attention": {("DEQUANTIZE", 2, 3): (371, FLOAT16_DEQUANTIZE)},
    "hand_landmark_full": {("DEQUANTIZE", 2, 3): (102, FLOAT16_DEQUANTIZE)},
    "hand_landmark_lite": {("DEQUANTIZE", 2, 3): (102, FLOAT16_DEQUANTIZE)},
    "hand_recrop": {},
    "iris_landmark": {},
    "palm_detection_full": {("DEQUANTIZE", 2, 3): (133, FLOAT16_DEQUANTIZE)},
    "palm_detection_lite": {("DEQUANTIZE", 2, 3): (113, FLOAT16_DEQUANTIZE)},
    "pose_detection": {},
    "pose_landmark_full": {("DEQUANTIZE", 2, 3): (192, FLOAT16_DEQUANTIZE)},
    "selfie_segmentation": {("DEQUANTIZE", 2, 3): (110, FLOAT16_DEQUANTIZE),
                            ("RESIZE_BILINEAR", 1, 3): (3, HALF_PIXEL_BILINEAR)},
    "selfie_segmentation_landscape": {("DEQUANTIZE", 2, 3): (110, FLOAT16_DEQUANTIZE),
                                      ("RESIZE_BILINEAR", 1, 3): (3, HALF_PIXEL_BILINEAR)},
    "sine_float": {},
    # written by recent converters that run UpdateOpVersion: computed == stored for every operator
    "basic_pitch_nmp": {},
    "microwakeword_alexa": {},
    "microwakeword_hey_jarvis": {},
    "microwakeword_hey_mycroft": {},
    "microwakeword_okay_nabu": {},
    "openwakeword_alexa": {},
    "openwakeword_embedding_model": {},
    "openwakeword_hey_jarvis": {},
    "openwakeword_hey_mycroft": {},
    "openwakeword_hey_rhasspy": {},
    "openwakeword_melspectrogram": {},
    "openwakeword_okay_nabu": {},
    # Silicon Labs' MLTK models: computed == stored, but for the legacy quantizer's raised codes
    "mltk_audio_example1": {},
    "mltk_autoencoder_example_float32": {},
    "mltk_autoencoder_example": {},
    "mltk_image_example1_float32": {},
    "mltk_image_example1": {},
    "mltk_fingerprint_signature_generator": {},
    "mltk_keyword_spotting_alexa_float32": {},
    "mltk_keyword_spotting_alexa": {},
    "mltk_keyword_spotting_mobilenetv2": {},
    "mltk_keyword_spotting_on_off_v3": {},
    "mltk_keyword_spotting_on_off_v3_float32": {},
    "mltk_keyword_spotting_pacman_v3_float32": {},
    "mltk_keyword_spotting_pacman_v3": {},
    "mltk_keyword_spotting_with_transfer_learning": {},
    "mltk_rock_paper_scissors_float32": {},
    "mltk_rock_paper_scissors": {},
    "mltk_tflite_micro_magic_wand": {},
    "mltk_tflite_micro_speech": {},
    "mltk_image_classification": {},
    "mltk_keyword_spotting": {},
    "mltk_visual_wake_words": {},
    "aitoolkit_image_classifier": {},
    "aitoolkit_object_detector": {},
    "aitoolkit_deeplab_v3": {},
    "star_trek_activation_phrase_v2": {},
    "mltk_anomaly_detection": {("STRIDED_SLICE", 2, 1): (1, LEGACY_QUANTIZER_RAISED),
                               ("PACK", 2, 1): (1, LEGACY_QUANTIZER_RAISED)},
}

# model → (min_runtime_version metadata, min runtime from stored versions, from computed versions)
EXPECTED_MIN_RUNTIME: dict[str, tuple[str | None, str, str]] = {
    "face_detection_full_range_sparse": ("2.2.0", "2.2.0", "2.2.0"),
    "face_detection_short_range": (None, "1.14.0", "1.15.0"),
    "face_landmark": (None, "1.14.0", "1.15.0"),
    "face_landmark_with_attention": (None, "1.14.0", "1.15.0"),
    "hand_landmark_full": ("1.14.0", "1.14.0", "1.15.0"),
    "hand_landmark_lite": ("1.14.0", "1.14.0", "1.15.0"),
    "hand_recrop": (None, "1.8.0", "1.8.0"),
    "iris_landmark": (None, "1.8.0", "1.8.0"),
    "palm_detection_full": ("2.2.0", "2.2.0", "2.2.0"),
    "palm_detection_lite": ("2.2.0", "2.2.0", "2.2.0"),
    "pose_detection": ("2.2.0", "2.2.0", "2.2.0"),
    "pose_landmark_full": ("2.2.0", "2.2.0", "2.2.0"),
    "selfie_segmentation": (None, "1.15.0", "2.2.0"),
    "selfie_segmentation_landscape": (None, "1.15.0", "2.2.0"),
    "sine_float": ("1.5.0", "1.5.0", "1.5.0"),
    "basic_pitch_nmp": ("2.2.0", "2.2.0", "2.2.0"),
    # resource variables: VAR_HANDLE, READ_VARIABLE and ASSIGN_VARIABLE v1 need runtime 2.6.0
    "microwakeword_alexa": ("2.6.0", "2.6.0", "2.6.0"),
    "microwakeword_hey_jarvis": ("2.6.0", "2.6.0", "2.6.0"),
    "microwakeword_hey_mycroft": ("2.6.0", "2.6.0", "2.6.0"),
    "microwakeword_okay_nabu": ("2.6.0", "2.6.0", "2.6.0"),
    "openwakeword_alexa": ("1.14.0", "1.14.0", "1.14.0"),
    "openwakeword_embedding_model": ("1.14.0", "1.14.0", "1.14.0"),
    "openwakeword_hey_jarvis": ("1.15.0", "1.15.0", "1.15.0"),
    "openwakeword_hey_mycroft": ("1.14.0", "1.14.0", "1.14.0"),
    "openwakeword_hey_rhasspy": ("1.14.0", "1.14.0", "1.14.0"),
    "openwakeword_melspectrogram": ("2.3.0", "2.3.0", "2.3.0"),
    "openwakeword_okay_nabu": ("1.14.0", "1.14.0", "1.14.0"),
    "aitoolkit_image_classifier": (None, "1.14.0", "1.14.0"),
    "aitoolkit_object_detector": ("1.14.0", "1.14.0", "1.14.0"),
    "aitoolkit_deeplab_v3": (None, "1.12.0", "1.12.0"),         # DEPTHWISE_CONV_2D v2: dilation
    "star_trek_activation_phrase_v2": ("2.5.0", "2.5.0", "2.5.0"),
    # MLTK: the STALE_METADATA ones keep their float graph's figure
    "mltk_audio_example1": ("1.5.0", "1.14.0", "1.14.0"),
    "mltk_autoencoder_example_float32": ("1.14.0", "1.14.0", "1.14.0"),
    "mltk_autoencoder_example": ("1.14.0", "1.14.0", "1.14.0"),
    "mltk_image_example1_float32": ("1.5.0", "1.5.0", "1.5.0"),
    "mltk_image_example1": ("1.14.0", "1.14.0", "1.14.0"),
    "mltk_fingerprint_signature_generator": ("1.6.0", "1.14.0", "1.14.0"),
    "mltk_keyword_spotting_alexa_float32": ("1.5.0", "1.5.0", "1.5.0"),
    "mltk_keyword_spotting_alexa": ("1.14.0", "1.14.0", "1.14.0"),
    "mltk_keyword_spotting_mobilenetv2": ("1.6.0", "1.14.0", "1.14.0"),
    "mltk_keyword_spotting_on_off_v3": ("1.14.0", "1.14.0", "1.14.0"),
    "mltk_keyword_spotting_on_off_v3_float32": ("1.5.0", "1.5.0", "1.5.0"),
    "mltk_keyword_spotting_pacman_v3_float32": ("1.5.0", "1.5.0", "1.5.0"),
    "mltk_keyword_spotting_pacman_v3": ("1.14.0", "1.14.0", "1.14.0"),
    "mltk_keyword_spotting_with_transfer_learning": ("1.6.0", "1.14.0", "1.14.0"),
    "mltk_rock_paper_scissors_float32": ("1.5.0", "1.5.0", "1.5.0"),
    "mltk_rock_paper_scissors": ("1.14.0", "1.14.0", "1.14.0"),
    "mltk_tflite_micro_magic_wand": ("1.5.0", "1.14.0", "1.14.0"),
    "mltk_tflite_micro_speech": ("1.5.0", "1.14.0", "1.14.0"),
    "mltk_anomaly_detection": ("1.11.0", "1.14.0", "1.14.0"),
    "mltk_image_classification": ("1.5.0", "1.14.0", "1.14.0"),
    "mltk_keyword_spotting": ("1.5.0", "1.14.0", "1.14.0"),
    "mltk_visual_wake_words": ("1.5.0", "1.14.0", "1.14.0"),
}


def _builtin_versions(model):
    return [v for v in computed_versions(model) if v.signature.op != B.CUSTOM]


def test_expectations_cover_the_corpus():
    assert set(EXPECTED_DIFFERENCES) == set(corpus.MODELS) == set(EXPECTED_MIN_RUNTIME)


def test_computed_is_never_below_stored(corpus_model, corpus_paths):
    """... but where TFLite's legacy quantizer raised a code (EXPECTED_BELOW, each listed)."""
    model = load(corpus_paths[corpus_model])
    below = Counter((v.op, v.stored, v.number) for v in _builtin_versions(model) if v.number < v.stored)
    assert dict(below) == EXPECTED_BELOW.get(corpus_model, {})


def test_differences_are_exactly_the_listed_ones(corpus_model, corpus_paths):
    model = load(corpus_paths[corpus_model])
    counts = Counter((v.op, v.stored, v.number) for v in _builtin_versions(model) if v.number != v.stored)
    reasons = {(v.op, v.stored, v.number): v.reason for v in _builtin_versions(model) if v.number != v.stored}
    actual = {k: (n, reasons[k]) for k, n in counts.items()}
    assert actual == EXPECTED_DIFFERENCES[corpus_model]


def test_min_runtime_stored_and_computed(corpus_model, corpus_paths):
    model = load(corpus_paths[corpus_model])
    meta, stored, computed = EXPECTED_MIN_RUNTIME[corpus_model]
    assert read_min_runtime_metadata(model) == meta
    assert min_runtime(model).version == stored
    assert min_runtime(model, computed=True).version == computed
    if meta is not None and corpus_model not in STALE_METADATA:  # the converter's figure agrees with our table
        assert meta == stored
    elif meta is not None:      # the legacy quantizer's int8 operators need more than the float graph did
        assert compare_runtime_version(meta, stored) and stored == "1.14.0"


def test_update_versions_only_raises_the_listed_codes(corpus_model, corpus_paths):
    model = load(corpus_paths[corpus_model])
    updated = update_versions(model)
    raised = {(op_name(c), a.version, c.version)
              for a, c in zip(model.operator_codes, updated.operator_codes) if a.version != c.version}
    assert raised == set(EXPECTED_DIFFERENCES[corpus_model]) - set(EXPECTED_BELOW.get(corpus_model, {}))
    assert all(c.version >= a.version for a, c in zip(model.operator_codes, updated.operator_codes))
    assert min_runtime(updated).version == EXPECTED_MIN_RUNTIME[corpus_model][2]


# ---------------------------------------------------------------------------------------------
# The current converter's MobileNets (../shared/models beside the repository root)
# ---------------------------------------------------------------------------------------------
SHARED_MODELS = Path(__file__).resolve().parents[2].parent / "shared" / "models"
MOBILENETS = sorted(p.name for p in SHARED_MODELS.glob("mobilenet_*.tflite")) if SHARED_MODELS.is_dir() else []
needs_shared = pytest.mark.skipif(
    not MOBILENETS, reason=f"current-converter MobileNets not found in {SHARED_MODELS} (CI keeps them in "
                           "../shared/models beside the repository)")


@needs_shared
@pytest.mark.parametrize("name", MOBILENETS or ["none"])
def test_current_converter_mobilenet_matches_exactly(name):
    model = load(SHARED_MODELS / name)
    versions = _builtin_versions(model)
    assert versions, "no builtin operators?"
    mismatched = [repr(v) for v in versions if v.number != v.stored]
    assert mismatched == []  # 100 % of builtin operators
    meta = read_min_runtime_metadata(model)
    assert meta and min_runtime(model, computed=True).version == meta
    assert min_runtime(model).version == meta
    assert update_versions(model) is model
