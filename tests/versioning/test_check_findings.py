"""check(): custom ops, Flex ops and type combinations no kernel takes are findings of their own kind.

The error texts are LiteRT's (compared with what ai-edge-litert prints, in a child process); the
custom ops a stock release registers run from the release that added each.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from workbench import dump, load
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder
from workbench.versioning import (
    CANNOT_RUN_KINDS,
    FINDING_KINDS,
    STOCK_CUSTOM_OPS,
    RuntimeProfile,
    check,
    is_flex_op,
)
from workbench.versioning.walkthrough import OpConfig, build_op_model


def custom_model(name: str, version: int = 1):
    b = ModelBuilder()
    x = b.input("x", [1, 8], np.float32)
    y = b.tensor("y", [1, 8], np.float32)
    b.op(B.CUSTOM, [x], [y], custom_code=name, version=version)
    b.output(y)
    return load(dump(b.build()))


def errors(findings):
    return [f for f in findings if f.is_error]


# ---------------------------------------------------------------------------------------------
# custom ops
# ---------------------------------------------------------------------------------------------
def test_an_unregistered_custom_op_is_a_custom_op_finding():
    (f,) = check(custom_model("Convolution2DTransposeBias"), "2.16.1")
    assert f.kind == "custom-op" and f.is_error
    assert (f.subgraph, f.op_index, f.op, f.version) == (0, 0, "Convolution2DTransposeBias", 1)
    assert f.message == ("Encountered unresolved custom op: Convolution2DTransposeBias.\n"
                         "See instructions: https://www.tensorflow.org/lite/guide/ops_custom "
                         "Node number 0 (Convolution2DTransposeBias) failed to prepare.")
    assert "the app must register a kernel" in f.reason and "XNNPACK" in f.reason
    assert f.title == FINDING_KINDS["custom-op"] and f.computed is None


def test_a_flex_op_needs_the_select_tf_ops_delegate():
    assert is_flex_op("FlexRFFT") and not is_flex_op("MyFlex") and not is_flex_op("")
    (f,) = check(custom_model("FlexRFFT"), "2.16.1")
    assert f.kind == "flex-op" and f.is_error
    assert f.message.startswith("Select TensorFlow op(s), included in the given model, is(are) not supported by "
                                "this interpreter. Make sure you apply/link the Flex delegate before inference.")
    assert f.message.endswith("ops_selectNode number 0 (FlexRFFT) failed to prepare.")
    assert "TensorFlow's RFFT op" in f.reason and "Select TF ops (Flex) delegate" in f.reason


@pytest.mark.parametrize("name,first,before", [
    ("TFLite_Detection_PostProcess", "1.10.0", "1.9.0"), ("NumericVerify", "2.2.0", "2.1.0")])
def test_stock_custom_ops_run_from_the_release_that_registered_them(name, first, before):
    m = custom_model(name)
    assert check(m, first) == [] and check(m, "2.16.1") == []
    (f,) = check(m, before)
    assert f.kind == "custom-op" and f"from {first} on" in f.reason


@pytest.mark.parametrize("name", ["Mfcc", "AudioSpectrogram"])
def test_audio_ops_run_from_1_9_0_and_older_releases_cannot_be_told(name):
    m = custom_model(name)
    assert check(m, "1.9.0") == [] and check(m, "2.16.1") == []
    (f,) = check(m, "1.8.0")
    assert f.kind == "unknown" and not f.is_error and "releases before 1.9.0 were not checked" in f.reason


def test_a_stock_custom_op_at_an_unregistered_version_is_unresolved():
    (f,) = check(custom_model("TFLite_Detection_PostProcess", version=2), "2.16.1")
    assert f.kind == "custom-op" and "version 1 only" in f.reason and f.version == 2


def test_a_stock_custom_op_of_unknown_first_release():
    m = custom_model("aeq.hadamard_rotation")
    (f,) = check(m, "2.16.1")
    assert f.kind == "unknown" and not f.is_error
    assert check(m, RuntimeProfile.registered_kernels()) == []


def test_every_stock_custom_op_registers_version_1():
    assert {"TFLite_Detection_PostProcess", "Mfcc", "AudioSpectrogram"} <= set(STOCK_CUSTOM_OPS)
    assert all(op.versions == (1,) for op in STOCK_CUSTOM_OPS.values())


def test_a_corpus_model_with_mediapipe_custom_ops_cannot_run_as_shipped(corpus_paths):
    m = load(corpus_paths["selfie_segmentation"])
    (f,) = errors(check(m, "2.16.1"))
    assert (f.kind, f.op, f.op_index) == ("custom-op", "Convolution2DTransposeBias", 244)
    attention = load(corpus_paths["face_landmark_with_attention"])
    assert {f.op for f in errors(check(attention, "2.16.1"))} == {
        "Landmarks2TransformMatrix", "TransformTensorBilinear", "TransformLandmarks"}


# ---------------------------------------------------------------------------------------------
# type combinations no kernel takes
# ---------------------------------------------------------------------------------------------
def test_conv_uint8_input_int8_weights_int16_output_cannot_run():
    m = build_op_model(OpConfig(B.CONV_2D, input="uint8", weights="int8", output="int16"))
    for release in ("1.11.0", "2.16.1"):
        (f,) = check(m, release)
        assert f.kind == "unsupported-types" and f.is_error and f.kind in CANNOT_RUN_KINDS
        assert f.message == ("no CONV_2D kernel takes input UINT8, filter INT8, output INT16: "
                             "Node number 0 (CONV_2D) failed to prepare.")
        assert f.detail == "input UINT8, filter INT8, output INT16"
        assert f.reason.startswith("v1: no rule applies: the version rules have no row for these types")
        assert "int16 · int8 → int16 (16x8" in f.reason and f.computed == 1


def test_an_unregistered_version_is_reported_before_the_types():
    def kinds(model, release):
        return [f.kind for f in check(model, release) if f.op is not None]
    dilated = build_op_model(OpConfig(B.DEPTHWISE_CONV_2D, input="int16", weights="int16", output="int16",
                                      dilation=2))
    assert kinds(dilated, "1.11.0") == ["op-version"]  # (DEPTHWISE_CONV_2D, 2) is not in 1.11.0: looked up first
    assert kinds(dilated, "1.12.0") == ["unsupported-types"]


def test_runnable_explorer_signatures_have_no_type_finding():
    for cfg in (OpConfig(B.DEPTHWISE_CONV_2D, input="int16", weights="int8", output="int16"),
                OpConfig(B.ADD, input="int16", weights="int16", output="int16", pot_scale_int16=True),
                OpConfig(B.FULLY_CONNECTED, input="float32", weights="int8", output="float32")):
        assert [f.kind for f in check(build_op_model(cfg), "2.16.1")] == [], cfg


def test_finding_kinds_are_described():
    assert CANNOT_RUN_KINDS <= set(FINDING_KINDS)
    assert {"custom-op", "flex-op", "unsupported-types", "op-version", "unknown"} <= set(FINDING_KINDS)


# ---------------------------------------------------------------------------------------------
# the texts are LiteRT's
# ---------------------------------------------------------------------------------------------
CHILD = r"""
import sys
from ai_edge_litert.interpreter import Interpreter, OpResolverType
it = Interpreter(model_path=sys.argv[1],
                 experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
try:
    it.allocate_tensors()
    print("OK", end="")
except RuntimeError as exc:
    print(str(exc), end="")
"""


@pytest.mark.parametrize("name", ["Convolution2DTransposeBias", "FlexRFFT", "MyOp", "TFLite_Detection_PostProcess"])
def test_messages_are_what_litert_prints(tmp_path, name):
    pytest.importorskip("ai_edge_litert")
    version = 2 if name == "TFLite_Detection_PostProcess" else 1
    m = custom_model(name, version)
    path = tmp_path / "m.tflite"
    path.write_bytes(dump(m))
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=120)
    (f,) = check(m, "2.16.1")
    assert out.stdout.strip() == f.message.strip()
