"""VersionExplorer and RuntimeExplorer, driven from Python by setting widget values."""

from __future__ import annotations

import html
import re

import pytest

from workbench import viz
from workbench.schema import BuiltinOperator as B
from workbench.schema import load
from workbench.versioning import min_runtime
from workbench.versioning import walkthrough as wt
from workbench.viz.versions import compatibility_table, releases, version_diff
from workbench.viz.widgets.runtime_explorer import RuntimeExplorer, available_models
from workbench.viz.widgets.version_explorer import VersionExplorer

DW_ERROR = ("Didn't find op for builtin opcode 'DEPTHWISE_CONV_2D' version '2'. An older version of this builtin "
            "might be supported. Are you using an old TFLite binary with a newer model?")


def text(widget_html: str) -> str:
    """The visible text of an HTML widget value."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", widget_html)).split())


def version_shown(ex: VersionExplorer) -> int:
    return int(re.search(r"version (\d+)", text(ex.version_html.value)).group(1))


def min_runtime_shown(ex: VersionExplorer) -> str:
    return re.search(r"minimum runtime\s+(\S+)", text(ex.runtime_html.value)).group(1)


# ---------------------------------------------------------------------------------------------
# VersionExplorer
# ---------------------------------------------------------------------------------------------
def test_dilation_1_to_2_changes_version_1_to_2_and_min_runtime_1_5_to_1_12():
    ex = VersionExplorer(op="DEPTHWISE_CONV_2D")
    assert version_shown(ex) == 1 and min_runtime_shown(ex) == "1.5.0"
    assert "no rule applies" in text(ex.version_html.value)
    ex.dilation.value = 2
    assert version_shown(ex) == 2 and min_runtime_shown(ex) == "1.12.0"
    assert "v2: dilation_w_factor=2 ≠ 1" in text(ex.version_html.value)
    assert ex.version.number == 2 and ex.model.operator_codes[0].version == 2
    ex.dilation.value = 1
    assert version_shown(ex) == 1 and min_runtime_shown(ex) == "1.5.0"


def test_int8_depthwise_is_version_3_even_with_dilation():
    ex = VersionExplorer(op="DEPTHWISE_CONV_2D", dilation=2)
    ex.set(input="int8", weights="int8", output="int8")
    assert version_shown(ex) == 3 and min_runtime_shown(ex) == "1.14.0"
    shown = text(ex.version_html.value)
    assert "int8 op" in shown and "depthwise-dilation-int8" in shown  # the trap is named
    ex.input.value = "float32"  # float input, int8 weights, int8 output: no longer an int8 op
    assert version_shown(ex) == 2


def test_release_1_11_0_refuses_dilation_2_with_tflites_text():
    ex = VersionExplorer(op="DEPTHWISE_CONV_2D", release="1.11.0")
    assert "no findings" in text(ex.check_html.value)
    ex.dilation.value = 2
    shown = text(ex.check_html.value)
    assert "TFLite 1.11.0 refuses" in shown and DW_ERROR in shown
    ex.release.value = "1.12.0"
    assert "no findings" in text(ex.check_html.value) and ex.findings == []


def test_signatures_no_kernel_takes_cannot_run_on_any_release():
    """These fall through to v1, where the (op, version) lookup alone would say '✔ it runs'."""
    ex = VersionExplorer(op="CONV_2D", release="1.11.0")
    ex.set(input="uint8", weights="int8", output="int16")
    shown = text(ex.check_html.value)
    assert version_shown(ex) == 1 and "no findings" not in shown and "cannot run this model" in shown
    assert "no TFLite kernel takes the tensor types of CONV_2D (input UINT8, filter INT8, output INT16)" in shown
    assert [f.kind for f in ex.findings if f.op] == ["unsupported-types"]
    assert not ex.types.ok and "no TFLite kernel takes input UINT8" in text(ex.types_html.value)
    ex.release.value = "2.23.0"
    assert "cannot run this model" in text(ex.check_html.value)
    ex.set(op=B.DEPTHWISE_CONV_2D, input="int16", weights="int16", output="int16")
    assert "DEPTHWISE_CONV_2D (input INT16, filter INT16, output INT16)" in text(ex.check_html.value)
    ex.set(weights="int8")  # 16x8 depthwise: a kernel exists
    assert "no findings" in text(ex.check_html.value) and ex.types.ok and "16x8" in text(ex.types_html.value)
    ex.set(op=B.ADD, input="int16", weights="float32", output="int16")  # only the first operand set to int16
    assert "ADD (input1 INT16, input2 FLOAT32, output INT16)" in text(ex.check_html.value)
    ex.set(weights="int16")  # every operand int16, pot_scale_int16 or not: it runs
    assert "no findings" in text(ex.check_html.value)
    ex.set(pot_scale_int16=False)
    assert "no findings" in text(ex.check_html.value)


def test_rows_tried_stop_at_the_first_match():
    ex = VersionExplorer(op="FULLY_CONNECTED", input="int8", weights="int8", output="int8", bias="no slot")
    assert version_shown(ex) == 6
    tried = [f"v{r.version}" for r, _ in ex.version.tried]
    assert tried[0] == "v14" and tried[-1] == "v6" and "v4" not in tried
    shown = text(ex.version_html.value)
    rows = shown.split("rows tried")[1].split("traps:")[0]
    assert "exactly 2 inputs" in rows and "v4" not in re.findall(r"v\d+", rows)
    assert "fc-no-bias-before-int8" in shown
    ex.bias.value = "present"
    assert version_shown(ex) == 4


def test_half_pixel_centers_bumps_resize_bilinear_but_align_corners_does_not():
    ex = VersionExplorer(op="RESIZE_BILINEAR")
    ex.align_corners.value = True
    assert version_shown(ex) == 1
    ex.half_pixel_centers.value = True
    assert version_shown(ex) == 3 and min_runtime_shown(ex) == "2.2.0"
    ex.op.value = B.RESIZE_NEAREST_NEIGHBOR
    ex.half_pixel_centers.value = False
    assert version_shown(ex) == 3  # nearest neighbour: align_corners alone bumps


def test_missing_options_table_makes_a_float_depthwise_version_2():
    ex = VersionExplorer(op="DEPTHWISE_CONV_2D")
    ex.options_table.value = False
    assert version_shown(ex) == 2
    assert "dilation_w_factor=0" in text(ex.version_html.value)


@pytest.mark.parametrize("op", wt.EXPLORER_OPS, ids=[o.name for o in wt.EXPLORER_OPS])
def test_every_op_builds_and_disables_the_knobs_it_lacks(op):
    ex = VersionExplorer()
    ex.op.value = op
    assert ex.version.op == op.name and ex.version.signature.op == op
    used = set(ex.config.knobs())
    for name, w in ex.controls.items():
        assert w.disabled == (name not in used), name
    assert op.name in text(ex.header.value)


def test_knob_disabling_follows_the_op():
    ex = VersionExplorer(op="FULLY_CONNECTED")
    assert ex.dilation.disabled and not ex.keep_num_dims.disabled and ex.half_pixel_centers.disabled
    ex.op.value = B.RESIZE_BILINEAR
    assert ex.weights.disabled and ex.keep_num_dims.disabled and not ex.half_pixel_centers.disabled


def test_release_dropdown_offers_every_release_of_the_table():
    ex = VersionExplorer()
    assert list(ex.release.options) == releases()
    assert (releases()[0] == "1.5.0" and "1.12.0" in releases()
            and releases().index("1.9.0") < releases().index("1.10.0"))


def test_static_fallback_shows_the_verdict():
    ex = VersionExplorer(dilation=2)
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "version 2" in text(bundle["text/html"]) and "1.12.0" in bundle["text/html"]
    assert "dilation=2" in bundle["text/plain"]


# ---------------------------------------------------------------------------------------------
# RuntimeExplorer
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runtime_explorer(corpus_paths):
    return RuntimeExplorer(model="selfie_segmentation", release="1.15.0")


def test_selfie_cannot_run_as_shipped_and_its_stored_versions_hide_2_2(runtime_explorer):
    ex = runtime_explorer
    ex.versions.value = "stored"
    ex.model_name.value, ex.release.value = "selfie_segmentation", "1.15.0"
    verdict = text(ex.verdict_html.value)
    # MediaPipe's custom op: no stock release registers it, whatever the builtin versions say
    assert "TFLite 1.15.0 cannot run selfie_segmentation as shipped" in verdict
    assert "Convolution2DTransposeBias" in verdict and "the app must register a kernel" in verdict
    assert "builtin operators are all registered" in verdict and "needs 2.2.0" in verdict
    assert not ex.runs and [f.kind for f in ex.findings if f.is_error] == ["custom-op"]
    assert "Encountered unresolved custom op: Convolution2DTransposeBias." in text(ex.findings_html.value)
    ex.versions.value = "computed"
    shown = text(ex.findings_html.value)
    assert "RESIZE_BILINEAR v3" in shown and "half_pixel_centers=True" in shown
    assert "Didn't find op for builtin opcode 'RESIZE_BILINEAR' version '3'" in shown
    assert "as shipped" not in text(ex.verdict_html.value)
    ex.release.value = "2.2.0"
    assert [f.kind for f in ex.findings if f.is_error] == ["custom-op"]
    assert "cannot run selfie_segmentation as shipped" in text(ex.verdict_html.value)
    ex.versions.value = "stored"


def test_face_landmark_float16_dequantize_needs_1_15_0(runtime_explorer):
    ex = runtime_explorer
    ex.versions.value = "stored"
    ex.model_name.value, ex.release.value = "face_landmark", "1.14.0"
    assert ex.runs
    ex.versions.value = "computed"
    assert not ex.runs
    assert {(f.op, f.version) for f in ex.findings} == {("DEQUANTIZE", 3)}
    assert "v3: in0=FLOAT16" in text(ex.findings_html.value)
    assert "1.15.0" in text(ex.drivers_html.value)
    ex.versions.value = "stored"


def test_old_release_refuses_and_drivers_are_shown(runtime_explorer):
    ex = runtime_explorer
    ex.model_name.value, ex.release.value = "palm_detection_lite", "2.1.0"
    assert not ex.runs and "cannot run" in text(ex.verdict_html.value)
    mr = min_runtime(ex.model())
    assert mr.version == "2.2.0"
    drivers = text(ex.drivers_html.value)
    assert all(e.op in drivers for e in mr.drivers) and "minimum runtime 2.2.0" in drivers
    assert "stored vs computed" in ex.tabs.titles
    ex.release.value = "2.2.0"
    assert ex.runs


def test_model_list_has_the_corpus_and_the_sample_models(tmp_path, corpus_paths):
    (tmp_path / "dw_dilation2.tflite").write_bytes(wt.build_depthwise(2))
    names = available_models(tmp_path)
    assert set(corpus_paths) <= set(names) and "sample:dw_dilation2" in names
    ex = RuntimeExplorer(model="sample:dw_dilation2", release="1.11.0", sample_dir=tmp_path)
    assert not ex.runs and DW_ERROR in text(ex.findings_html.value)
    ex.release.value = "1.12.0"
    assert ex.runs


def test_sample_models_come_only_from_a_folder_the_caller_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing is looked up beside the package or the working directory
    assert not any(name.startswith("sample:") for name in available_models())
    with pytest.raises(FileNotFoundError, match="'missing' is not a folder"):
        available_models("missing")


def test_models_can_be_passed_in():
    model = load(wt.build_depthwise(2))
    ex = RuntimeExplorer(model="mine", release="1.12.0", models={"mine": model})
    assert ex.model() is model and ex.runs
    assert "mine on TFLite 1.12.0" in repr(ex)
    assert "can run mine" in text(ex._repr_mimebundle_()["text/html"])


# ---------------------------------------------------------------------------------------------
# The shared views
# ---------------------------------------------------------------------------------------------
def test_version_diff_lists_what_the_stored_versions_miss(corpus_paths):
    d = version_diff(load(corpus_paths["selfie_segmentation"]), "selfie_segmentation")
    rows = {(r.op, r.stored, r.computed): (r.count, r.stored_runtime, r.computed_runtime) for r in d.rows}
    assert rows == {("DEQUANTIZE", 2, 3): (110, "1.14.0", "1.15.0"), ("RESIZE_BILINEAR", 1, 3): (3, "1.7.0", "2.2.0")}
    assert (d.stored.version, d.computed.version) == ("1.15.0", "2.2.0")
    assert "half_pixel_centers" in repr(d) and "half_pixel_centers" in d._repr_html_()


def test_compatibility_table_marks_runs_custom_ops_stored_only_and_refused(corpus_paths):
    names = ("face_landmark", "selfie_segmentation", "sine_float")
    table = compatibility_table({n: load(corpus_paths[n]) for n in names}, ("1.12.0", "1.14.0", "1.15.0", "2.2.0"))
    status = {k: c.status for k, c in table.cells.items()}
    assert status[("face_landmark", "1.14.0")] == "stored only"
    assert status[("face_landmark", "1.15.0")] == "runs"
    assert status[("face_landmark", "1.12.0")] == "refused"
    # selfie_segmentation has MediaPipe's custom op: never "runs" on a stock release
    assert status[("selfie_segmentation", "1.15.0")] == "stored only"
    assert status[("selfie_segmentation", "2.2.0")] == "custom ops"
    assert table.cells[("selfie_segmentation", "2.2.0")].custom == ("Convolution2DTransposeBias",)
    assert table.cells[("selfie_segmentation", "1.15.0")].symbol == "⚠✚"
    assert table.cells[("selfie_segmentation", "2.2.0")].symbol == "✚"
    assert not any(table.cells[("selfie_segmentation", r)].runs for r in table.releases)
    assert all(status[("sine_float", r)] == "runs" for r in table.releases)
    assert table.minimum["selfie_segmentation"] == ("1.15.0", "2.2.0")
    assert "⚠" in repr(table) and "✘" in repr(table) and "✚" in repr(table) and "wb-compat" in table._repr_html_()


def test_viz_exports_the_widgets():
    assert viz.VersionExplorer is VersionExplorer and viz.RuntimeExplorer is RuntimeExplorer
