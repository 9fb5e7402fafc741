"""The runtime table, the CompareRuntimeVersion order, min_runtime, the metadata and the findings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.errors import VersionError
from workbench.schema import CLASSES, dump, load, metadata
from workbench.schema import BuiltinOperator as B
from workbench.schema.builder import ModelBuilder
from workbench.versioning import (
    REGISTERED,
    RULES,
    RUNTIME_TABLE,
    RuntimeProfile,
    RuntimeVersion,
    check,
    check_delegate,
    compare_runtime_version,
    min_runtime,
    read_min_runtime_metadata,
    runtime_for,
    write_min_runtime_metadata,
)
from workbench.versioning.runtime import METADATA_SIZE, code_out_of_range_text, op_not_found_text

DW = CLASSES["DepthwiseConv2DOptions"]


# ---------------------------------------------------------------------------------------------
# CompareRuntimeVersion
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b", [
    ("", "1.5.0"),          # the converter's starting point is lower than anything
    ("2.3", "2.3.0"),       # fewer components is lower
    ("1.5.0", "1.14.0"),    # numeric, not lexicographic
    ("1.13.1", "1.14.0"),
    ("2.14.0", "2.14.4"),
    ("9.9", "10.0"),
    ("2.3.0", "2.3.0.1"),
    ("2.x", "2.x.0"),       # unparsable components are skipped, then the length decides
])
def test_compare_runtime_version_lower(a, b):
    assert compare_runtime_version(a, b)
    assert not compare_runtime_version(b, a)
    assert RuntimeVersion(a) < RuntimeVersion(b) and RuntimeVersion(b) > a


@pytest.mark.parametrize("a, b", [
    ("2.3.0", "2.3.0"),
    ("2.x.0", "2.3.0"),         # 'x' does not parse: skipped, so neither is lower
    ("2.3.0-rc1", "2.3.0"),     # '0-rc1' does not parse either
    (" 2.3.0", "2.3.0"),        # SimpleAtoi allows surrounding whitespace
    ("02.3.0", "2.3.0"),
])
def test_compare_runtime_version_neither_lower(a, b):
    assert not compare_runtime_version(a, b) and not compare_runtime_version(b, a)
    assert RuntimeVersion(a) <= b and RuntimeVersion(a) >= b


def test_runtime_version_sorts_like_the_converter():
    releases = ["2.3.0", "1.14.0", "", "1.5.0", "2.14.4", "2.3", "2.10.0"]
    assert [str(r) for r in sorted(map(RuntimeVersion, releases))] == [
        "", "1.5.0", "1.14.0", "2.3", "2.3.0", "2.10.0", "2.14.4"]
    assert RuntimeVersion("2.3.0") == "2.3.0" and RuntimeVersion("2.3.0") != RuntimeVersion("2.3")


_component = st.one_of(st.integers(0, 30).map(str), st.sampled_from(["", "x", "0-rc1", "3 "]))
_release = st.lists(_component, min_size=1, max_size=4).map(".".join)


@given(_release, _release)
def test_compare_is_never_true_both_ways(a, b):
    assert not (compare_runtime_version(a, b) and compare_runtime_version(b, a))
    assert not compare_runtime_version(a, a)


@given(st.lists(st.integers(0, 30), min_size=1, max_size=4), st.lists(st.integers(0, 30), min_size=1, max_size=4))
def test_numeric_releases_compare_like_tuples(a, b):
    # purely numeric: component-wise, and a proper prefix is lower — exactly Python's tuple order
    sa, sb = ".".join(map(str, a)), ".".join(map(str, b))
    assert compare_runtime_version(sa, sb) == (tuple(a) < tuple(b))


def test_int32_overflow_component_is_skipped():
    assert not compare_runtime_version("2.99999999999.0", "2.3.0")
    assert not compare_runtime_version("2.3.0", "2.99999999999.0")


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------
# runtime_version.cc @03f49db5 (v1..v8) and the FULLY_CONNECTED line
RUNTIME_STRINGS = {
    "CONV_2D": "1.5.0 1.14.0 1.14.0 2.3.0 2.4.0 2.9.0 2.11.0 2.15.0",
    "DEPTHWISE_CONV_2D": "1.5.0 1.12.0 1.14.0 2.2.0 2.3.0 2.3.0 2.11.0",
    "AVERAGE_POOL_2D": "1.5.0 1.14.0 2.3.0", "MAX_POOL_2D": "1.5.0 1.14.0 2.3.0",
    "ADD": "1.5.0 1.14.0 2.4.0 2.6.0 2.13.0 2.23.0", "SUB": "1.6.0 1.14.0 2.3.0 2.4.0 2.4.0",
    "MUL": "1.5.0 1.14.0 1.15.0 2.3.0 2.6.0 2.11.0 2.13.0 2.23.0",
    "CONCATENATION": "1.5.0 1.14.0 2.3.0 2.14.0 2.21.0", "RESHAPE": "1.5.0",
    "SOFTMAX": "1.5.0 1.14.0 2.3.0", "LOGISTIC": "1.14.0 1.14.0 2.3.0", "TANH": "1.14.0 1.14.0 2.3.0",
    "RELU": "1.5.0 2.1.0 2.5.0", "RELU6": "1.5.0 1.14.0 2.5.0",
    "RESIZE_BILINEAR": "1.7.0 1.14.0 2.2.0 2.5.0", "RESIZE_NEAREST_NEIGHBOR": "1.13.1 1.14.0 2.3.0 2.4.0",
    "PAD": "1.5.0 1.14.0 2.4.0 2.6.0 2.20.0", "MEAN": "1.6.0 1.14.0 2.4.0",
    "QUANTIZE": "1.14.0 1.15.0 2.7.0 2.21.0 2.21.0 2.21.0",
    "DEQUANTIZE": "1.13.1 1.14.0 1.15.0 2.2.0 2.7.0 2.18.0 2.21.0 2.22.0",
    "TRANSPOSE": "1.6.0 1.14.0 1.15.0 2.3.0 2.4.0 2.12.0 2.14.4 2.22.0",
    "TRANSPOSE_CONV": "1.9.0 2.2.0 2.3.0 2.13.0 2.15.0",
    "STRIDED_SLICE": "1.6.0 1.14.0 2.1.0 2.2.0 2.5.0 2.6.0 2.14.0 2.14.0",
    "SPLIT": "1.5.0 1.14.0 1.14.0 2.3.0", "PACK": "1.11.0 1.14.0 2.3.0 2.13.0", "HARD_SWISH": "1.15.0",
    "LEAKY_RELU": "1.13.1 2.3.0", "PRELU": "1.8.0", "SQUEEZE": "1.6.0 2.5.0",
    "GATHER": "1.6.0 1.14.0 1.15.0 2.4.0 2.5.0 2.13.0 2.15.0", "BATCH_MATMUL": "2.3.0 2.3.0 2.4.0 2.5.0",
    "MAXIMUM": "1.14.0 1.14.0 2.3.0 2.3.0", "MINIMUM": "1.14.0 1.14.0 2.3.0 2.3.0",
    "L2_NORMALIZATION": "1.5.0 1.14.0", "SPACE_TO_DEPTH": "1.5.0 1.14.0", "DEPTH_TO_SPACE": "2.1.0 2.5.0",
    "FULLY_CONNECTED": "1.5.0 1.10.0 1.14.0 1.14.0 2.0.0 2.1.0 2.3.0 2.3.0 2.3.0 2.11.0 2.15.0 2.17.0 "
                       "2.18.0 2.21.0",
}


# float16 versions LiteRT's newer runtime_version.cc (@119ae633) adds after the @03f49db5 figures
LITERT_NEWER = {"CONCATENATION": ["2.23.0"], "SOFTMAX": ["2.23.0"], "TRANSPOSE": ["2.23.0"]}


@pytest.mark.parametrize("op", sorted(RUNTIME_STRINGS))
def test_table_matches_tflite_facts(op):
    expected = RUNTIME_STRINGS[op].split() + LITERT_NEWER.get(op, [])
    got = [RUNTIME_TABLE[(B[op], v)] for v in range(1, len(expected) + 1)]
    assert got == expected
    assert (B[op], len(expected) + 1) not in RUNTIME_TABLE


def test_table_size_and_odd_entries():
    assert len(RUNTIME_TABLE) == 426      # 420 from TensorFlow @03f49db5 + 6 float16 rows from LiteRT
    assert len({op for op, _ in RUNTIME_TABLE}) == 173
    assert runtime_for(B.TRANSPOSE, 7) == "2.14.4" and runtime_for(B.TRANSPOSE, 9) == "2.23.0"
    assert runtime_for(B.SIN, 2) == runtime_for(B.COS, 2) == runtime_for(B.SOFTMAX, 4) == "2.23.0"
    assert runtime_for(B.LOGISTIC, 1) == "1.14.0"
    assert runtime_for(B.DEQUANTIZE, 4) == "2.2.0" and runtime_for(B.QUANTIZE, 6) == "2.21.0"
    assert runtime_for(B.BROADCAST_TO, 1) is None and runtime_for(B.BROADCAST_TO, 2) == "2.5.0"
    assert runtime_for(B.WHERE, 2) == "2.8.0" and runtime_for(B.STABLEHLO_CASE, 1) == "2.17.0"
    assert runtime_for(B.CONV_2D, 9) is None and runtime_for(B.CUSTOM, 1) is None
    assert runtime_for(B.DELEGATE, 1) is None and runtime_for(9999, 1) is None


def test_every_version_a_rule_can_produce_has_a_release_but_two():
    missing = []
    for op, rows in RULES.items():
        for v in sorted({1, *(r.version for r in rows)} - ({1} if op == B.BROADCAST_TO else set())):
            if (op, v) not in RUNTIME_TABLE:
                missing.append((op.name, v))
    # upstream gap: op_version.cc computes v5 (16x8) for these, runtime_version.cc stops at v4,
    # so min_runtime silently skips them (trap "version-not-in-runtime-table")
    assert missing == [("LSTM", 5), ("UNIDIRECTIONAL_SEQUENCE_LSTM", 5)]


# ---------------------------------------------------------------------------------------------
# Tiny models
# ---------------------------------------------------------------------------------------------
def _dilated_depthwise(version=1, meta=None):
    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 3])
    w = b.constant("w", np.ones((1, 3, 3, 3), np.float32))
    y = b.tensor("y", [1, 8, 8, 3])
    b.op(B.DEPTHWISE_CONV_2D, [x, w, -1], [y],
         DW(stride_w=1, stride_h=1, dilation_w_factor=2, dilation_h_factor=2), version=version)
    b.output(y)
    if meta is not None:
        b.add_metadata("min_runtime_version", meta)
    return load(dump(b.build()))


def _binary(op, dtype, version):
    b = ModelBuilder()
    x = b.input("x", [4], dtype)
    y = b.input("y", [4], dtype)
    z = b.tensor("z", [4], dtype)
    b.op(op, [x, y], [z], version=version)
    b.output(z)
    return load(dump(b.build()))


def test_min_runtime_uses_stored_versions():
    m = _dilated_depthwise(version=1)
    mr = min_runtime(m)
    assert mr.version == "1.5.0" and not mr.computed
    assert [(e.op, e.version, e.subgraph, e.op_index) for e in mr.drivers] == [("DEPTHWISE_CONV_2D", 1, 0, 0)]


def test_min_runtime_computed_uses_todays_rules():
    mr = min_runtime(_dilated_depthwise(version=1), computed=True)
    assert mr.version == "1.12.0" and mr.computed
    assert mr.drivers[0].version == 2
    assert "driven by DEPTHWISE_CONV_2D v2" in repr(mr)


def test_min_runtime_skips_pairs_not_in_table():
    b = ModelBuilder()
    x = b.input("x", [4])
    y = b.tensor("y", [4])
    z = b.tensor("z", [4])
    b.op(None, [x], [y], custom_code="MyOp", version=1, custom_options=b"")
    b.op(B.RELU, [y], [z], version=9)  # RELU v9 is not in the table
    b.output(z)
    mr = min_runtime(load(dump(b.build())))
    assert mr.version == "" and mr.drivers == ()
    assert {(e.op, e.version) for e in mr.skipped} == {("MyOp", 1), ("RELU", 9)}


def test_min_runtime_keeps_the_highest():
    b = ModelBuilder()
    x = b.input("x", [1, 4], np.int8)
    y = b.tensor("y", [1, 4], np.int8)
    z = b.tensor("z", [1, 4], np.int8)
    b.op(B.SOFTMAX, [x], [y], CLASSES["SoftmaxOptions"](beta=1.0), version=2)  # 1.14.0
    b.op(B.LEAKY_RELU, [y], [z], CLASSES["LeakyReluOptions"](alpha=0.1), version=2)  # 2.3.0
    b.output(z)
    mr = min_runtime(load(dump(b.build())))
    assert mr.version == "2.3.0" and [e.op for e in mr.drivers] == ["LEAKY_RELU"]


# ---------------------------------------------------------------------------------------------
# The min_runtime_version metadata
# ---------------------------------------------------------------------------------------------
def test_metadata_write_dump_load_read_round_trip():
    m = _dilated_depthwise()
    assert read_min_runtime_metadata(m) is None
    m2 = load(dump(write_min_runtime_metadata(m, "2.3.0")))
    assert read_min_runtime_metadata(m2) == "2.3.0"
    raw = metadata(m2)["min_runtime_version"]
    assert raw == b"2.3.0" + b"\0" * 11 and len(raw) == METADATA_SIZE
    assert [x.name for x in m2.metadata] == ["min_runtime_version"]


def test_metadata_update_in_place_keeps_one_entry_and_its_buffer():
    m = load(dump(write_min_runtime_metadata(_dilated_depthwise(), "2.14.4")))
    index = m.metadata[0].buffer
    nbuf = len(m.buffers)
    m2 = load(dump(write_min_runtime_metadata(m, "1.5.0")))
    assert len(m2.metadata) == 1 and m2.metadata[0].buffer == index and len(m2.buffers) == nbuf
    assert metadata(m2)["min_runtime_version"] == b"1.5.0" + b"\0" * 11  # old bytes zeroed


def test_metadata_updates_the_converters_all_zero_entry():
    m = _dilated_depthwise(meta=bytes(16))  # what the MLIR exporter creates
    assert read_min_runtime_metadata(m) == ""
    m2 = load(dump(write_min_runtime_metadata(m)))  # default: min_runtime(model)
    assert read_min_runtime_metadata(m2) == "1.5.0" and len(m2.metadata) == 1


def test_metadata_of_16_bytes_or_more_is_refused():
    m = _dilated_depthwise()
    write_min_runtime_metadata(m, "1" * 15)  # 15 characters + NUL fit
    with pytest.raises(VersionError, match="at most 15 characters"):
        write_min_runtime_metadata(m, "1.2.3.4.5.6.7.8.")


def test_metadata_write_does_not_change_the_input():
    m = _dilated_depthwise()
    write_min_runtime_metadata(m, "2.3.0")
    assert m.metadata is None


# ---------------------------------------------------------------------------------------------
# Profiles and findings
# ---------------------------------------------------------------------------------------------
def test_profile_for_release_derives_from_the_table():
    p = RuntimeProfile.for_release("2.3.0")
    assert (B.CONV_2D, 4) in p and (B.CONV_2D, 5) not in p
    assert p.versions(B.MUL) == (1, 2, 3, 4)
    assert p.kernel_range(B.DEPTHWISE_CONV_2D) == (1, 6)
    assert p.supports(B.CUMSUM, 1) is False and p.supports(B.DELEGATE, 1) is None
    assert p.max_builtin_code == int(B.BATCH_MATMUL)
    assert len(p) == sum(1 for r in RUNTIME_TABLE.values() if not compare_runtime_version("2.3.0", r))
    assert RuntimeProfile.for_release("1.5.0").versions(B.CONV_2D) == (1,)


def test_registered_kernel_profile():
    p = RuntimeProfile.registered_kernels()
    assert p.versions(B.ADD) == (1, 2, 3, 4, 5) and (B.ADD, 6) not in p
    assert p.kernel_range(B.FULLY_CONNECTED) == (1, 13)
    assert p.supports(B.CUMSUM, 1) is None  # not known for this snapshot
    assert set(REGISTERED) >= {B.CONV_2D, B.MUL, B.DEQUANTIZE}


def test_check_reports_the_runtime_error_text():
    m = _binary(B.MUL, np.int64, version=5)
    findings = check(m, runtime="2.3.0")
    assert len(findings) == 1
    f = findings[0]
    assert f.kind == "op-version" and (f.subgraph, f.op_index, f.op, f.version) == (0, 0, "MUL", 5)
    assert f.message == ("Didn't find op for builtin opcode 'MUL' version '5'. An older version of this builtin "
                         "might be supported. Are you using an old TFLite binary with a newer model?")
    assert f.reason.startswith("v5: in0=INT64") and "first ran in TFLite 2.6.0" in f.reason
    assert f.computed == 5
    assert check(m, runtime="2.6.0") == []


def test_check_with_profile_object_and_registered_kernels():
    m = _binary(B.ADD, np.float16, version=6)
    assert [f.version for f in check(m, RuntimeProfile.for_release("2.22.0"))] == [6]
    assert check(m, RuntimeProfile.for_release("2.23.0")) == []
    f = check(m, RuntimeProfile.registered_kernels())[0]
    assert f.kind == "op-version" and "registers versions (1, 5)" in f.reason


def test_check_flags_metadata_above_release():
    m = _dilated_depthwise(version=2, meta=b"2.15.0".ljust(16, b"\0"))
    kinds = [f.kind for f in check(m, "2.3.0")]
    assert kinds == ["min-runtime-metadata"]
    assert "2.15.0" in check(m, "2.3.0")[0].message
    assert check(m, "2.15.0") == []


def test_check_flags_builtin_code_beyond_the_release():
    b = ModelBuilder()
    x = b.input("x", [4])
    axis = b.constant("axis", np.array(0, np.int32))
    y = b.tensor("y", [4])
    b.op(B.CUMSUM, [x, axis], [y], CLASSES["CumsumOptions"]())
    b.output(y)
    f = check(load(dump(b.build())), "2.3.0")
    assert [x.kind for x in f] == ["builtin-code"]
    assert f[0].message == "Op builtin_code out of range: 128. Are you using old TFLite binary with newer model?"
    assert f[0].message == code_out_of_range_text(128)


def test_check_reports_stored_and_computed_when_they_differ():
    m = _dilated_depthwise(version=3)  # stored 3, today's rules give 2
    f = check(m, "1.12.0")[0]
    assert (f.version, f.computed) == (3, 2) and "today's rules compute v2" in repr(f)


def test_check_delegate_names_the_reason():
    m = _dilated_depthwise(version=2)
    f = check_delegate(m, {B.CONV_2D: 1, B.DEPTHWISE_CONV_2D: 1})
    assert [x.message for x in f] == ["DEPTHWISE_CONV_2D v2 > max version 1 (dilation_w_factor=2 ≠ 1)"]
    assert check_delegate(m, {B.DEPTHWISE_CONV_2D: 2}) == []
    assert check_delegate(m, {B.CONV_2D: 1}) == []
    assert [x.kind for x in check_delegate(m, {B.CONV_2D: 1}, report_unsupported=True)] == ["delegate-op"]


def test_check_delegate_when_stored_differs_from_computed():
    m = _dilated_depthwise(version=3)
    f = check_delegate(m, {B.DEPTHWISE_CONV_2D: 2})[0]
    assert f.message == ("DEPTHWISE_CONV_2D v3 > max version 2 (stored v3; today's rules give "
                         "v2: dilation_w_factor=2 ≠ 1)")


def test_error_text_matches_litert():
    interp = pytest.importorskip("ai_edge_litert.interpreter")
    m = _binary(B.MUL, np.float32, version=99)
    with pytest.raises(Exception) as info:
        interp.Interpreter(model_content=dump(m))
    assert op_not_found_text("MUL", 99) in str(info.value)


def test_one_look_each_gives_the_findings_check_gives_alone(corpus_paths):
    """Inside one_look_each check() reuses each operator's version and type verdict across releases;
    the findings are the ones it gives without, for stored and updated models alike."""
    from workbench.versioning import check, one_look_each, update_versions

    models = [load(corpus_paths[n].read_bytes()) for n in ("aitoolkit_object_detector", "microwakeword_alexa",
                                                           "mltk_keyword_spotting_on_off_v3")]
    models += [update_versions(m) for m in models]
    releases = ("1.5.0", "1.14.0", "2.3.0", "2.13.0")
    alone = [check(m, r) for m in models for r in releases]
    with one_look_each():
        together = [check(m, r) for m in models for r in releases]
    assert together == alone and any(alone)
