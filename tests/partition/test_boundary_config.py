"""The boundary-parameters file beside a compiled model (the TI paper's ``subgraph0.cfg``): each offloaded
subgraph's inputs and outputs, their shapes, and their scale / zero point for the fixed-point conversion."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench import corpus, dump, load
from workbench.delegate.boundary import boundary_params, calibration_ranges, params_from_ranges
from workbench.delegate.quantize import feature_map_params, symmetric_scale, unsigned_scale
from workbench.errors import WorkbenchError
from workbench.partition import boundary_config, boundary_entries, compile, partition


def test_power_of_two_scales_cover_the_range_and_say_unsigned_after_a_relu():
    assert feature_map_params(-1.0, 1.0) == (2.0 ** -6, 0, True)       # 1/127 rounded up to a power of two
    assert feature_map_params(0.0, 6.0) == (2.0 ** -5, 0, False)       # 6/255 → 1/32, stored unsigned
    assert feature_map_params(0.0, 0.0) == (1.0, 0, False)             # no range: scale 1
    for lo, hi in ((-3.7, 0.2), (0.0, 100.0), (-1e-3, 1e-3)):
        scale, zp, signed = feature_map_params(lo, hi)
        assert np.log2(scale) == int(np.log2(scale)) and zp == 0
        assert max(abs(lo), abs(hi)) <= scale * (127 if signed else 255)
        # the same arithmetic as the int8 copy's activations (one place: workbench.delegate.quantize)
        peak = max(abs(lo), abs(hi))
        assert scale == (symmetric_scale(peak, "power_of_two") if signed else unsigned_scale(peak))


def test_params_from_ranges_are_what_compile_writes():
    (t, p), = params_from_ranges({7: (-0.5, 3.0)}).items()
    assert t == 7 and p == {"scale": [2.0 ** -5], "zero_point": [0], "min": -0.5, "max": 3.0, "power_of_two": True,
                            "signed": True}


@pytest.fixture(scope="module")
def deeplab_compiled():
    m = load(corpus.path("aitoolkit_deeplab_v3"))
    plan = partition(m, "tidl", "tidl", max_partitions=1)
    rng = np.random.default_rng(0)
    frames = [rng.uniform(-1, 1, (1, 257, 257, 3)).astype(np.float32) for _ in range(2)]
    ranges = calibration_ranges(plan, frames)
    params = boundary_params(plan, frames)
    assert params == params_from_ranges(ranges)
    return plan, compile(plan, params=params), ranges


def test_calibrated_boundary_of_deeplabs_backbone(deeplab_compiled):
    plan, compiled, ranges = deeplab_compiled
    (e,) = boundary_entries(load(dump(compiled)))           # survives the round trip through bytes
    assert e["nodes"] == list(range(61)) and e["target"] == "tidl"
    ins = [b for b in e["boundary"] if b["role"] == "input"]
    outs = [b for b in e["boundary"] if b["role"] == "output"]
    assert [b["shape"] for b in ins] == [[1, 257, 257, 3]] and [b["shape"] for b in outs] == [[1, 33, 33, 160]]
    for b in ins + outs:
        assert b["calibrated"] and b["power_of_two"] and b["zero_point"] == [0]
        assert max(abs(b["min"]), abs(b["max"])) <= b["scale"][0] * (127 if b["signed"] else 255)
    text = boundary_config(compiled, 0)
    assert "numInputs = 1" in text and "input0.shape = 1 257 257 3" in text
    assert "output0.name = MobilenetV2/expanded_conv_16/project/BatchNorm/FusedBatchNorm" in text
    assert f"output0.scale = {outs[0]['scale'][0]:.9g}" in text


def test_uncalibrated_boundary_says_so_and_unknown_subgraphs_are_named(deeplab_compiled):
    plan = deeplab_compiled[0]
    text = boundary_config(compile(plan), 0)
    assert "input0.scale = (not calibrated" in text
    with pytest.raises(WorkbenchError, match=r"no offloaded subgraph 3 \(it has: 0\)"):
        boundary_config(compile(plan), 3)


def test_the_view_shows_a_table_per_subgraph(deeplab_compiled):
    from workbench import viz

    view = viz.boundary_view(deeplab_compiled[1])
    assert "subgraph 0" in view._repr_html_() and "257×257" in view._repr_html_().replace("1×257", "257")
    assert repr(view).startswith("# subgraph 0 boundary parameters")


def test_cli_writes_a_cfg_per_subgraph_beside_the_compiled_model(tmp_path, capsys):
    from workbench.cli import main

    frames = np.random.default_rng(1).uniform(-1, 1, (2, 257, 257, 3)).astype(np.float32)
    np.savez(tmp_path / "cal.npz", sub_7=frames)
    out = tmp_path / "dl.tflite"
    assert main(["partition", str(corpus.path("aitoolkit_deeplab_v3")), "--target", "tidl", "--strategy", "tidl",
                 "--max-partitions", "1", "-o", str(out), "--calibration", str(tmp_path / "cal.npz"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["output"]["boundary_configs"] == [str(tmp_path / "dl.subgraph0.cfg")] and doc["output"]["calibrated"]
    assert "input0.range" in (tmp_path / "dl.subgraph0.cfg").read_text()
    assert main(["partition", str(corpus.path("aitoolkit_deeplab_v3")), "--calibration",
                 str(tmp_path / "cal.npz")]) != 0
    assert "needs -o" in capsys.readouterr().err
