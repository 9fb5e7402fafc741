"""The dilation walkthrough (workbench.versioning.walkthrough) and the one-operator model builder.

The facts are checked three ways: against the declarations of the real schema, against
ai-edge-litert (the version-2 file really runs, with dilation, and TFLite's own refusal text
matches the workbench's), and against TensorFlow's converter, whose output for the same layer is
kept below (base64) together with the script that made it.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from helpers import litert_runner
from workbench.errors import LossyWriteError
from workbench.schema import TABLES, dump, load, metadata
from workbench.schema import BuiltinOperator as B
from workbench.schema.declare import declaration
from workbench.versioning import (
    RULES,
    check,
    check_delegate,
    min_runtime,
    op_version,
    read_min_runtime_metadata,
    runtime_for,
)
from workbench.versioning import walkthrough as wt

DW_ERROR = ("Didn't find op for builtin opcode 'DEPTHWISE_CONV_2D' version '2'. An older version of this builtin "
            "might be supported. Are you using an old TFLite binary with a newer model?")


def depthwise(model):
    return model.subgraphs[0].operators[0]


# ---------------------------------------------------------------------------------------------
# The two declarations
# ---------------------------------------------------------------------------------------------
def test_version_2_declaration_is_the_real_schema_field_for_field():
    real, v2 = TABLES["DepthwiseConv2DOptions"], declaration(wt.DEPTHWISE_V2)
    assert [(f.id, f.name, repr(f.type), f.resolved_default()) for f in v2.fields] == \
           [(f.id, f.name, repr(f.type), f.resolved_default()) for f in real.fields]


def test_version_1_declaration_is_the_real_schema_without_the_dilation_fields():
    real, v1 = TABLES["DepthwiseConv2DOptions"], declaration(wt.DEPTHWISE_V1)
    older = [f for f in real.fields if (f.since or 1) <= 1]
    assert [(f.id, f.name, repr(f.type)) for f in v1.fields] == [(f.id, f.name, repr(f.type)) for f in older]
    assert {f.name for f in real.fields} - {f.name for f in v1.fields} == {"dilation_w_factor", "dilation_h_factor"}


def test_declarations_view_marks_the_two_new_slots():
    diff = wt.declarations()
    new = [(slot, name, default) for slot, name, in1, in2, default, since in diff.rows if in2 and not in1]
    assert new == [(5, "dilation_w_factor", 1), (6, "dilation_h_factor", 1)]
    assert "dilation_h_factor" in repr(diff) and "v2" in repr(diff)
    assert "<table>" in diff._repr_html_()


# ---------------------------------------------------------------------------------------------
# The depthwise model
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dilation, version, runtime", [(1, 1, "1.5.0"), (2, 2, "1.12.0"), (3, 2, "1.12.0")])
def test_build_depthwise_is_stamped_like_the_converter(dilation, version, runtime):
    model = load(wt.build_depthwise(dilation))
    assert model.operator_codes[0].version == version
    assert op_version(model, 0, 0).number == version
    assert read_min_runtime_metadata(model) == runtime
    assert metadata(model)["min_runtime_version"] == runtime.encode().ljust(16, b"\0")  # 16 zero-padded bytes
    opts = depthwise(model).builtin_options
    assert (opts.dilation_w_factor, opts.dilation_h_factor) == (dilation, dilation)
    assert len(depthwise(model).inputs) == 3 and depthwise(model).inputs[2] >= 0  # with a bias


def test_build_depthwise_without_stamp_keeps_version_1():
    model = load(wt.build_depthwise(2, stamp=False))
    assert model.operator_codes[0].version == 1 and model.metadata is None
    assert op_version(model, 0, 0).number == 2  # what the converter would have stored


def test_version_1_writer_cannot_write_dilation():
    with pytest.raises(ValueError, match="no dilation fields"):
        wt.build_depthwise(2, writer=1)


def test_version_1_writer_stores_no_dilation_slots():
    data = wt.build_depthwise(1, writer=1)
    opts = depthwise(load(data)).builtin_options
    assert len(opts.origin.slot_offsets) <= 5  # the writer knew 5 fields
    assert not opts.present("dilation_w_factor") and not opts.present("dilation_h_factor")


# ---------------------------------------------------------------------------------------------
# (a) forward compatibility
# ---------------------------------------------------------------------------------------------
def test_version_1_reader_ignores_the_dilation_fields_and_notes_their_slots():
    data = wt.build_depthwise(2)
    old = wt.read_as(data, 1)
    opts = depthwise(old).builtin_options
    assert not hasattr(opts, "dilation_w_factor")
    assert (opts.stride_w, opts.stride_h, opts.depth_multiplier) == (1, 1, 1)
    notes = {n.offset: n.message for n in old.load_notes}
    assert len(notes) == 2
    assert sorted("slot 5" in m or "slot 6" in m for m in notes.values()) == [True, True]
    for offset in notes:  # each note points at a stored int32 2: the dilation the reader skipped
        assert struct.unpack_from("<i", data, offset)[0] == 2


def test_forward_compatibility_result():
    fc = wt.forward_compatibility()
    assert fc.dilation == 2 and fc.file_version == 2
    assert [u.slot for u in sorted(fc.unknown, key=lambda u: u.slot)] == [5, 6]
    assert {u.newer_name for u in fc.unknown} == {"dilation_w_factor", "dilation_h_factor"}
    assert all(u.as_int32 == 2 and u.raw == b"\x02\0\0\0" for u in fc.unknown)
    assert {n.offset for n in fc.notes} == {u.offset for u in fc.unknown}
    assert "drop_unknown" in fc.rewrite_error  # dump refuses to lose data silently
    # an old tool that drops the unknown fields: the dilation is gone, the version stays
    assert (fc.rewritten_dilation, fc.rewritten_stored, fc.rewritten_computed) == (1, 2, 1)
    text = repr(fc)
    assert "slot 5" in text and "dilation_w_factor = 2" in text
    assert "dilation_w_factor" in fc._repr_html_()


def test_writing_an_old_readers_model_back_refuses_to_lose_dilation():
    old = wt.read_as(wt.build_depthwise(2), 1)
    with pytest.raises(LossyWriteError):
        dump(old)


# ---------------------------------------------------------------------------------------------
# (b) backward compatibility
# ---------------------------------------------------------------------------------------------
def test_version_2_reader_gives_a_version_1_file_dilation_1_defaulted():
    bc = wt.backward_compatibility()
    assert bc.dilation == (1, 1)
    assert bc.dilation_xray.present is False and bc.dilation_xray.default == 1
    assert bc.dilation_xray.slot == 5 and bc.dilation_xray.since == 2
    assert bc.vtable_slots <= 5
    assert bc.version.number == 1
    assert "absent" in repr(bc) and "default 1" in repr(bc)


# ---------------------------------------------------------------------------------------------
# (c) the version bump
# ---------------------------------------------------------------------------------------------
def test_depthwise_dilation_2_needs_version_2_and_runtime_1_12_0():
    vb = wt.version_bump()
    assert (vb.before.number, vb.after.number) == (1, 2)
    assert vb.after.reason == "v2: dilation_w_factor=2 ≠ 1"
    assert (vb.runtime_before.version, vb.runtime_after.version, vb.metadata) == ("1.5.0", "1.12.0", "1.12.0")
    assert runtime_for(B.DEPTHWISE_CONV_2D, 2) == "1.12.0"
    kinds = {f.kind: f.message for f in vb.old_findings}
    assert kinds["op-version"] == DW_ERROR  # TFLite's exact text
    assert "1.12.0" in kinds["min-runtime-metadata"]
    assert vb.new_findings == ()
    [d] = vb.delegate_findings
    assert d.kind == "delegate-version" and d.message.startswith("DEPTHWISE_CONV_2D v2 > max version 1")
    assert "dilation_w_factor=2" in d.message
    assert DW_ERROR in repr(vb) and "1.12.0" in vb._repr_html_()


def test_release_1_12_0_is_the_first_to_run_dilation():
    model = load(wt.build_depthwise(2))
    assert [f.kind for f in check(model, "1.11.0")] == ["min-runtime-metadata", "op-version"]
    assert check(model, "1.12.0") == []
    assert check_delegate(model, {B.DEPTHWISE_CONV_2D: 2}) == []


# ---------------------------------------------------------------------------------------------
# LiteRT: the version-2 file runs, with dilation; refusals read like TFLite's
# ---------------------------------------------------------------------------------------------
def depthwise_reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray, d: int) -> np.ndarray:
    """Naive float depthwise convolution, 3x3, stride 1, SAME padding, dilation d (NHWC)."""
    _, h, wd, c = x.shape
    out = np.zeros_like(x, dtype=np.float64)
    for y in range(h):
        for xx in range(wd):
            for ch in range(c):
                acc = float(bias[ch])
                for i in range(3):
                    for j in range(3):
                        yy, xj = y + (i - 1) * d, xx + (j - 1) * d
                        if 0 <= yy < h and 0 <= xj < wd:
                            acc += float(x[0, yy, xj, ch]) * float(w[0, i, j, ch])
                out[0, y, xx, ch] = acc
    return out.astype(np.float32)


@pytest.fixture(scope="module")
def litert_outputs(tmp_path_factory):
    """Run our dilation-1/2 files and the converter's on the same seeded input in ai-edge-litert."""
    pytest.importorskip("ai_edge_litert.interpreter")
    d = tmp_path_factory.mktemp("walkthrough")
    inputs = d / "inputs.npz"
    out = {}
    for dilation in (1, 2):
        for who, data in (("ours", wt.build_depthwise(dilation)), ("converter", CONVERTER[dilation])):
            path = d / f"{who}_{dilation}.tflite"
            path.write_bytes(data)
            first = not inputs.exists()
            r = litert_runner.run(path, inputs, d / f"{who}_{dilation}.npz", seed=7 if first else None)
            assert r.ok, r.describe()
            out[(who, dilation)] = r.outputs["output_0"]
    with np.load(inputs) as z:
        out["input"] = z["input_0"]
    return out


