"""Semantic versions and TensorFlow's VersionDef rule, with TensorFlow's own error texts."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import VersionError
from workbench.schema import CLASSES, dump, load
from workbench.schema import BuiltinOperator as B
from workbench.schema.builder import ModelBuilder
from workbench.versioning import SemVer, VersionDef, accepts, tflite_accepts, write_min_runtime_metadata


# ---------------------------------------------------------------------------------------------
# SemVer
# ---------------------------------------------------------------------------------------------
def test_prerelease_is_lower_than_its_release():
    assert SemVer.parse("2.3.0-rc1") < SemVer.parse("2.3.0")
    assert SemVer.parse("2.3.0-rc1") > SemVer.parse("2.2.9")
    assert SemVer.parse("2.3.0-rc1").is_prerelease and not SemVer.parse("2.3.0").is_prerelease


def test_semver_spec_precedence_example():
    # semver.org §11's own example, in ascending order
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
             "1.0.0-rc.1", "1.0.0"]
    parsed = [SemVer.parse(s) for s in chain]
    assert sorted(reversed(parsed)) == parsed
    for a, b in zip(parsed, parsed[1:]):
        assert a < b and not b < a and a != b


def test_numeric_components_compare_as_numbers():
    assert SemVer.parse("2.10.0") > SemVer.parse("2.9.0")
    assert SemVer.parse("1.0.0-rc.10") > SemVer.parse("1.0.0-rc.9")
    assert SemVer.parse("1.0.0-2") < SemVer.parse("1.0.0-a")  # numeric below alphanumeric


def test_build_metadata_is_ignored_in_precedence():
    assert SemVer.parse("1.0.0+build.1") == SemVer.parse("1.0.0+build.2")
    assert hash(SemVer.parse("1.0.0+a")) == hash(SemVer.parse("1.0.0"))
    assert str(SemVer.parse("1.0.0-rc.1+exp.sha")) == "1.0.0-rc.1+exp.sha"


def test_pip_spelling_of_tensorflow_prereleases():
    v = SemVer.parse("2.16.0rc0")
    assert v.prerelease == ("rc0",) and v < SemVer.parse("2.16.0") and v == SemVer.parse("2.16.0-rc0")


@pytest.mark.parametrize("text", ["2.3", "01.2.3", "1.2.3-01", "1.2.3-", "1.2.3+", "1.2.3-a..b", "x.y.z", ""])
def test_invalid_semver_is_refused(text):
    with pytest.raises(VersionError):
        SemVer.parse(text)


def test_semver_compares_with_strings():
    assert SemVer.parse("2.3.0") == "2.3.0" and SemVer.parse("2.3.0-rc1") < "2.3.0"


# ---------------------------------------------------------------------------------------------
# VersionDef (tensorflow/core/framework/versions.cc)
# ---------------------------------------------------------------------------------------------
def test_producer_below_min_producer_is_refused():
    v = accepts(consumer=10, min_producer=5, data=VersionDef(producer=3))
    assert not v and v.check == "producer"
    assert v.reason == ("GraphDef producer version 3 below min producer 5 supported by TensorFlow 2.3.0.  "
                        "Please regenerate your graph.")


def test_min_consumer_above_consumer_is_refused():
    v = accepts(10, 0, VersionDef(producer=12, min_consumer=11), tf_version="2.12.0")
    assert not v and v.check == "min_consumer"
    assert v.reason == ("GraphDef min consumer version 11 above current version 10 for TensorFlow 2.12.0.  "
                        "Please upgrade TensorFlow.")


def test_bad_consumer_is_refused():
    v = accepts(10, 0, VersionDef(producer=12, min_consumer=0, bad_consumers=(9, 10)))
    assert not v and v.check == "bad_consumer"
    assert v.reason == ("GraphDef disallows consumer version 10.  "
                        "Please upgrade TensorFlow: this version is likely buggy.")


def test_the_three_tests_run_in_upstream_order():
    # everything wrong at once: the producer test speaks first, then min_consumer
    assert accepts(10, 5, VersionDef(3, 11, (10,))).check == "producer"
    assert accepts(10, 5, VersionDef(6, 11, (10,))).check == "min_consumer"


def test_newer_producer_alone_is_accepted():
    v = accepts(consumer=10, min_producer=0, data=VersionDef(producer=1394))
    assert v and v.check == "ok" and "newer producer is fine" in v.reason


def test_boundaries_are_inclusive():
    assert accepts(10, 5, VersionDef(producer=5, min_consumer=10))


def test_misordered_arguments_are_an_internal_error():
    v = accepts(consumer=3, min_producer=5, data=VersionDef(producer=7))
    assert not v and v.check == "internal"
    assert v.reason == "GraphDef version check has consumer 3 < min_producer 5."


def test_checkpoint_names():
    v = accepts(1, 2, VersionDef(1), upper_name="Checkpoint", lower_name="checkpoint")
    assert v.check == "internal"
    v = accepts(2, 1, VersionDef(0), upper_name="Checkpoint", lower_name="checkpoint")
    assert v.reason.endswith("Please regenerate your checkpoint.")


# ---------------------------------------------------------------------------------------------
# The same idea on a TFLite model
# ---------------------------------------------------------------------------------------------
def _leaky_relu_int16():
    b = ModelBuilder()
    x = b.input("x", [4], np.int16)
    y = b.tensor("y", [4], np.int16)
    b.op(B.LEAKY_RELU, [x], [y], CLASSES["LeakyReluOptions"](alpha=0.1), version=2)  # needs 2.3.0
    b.output(y)
    return load(dump(b.build()))


def test_tflite_model_min_runtime_plays_min_consumer():
    m = _leaky_relu_int16()
    v = tflite_accepts(m, "2.2.0")
    assert not v and v.check == "min_consumer"
    assert v.reason == ("TFLite model min consumer version 2.3.0 (stored op versions) above current version 2.2.0 "
                        "for TensorFlow Lite 2.2.0.  Please upgrade TensorFlow Lite.")
    assert tflite_accepts(m, "2.3.0")
    assert tflite_accepts(m, "2.3.0").details.version == "2.3.0"


def test_tflite_metadata_takes_precedence():
    m = load(dump(write_min_runtime_metadata(_leaky_relu_int16(), "2.10.0")))
    assert not tflite_accepts(m, "2.3.0")
    assert "metadata" in tflite_accepts(m, "2.3.0").reason
    assert tflite_accepts(m, "2.3.0", use_metadata=False)