def test_version_2_file_runs_in_litert_with_dilation(litert_outputs):
    x = litert_outputs["input"]
    w, bias = wt.default_filter(), np.array(wt.DEFAULT_BIAS, np.float32)
    for d in (1, 2):
        np.testing.assert_allclose(litert_outputs[("ours", d)], depthwise_reference(x, w, bias, d),
                                   rtol=1e-5, atol=1e-5)
    assert not np.allclose(litert_outputs[("ours", 1)], litert_outputs[("ours", 2)])  # dilation is honoured


def test_our_files_compute_what_the_converters_files_compute(litert_outputs):
    for d in (1, 2):
        np.testing.assert_array_equal(litert_outputs[("ours", d)], litert_outputs[("converter", d)])


def test_litert_refuses_an_unregistered_version_with_the_text_check_reports(tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter")
    model = load(wt.build_depthwise(2))
    code = model.operator_codes[0]
    bumped = dataclasses.replace(model, operator_codes=(dataclasses.replace(code, version=99),))
    path = tmp_path / "v99.tflite"
    path.write_bytes(dump(bumped))
    r = litert_runner.run(path, tmp_path / "in.npz", tmp_path / "out.npz", seed=1)
    assert not r.ok
    [finding] = [f for f in check(load(path), "2.23.0") if f.kind == "op-version"]
    assert finding.message in r.stderr
    assert finding.message == DW_ERROR.replace("'2'", "'99'")


def test_litert_does_not_read_the_min_runtime_metadata(tmp_path):
    """The metadata is advisory: the interpreter refuses per (op, version), never because of it."""
    pytest.importorskip("ai_edge_litert.interpreter")
    from workbench.versioning import write_min_runtime_metadata

    path = tmp_path / "m.tflite"
    path.write_bytes(dump(write_min_runtime_metadata(load(wt.build_depthwise(2)), "99.0.0")))
    assert read_min_runtime_metadata(load(path)) == "99.0.0"
    r = litert_runner.run(path, tmp_path / "in.npz", tmp_path / "out.npz", seed=1)
    assert r.ok, r.describe()


# ---------------------------------------------------------------------------------------------
# TensorFlow's converter: the same layer, converted by TF 2.21.0
# ---------------------------------------------------------------------------------------------
CONVERTER_SCRIPT = '''
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

for dilation in (1, 2):
    inp = tf.keras.Input((8, 8, 2), batch_size=1)
    layer = tf.keras.layers.DepthwiseConv2D(3, padding="same", dilation_rate=dilation)
    model = tf.keras.Model(inp, layer(inp))
    kernel = (np.arange(18, dtype=np.float32).reshape(3, 3, 2, 1) - 8.0) / 8.0
    layer.set_weights([kernel, np.array([0.25, -0.25], np.float32)])
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    open(os.path.join(sys.argv[1], f"depthwise_dilation{dilation}.tflite"), "wb").write(data)
'''

# The two files CONVERTER_SCRIPT wrote with tensorflow 2.21.0 (keras 3.15.1), base64.
CONVERTER_DILATION_1 = (
    "HAAAAFRGTDMUACAAHAAYABQAEAAMAAAACAAEABQAAAAcAAAAmAAAAPAAAAAQAgAAIAIAAKAEAAADAAAAAQAAABAAAAAAAAoA"
    "EAAMAAgABAAKAAAADAAAABwAAAA8AAAADwAAAHNlcnZpbmdfZGVmYXVsdAABAAAABAAAAJD///8DAAAABAAAAAgAAABvdXRw"
    "dXRfMAAAAAABAAAABAAAAMb+//8EAAAADAAAAGtlcmFzX3RlbnNvcgAAAAACAAAANAAAAAQAAADc////BgAAAAQAAAATAAAA"
    "Q09OVkVSU0lPTl9NRVRBREFUQQAIAAwACAAEAAgAAAAFAAAABAAAABMAAABtaW5fcnVudGltZV92ZXJzaW9uAAcAAAAcAQAA"
    "FAEAALwAAACcAAAAlAAAAHQAAAAEAAAAXv///wQAAABgAAAAEAAAAAAAAAAIAA4ACAAEAAgAAAAQAAAAJAAAAAAABgAIAAQA"
    "BgAAAAQAAAAAAAAADAAYABQAEAAMAAQADAAAAM+NnWcRuzwmAgAAAAIAAAAEAAAABgAAADIuMjEuMAAAyv///wQAAAAQAAAA"
    "MS41LjAAAAAAAAAAAAAAACz9///q////BAAAAAgAAAAAAIA+AACAvgAABgAIAAQABgAAAAQAAABIAAAAAACAvwAAYL8AAEC/"
    "AAAgvwAAAL8AAMC+AACAvgAAAL4AAAAAAAAAPgAAgD4AAMA+AAAAPwAAID8AAEA/AABgPwAAgD8AAJA/oP3//6T9//8PAAAA"
    "TUxJUiBDb252ZXJ0ZWQuAAEAAAAUAAAAAAAOABgAFAAQAAwACAAEAA4AAAAUAAAAHAAAAHgAAAB8AAAAgAAAAAQAAABtYWlu"
    "AAAAAAEAAAAUAAAAAAAOABQAAAAQAAwACwAEAA4AAAAcAAAAAAAAAiQAAAAoAAAADAAQAAAADAAIAAQADAAAAAEAAAABAAAA"
    "AQAAAAEAAAADAAAAAwAAAAAAAAABAAAAAgAAAAEAAAADAAAAAQAAAAAAAAAEAAAAfAEAAAABAABYAAAABAAAAKr+//8AAAAB"
    "EAAAABAAAAAEAAAAKAAAAJT+//8bAAAAU3RhdGVmdWxQYXJ0aXRpb25lZENhbGxfMTowAAQAAAABAAAACAAAAAgAAAACAAAA"
    "+v7//wAAAAEQAAAAEAAAAAMAAACIAAAA5P7//3kAAABmdW5jdGlvbmFsXzEvZGVwdGh3aXNlX2NvbnYyZF8xL0JpYXNBZGQ7"
    "ZnVuY3Rpb25hbF8xL2RlcHRod2lzZV9jb252MmRfMS9kZXB0aHdpc2U7ZnVuY3Rpb25hbF8xL2RlcHRod2lzZV9jb252MmRf"
    "MS9TcXVlZXplAAAAAQAAAAIAAACe////AAAAARAAAAAQAAAAAgAAADgAAACI////KQAAAGZ1bmN0aW9uYWxfMS9kZXB0aHdp"
    "c2VfY29udjJkXzEvZGVwdGh3aXNlAAAABAAAAAEAAAADAAAAAwAAAAIAAAAAABYAGAAUAAAAEAAMAAgAAAAAAAAABwAWAAAA"
    "AAAAARQAAAAUAAAAAQAAADAAAAAEAAQABAAAAB4AAABzZXJ2aW5nX2RlZmF1bHRfa2VyYXNfdGVuc29yOjAAAAQAAAABAAAA"
    "CAAAAAgAAAACAAAAAQAAABAAAAAMAAwACwAAAAAABAAMAAAABAAAAAAAAAQ="
)
CONVERTER_DILATION_2 = (
    "HAAAAFRGTDMUACAAHAAYABQAEAAMAAAACAAEABQAAAAcAAAAmAAAAPAAAAAQAgAAIAIAAMQEAAADAAAAAQAAABAAAAAAAAoA"
    "EAAMAAgABAAKAAAADAAAABwAAAA8AAAADwAAAHNlcnZpbmdfZGVmYXVsdAABAAAABAAAAJD///8DAAAABAAAAAgAAABvdXRw"
    "dXRfMAAAAAABAAAABAAAAMb+//8EAAAADgAAAGtlcmFzX3RlbnNvcl8yAAACAAAANAAAAAQAAADc////BgAAAAQAAAATAAAA"
    "Q09OVkVSU0lPTl9NRVRBREFUQQAIAAwACAAEAAgAAAAFAAAABAAAABMAAABtaW5fcnVudGltZV92ZXJzaW9uAAcAAAAcAQAA"
    "FAEAALwAAACcAAAAlAAAAHQAAAAEAAAAXv///wQAAABgAAAAEAAAAAAAAAAIAA4ACAAEAAgAAAAQAAAAJAAAAAAABgAIAAQA"
    "BgAAAAQAAAAAAAAADAAYABQAEAAMAAQADAAAAM+NnWcRuzwmAgAAAAIAAAAEAAAABgAAADIuMjEuMAAAyv///wQAAAAQAAAA"
    "MS4xMi4wAAAAAAAAAAAAAAz9///q////BAAAAAgAAAAAAIA+AACAvgAABgAIAAQABgAAAAQAAABIAAAAAACAvwAAYL8AAEC/"
    "AAAgvwAAAL8AAMC+AACAvgAAAL4AAAAAAAAAPgAAgD4AAMA+AAAAPwAAID8AAEA/AABgPwAAgD8AAJA/gP3//4T9//8PAAAA"
    "TUxJUiBDb252ZXJ0ZWQuAAEAAAAUAAAAAAAOABgAFAAQAAwACAAEAA4AAAAUAAAAHAAAAIgAAACMAAAAkAAAAAQAAABtYWlu"
    "AAAAAAEAAAAUAAAAAAAOABYAAAAQAAwACwAEAA4AAAAkAAAAAAAAAjQAAAA4AAAAAAASABgAAAAUABAADAAAAAgABAASAAAA"
    "AgAAAAIAAAABAAAAAQAAAAEAAAABAAAAAwAAAAMAAAAAAAAAAQAAAAIAAAABAAAAAwAAAAEAAAAAAAAABAAAAIwBAAAMAQAA"
    "WAAAAAQAAACa/v//AAAAARAAAAAQAAAABAAAACgAAACE/v//GwAAAFN0YXRlZnVsUGFydGl0aW9uZWRDYWxsXzE6MAAEAAAA"
    "AQAAAAgAAAAIAAAAAgAAAOr+//8AAAABEAAAABAAAAADAAAAlAAAANT+//+FAAAAZnVuY3Rpb25hbF8xXzEvZGVwdGh3aXNl"
    "X2NvbnYyZF8xXzEvQmlhc0FkZDtmdW5jdGlvbmFsXzFfMS9kZXB0aHdpc2VfY29udjJkXzFfMS9kZXB0aHdpc2U7ZnVuY3Rp"
    "b25hbF8xXzEvZGVwdGh3aXNlX2NvbnYyZF8xXzEvU3F1ZWV6ZQAAAAEAAAACAAAAmv///wAAAAEQAAAAEAAAAAIAAAA8AAAA"
    "hP///y0AAABmdW5jdGlvbmFsXzFfMS9kZXB0aHdpc2VfY29udjJkXzFfMS9kZXB0aHdpc2UAAAAEAAAAAQAAAAMAAAADAAAA"
    "AgAAAAAAFgAYABQAAAAQAAwACAAAAAAAAAAHABYAAAAAAAABFAAAABQAAAABAAAANAAAAAQABAAEAAAAIAAAAHNlcnZpbmdf"
    "ZGVmYXVsdF9rZXJhc190ZW5zb3JfMjowAAAAAAQAAAABAAAACAAAAAgAAAACAAAAAQAAABAAAAAMABAADwAAAAgABAAMAAAA"
    "BAAAAAIAAAAAAAAE"
)
CONVERTER = {1: base64.b64decode("".join(CONVERTER_DILATION_1)), 2: base64.b64decode("".join(CONVERTER_DILATION_2))}


def _check_converter_file(data: bytes, dilation: int) -> None:
    theirs = load(data)
    ours = load(wt.build_depthwise(dilation))
    [code] = [c for c in theirs.operator_codes]
    assert code.builtin_code == B.DEPTHWISE_CONV_2D
    # the converter's stored version is what today's rules compute, for its file and for ours
    assert code.version == op_version(theirs, 0, 0).number == op_version(ours, 0, 0).number
    assert code.version == ours.operator_codes[0].version == (2 if dilation == 2 else 1)
    # and its minimum runtime metadata is ours
    assert read_min_runtime_metadata(theirs) == read_min_runtime_metadata(ours) == min_runtime(ours).version
    a, b = depthwise(theirs).builtin_options, depthwise(ours).builtin_options
    for name in ("padding", "stride_w", "stride_h", "depth_multiplier", "dilation_w_factor", "dilation_h_factor"):
        assert getattr(a, name) == getattr(b, name), name


@pytest.mark.parametrize("dilation", [1, 2])
def test_computed_version_equals_the_converters(dilation):
    _check_converter_file(CONVERTER[dilation], dilation)


TF_PYTHON = os.environ.get("WORKBENCH_TF_PYTHON")  # a python with tensorflow, to redo the conversion live


@pytest.mark.skipif(not TF_PYTHON, reason="set WORKBENCH_TF_PYTHON to a python with tensorflow to convert live")
def test_computed_version_equals_a_live_conversion(tmp_path):
    script = tmp_path / "convert.py"
    script.write_text(CONVERTER_SCRIPT)
    subprocess.run([TF_PYTHON, str(script), str(tmp_path)], check=True, capture_output=True, timeout=600)
    for dilation in (1, 2):
        _check_converter_file((tmp_path / f"depthwise_dilation{dilation}.tflite").read_bytes(), dilation)


# ---------------------------------------------------------------------------------------------
# One-operator models for the explorer
# ---------------------------------------------------------------------------------------------
F, I8, I16, U8 = "float32", "int8", "int16", "uint8"
INT8 = dict(input=I8, weights=I8, output=I8)
HYBRID = dict(input=F, weights=I8, output=F)

# (config, expected version): each row is a rule of op_version.cc GetBuiltinOperatorVersion (or one of its traps)
CASES = [
    (wt.OpConfig(B.CONV_2D), 1),
    (wt.OpConfig(B.CONV_2D, **INT8), 3),
    (wt.OpConfig(B.CONV_2D, **HYBRID), 2),
    (wt.OpConfig(B.CONV_2D, **HYBRID, quantization="per-channel"), 5),
    (wt.OpConfig(B.CONV_2D, dilation=2), 1),  # CONV_2D has no dilation rule
    (wt.OpConfig(B.DEPTHWISE_CONV_2D), 1),
    (wt.OpConfig(B.DEPTHWISE_CONV_2D, dilation=2), 2),
    (wt.OpConfig(B.DEPTHWISE_CONV_2D, **INT8), 3),
    (wt.OpConfig(B.DEPTHWISE_CONV_2D, **INT8, dilation=2), 3),  # trap: int8 dilation stays 3
    (wt.OpConfig(B.DEPTHWISE_CONV_2D, **HYBRID), 4),
    (wt.OpConfig(B.DEPTHWISE_CONV_2D, **HYBRID, quantization="per-channel"), 6),
    (wt.OpConfig(B.DEPTHWISE_CONV_2D, options_table=False), 2),  # trap: zero-filled params, dilation 0
    (wt.OpConfig(B.DEPTHWISE_CONV_2D, input=U8, weights=U8, output=U8, dilation=2), 2),
    (wt.OpConfig(B.FULLY_CONNECTED), 1),
    (wt.OpConfig(B.FULLY_CONNECTED, **INT8), 4),
    (wt.OpConfig(B.FULLY_CONNECTED, **INT8, bias="no slot"), 6),  # trap: no bias slot before int8
    (wt.OpConfig(B.FULLY_CONNECTED, **INT8, bias="omitted"), 4),
    (wt.OpConfig(B.FULLY_CONNECTED, keep_num_dims=True), 5),
    (wt.OpConfig(B.FULLY_CONNECTED, **HYBRID), 3),
    (wt.OpConfig(B.FULLY_CONNECTED, **HYBRID, quantization="per-channel"), 12),
    (wt.OpConfig(B.FULLY_CONNECTED, input=I16, weights=I16, output=I16), 7),
    (wt.OpConfig(B.ADD), 1),
    (wt.OpConfig(B.ADD, **INT8), 2),
    (wt.OpConfig(B.ADD, input=I16, weights=I16, output=I16, pot_scale_int16=False), 3),
    (wt.OpConfig(B.ADD, input=I16, weights=I16, output=I16, quantization="none"), 5),
    (wt.OpConfig(B.MUL), 1),
    (wt.OpConfig(B.MUL, **INT8), 2),
    (wt.OpConfig(B.MUL, input=I16, weights=I16, output=I16), 4),
    (wt.OpConfig(B.TRANSPOSE_CONV, bias="omitted"), 1),
    (wt.OpConfig(B.TRANSPOSE_CONV), 3),  # 4 inputs, bias present
    (wt.OpConfig(B.TRANSPOSE_CONV, weights=I8, bias="omitted"), 2),
    (wt.OpConfig(B.TRANSPOSE_CONV, activation="RELU"), 4),
    (wt.OpConfig(B.RESIZE_BILINEAR), 1),
    (wt.OpConfig(B.RESIZE_BILINEAR, align_corners=True), 1),  # trap: align_corners alone does not bump
    (wt.OpConfig(B.RESIZE_BILINEAR, half_pixel_centers=True), 3),
    (wt.OpConfig(B.RESIZE_BILINEAR, input=I8, output=I8), 2),
    (wt.OpConfig(B.RESIZE_NEAREST_NEIGHBOR, align_corners=True), 3),
    (wt.OpConfig(B.RESIZE_NEAREST_NEIGHBOR, input=I16, output=I16), 4),
]


@pytest.mark.parametrize("cfg, expected", CASES, ids=[c.describe() for c, _ in CASES])
def test_build_op_model_computes_the_version_of_the_rules(cfg, expected):
    model = wt.build_op_model(cfg)
    v = op_version(model, 0, 0)
    assert v.number == expected, v.explain()
    assert model.operator_codes[0].version == expected  # stamped like the converter
    assert read_min_runtime_metadata(model) == runtime_for(cfg.op, expected)


def test_explorer_cases_cover_every_explorer_op():
    assert {c.op for c, _ in CASES} == set(wt.EXPLORER_OPS)
    assert all(op in RULES for op in wt.EXPLORER_OPS)


def test_per_channel_weights_have_one_scale_per_output_channel():
    for op, axis, n in ((B.CONV_2D, 0, 4), (B.DEPTHWISE_CONV_2D, 3, 2), (B.FULLY_CONNECTED, 0, 4)):
        model = wt.build_op_model(wt.OpConfig(op, **INT8, quantization="per-channel"))
        sg = model.subgraphs[0]
        w = sg.tensors[sg.operators[0].inputs[1]]
        assert len(w.quantization.scale) == w.shape[axis] == n
        assert w.quantization.quantized_dimension == axis


def test_knobs_an_op_does_not_have_change_nothing():
    a = wt.build_op_model(wt.OpConfig(B.FULLY_CONNECTED, dilation=1))
    b = wt.build_op_model(wt.OpConfig(B.FULLY_CONNECTED, dilation=3, half_pixel_centers=True))
    assert dump(a) == dump(b)
    assert "dilation" not in wt.OpConfig(B.FULLY_CONNECTED).knobs()
    assert "keep_num_dims" in wt.OpConfig(B.FULLY_CONNECTED).knobs()


LITERT_CASES = [
    wt.OpConfig(B.CONV_2D, dilation=2, stride=2, activation="RELU6"),
    wt.OpConfig(B.DEPTHWISE_CONV_2D, dilation=2),
    wt.OpConfig(B.FULLY_CONNECTED, keep_num_dims=True),
    wt.OpConfig(B.FULLY_CONNECTED, **INT8, bias="omitted"),
    wt.OpConfig(B.ADD, activation="RELU"),
    wt.OpConfig(B.MUL, **INT8),
    wt.OpConfig(B.TRANSPOSE_CONV, stride=2),
    wt.OpConfig(B.RESIZE_BILINEAR, half_pixel_centers=True),
    wt.OpConfig(B.RESIZE_NEAREST_NEIGHBOR, align_corners=True),
]


@pytest.mark.parametrize("cfg", LITERT_CASES, ids=[c.describe() for c in LITERT_CASES])
def test_explorer_models_run_in_litert(cfg, tmp_path):
    pytest.importorskip("ai_edge_litert.interpreter")
    path = tmp_path / "m.tflite"
    path.write_bytes(dump(wt.build_op_model(cfg)))
    r = litert_runner.run(path, tmp_path / "in.npz", tmp_path / "out.npz", seed=0)
    assert r.ok, r.describe()
    sg = load(path).subgraphs[0]
    assert r.outputs["output_0"].shape == tuple(sg.tensors[sg.outputs[0]].shape)


# ---------------------------------------------------------------------------------------------
# The notebooks that use this module stay short and predict-then-reveal
# ---------------------------------------------------------------------------------------------
NOTEBOOKS = [Path(__file__).resolve().parents[2] / "notebooks" / n
             for n in ("02_op_versions.ipynb", "03_compatibility.ipynb")]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_code_cells_are_short_and_every_prediction_is_an_exercise(path):
    nb = json.loads(path.read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and max(len(src.splitlines()) for src in code) <= 8
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    assert not [t[:60] for t in markdown if "**Reveal" in t], "a reveal in plain markdown: put it behind an Exercise"
    assert sum(src.startswith("ask(") for src in code) >= 5     # asked from the bank (solutions/<nb>.md)
