"""The step debugger, driven from Python: Play / Step / Back move the ringed node on the graph and the
cursor on the timeline; the tensors of each step come with statistics and a heatmap; a delegated run
shows the device lane."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest

import workbench
from workbench import corpus
from workbench.delegate import SimulatedAccelerator
from workbench.delegate.trace import timeline
from workbench.viz.render import PALETTE
from workbench.viz.widgets import StepDebugger
from workbench.viz.widgets.step_debugger import (
    _VIRIDIS,
    CURRENT,
    FUTURE_OPACITY,
    KIND_FILL,
    StepOutOfRange,
    bars_svg,
    heatmap_png,
    png_bytes,
    tensor_stats,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def digits():
    return workbench.load(SAMPLES / "digits_cnn_float.tflite")


def _svg(html_text: str):
    return ET.fromstring(re.search(r"<svg.*?</svg>", html_text, re.S).group(0))


def _ringed(dbg) -> set:
    svg = _svg(dbg.graph_html.value)
    out = set()
    for g in svg.iter(f"{SVG}g"):
        if g.get("class") == "node" and any(r.get("class") == "ring" and r.get("stroke") == CURRENT
                                            for r in g.iter(f"{SVG}rect")):
            out.add(g.get("data-node"))
    return out


def _faded(dbg) -> set:
    svg = _svg(dbg.graph_html.value)
    return {g.get("data-node") for g in svg.iter(f"{SVG}g")
            if g.get("class") == "node" and g.get("opacity") == f"{FUTURE_OPACITY:g}"}


def _cursor_x(dbg) -> float:
    svg = _svg(dbg.timeline_html.value)
    line = next(x for x in svg.iter(f"{SVG}line") if x.get("stroke") == CURRENT)
    return float(line.get("x1"))


def _png_size(png: bytes) -> tuple:
    return struct.unpack(">II", png[16:24])


def _png_pixels(png: bytes) -> np.ndarray:
    w, h = _png_size(png)
    pos, data = 8, b""
    while pos < len(png):
        n = struct.unpack(">I", png[pos:pos + 4])[0]
        tag = png[pos + 4:pos + 8]
        if tag == b"IDAT":
            data += png[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(data), np.uint8).reshape(h, 1 + 3 * w)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(h, w, 3)


def test_step_and_back_move_the_ringed_node_and_the_timeline_cursor(digits):
    dbg = StepDebugger(digits)
    n = len(digits.subgraphs[0].operators)
    assert len(dbg.steps) == n and dbg.cursor == 0
    assert _ringed(dbg) == {"n0"} and _faded(dbg) == {f"n{i}" for i in range(1, n)}
    x0 = _cursor_x(dbg)
    dbg.step_button.click()
    assert dbg.cursor == 1 and _ringed(dbg) == {"n1"} and "n0" not in _faded(dbg)
    x1 = _cursor_x(dbg)
    assert x1 > x0
    assert "step 2 / 7" in dbg.header_html.value and "node 1 CONV_2D" in dbg.header_html.value
    dbg.back_button.click()
    assert dbg.cursor == 0 and _ringed(dbg) == {"n0"} and _cursor_x(dbg) == x0
    dbg.back_button.click()                                # stays at the first step
    assert dbg.cursor == 0
    for _ in range(n + 2):
        dbg.step_button.click()
    assert dbg.cursor == n - 1 and _ringed(dbg) == {f"n{n - 1}"} and not _faded(dbg)


def test_play_drives_the_same_cursor(digits):
    dbg = StepDebugger(digits)
    dbg.play.value = 4                 # the Play widget's timer sets its value; the slider follows
    assert dbg.slider.value == 4 and dbg.current.index == 3 and _ringed(dbg) == {"n3"}
    assert (dbg.play.min, dbg.play.max) == (dbg.slider.min, dbg.slider.max) == (1, len(dbg.steps))


def test_the_slider_and_the_header_count_the_same_step(digits):
    dbg = StepDebugger(digits, target="tidl", strategy="tidl")
    n = len(dbg.steps)
    assert dbg.slider.value == 1 and dbg.cursor == 0 and f"step 1 / {n}" in dbg.header_html.value
    for k in (2, n):
        dbg.slider.value = k
        assert dbg.cursor == k - 1 and f"step {k} / {n}" in dbg.header_html.value
    dbg.go(0)
    assert dbg.slider.value == 1 and f"step 1 / {n}" in dbg.header_html.value
    with pytest.raises(StepOutOfRange, match=f"0 … {n - 1}"):
        dbg.go(n)


def test_a_given_interpreter_shows_its_own_target_and_strategy_in_fixed_menus(digits):
    it = workbench.Interpreter(model=digits, experimental_delegates=[
        SimulatedAccelerator("tidl", mode="compiled", strategy="tidl")])
    it.allocate_tensors()
    dbg = StepDebugger(it)
    assert (dbg.run_on.value, dbg.strategy.value) == ("tidl", "tidl")
    assert dbg.run_on.disabled and dbg.strategy.disabled
    assert "passed in" in dbg.menus_note.value and "passed in" in dbg.run_on.tooltip
    cpu = workbench.Interpreter(model=digits)
    cpu.allocate_tensors()
    plain = StepDebugger(cpu)
    assert plain.run_on.value == "" and plain.strategy.value == "tflite" and plain.run_on.disabled
    free = StepDebugger(digits, target="tidl", strategy="edgetpu")
    assert not free.run_on.disabled and free.menus_note.value == ""
    assert (free.run_on.value, free.strategy.value) == ("tidl", "edgetpu")
    # a strategy other than TFLite's is an offline compile: the menu says so, the run uses compiled mode
    assert free.strategy.label == "edgetpu (compiled offline)" and "the offline edgetpu compile" in free.run_html.value
    free.strategy.value = "tflite"
    assert free.strategy.label == "tflite (runtime)" and "a runtime delegate, TFLite&#x27;s" in free.run_html.value


def test_the_timeline_has_a_legend_of_its_colours_and_lanes(digits):
    # the MEAN denied, so the run has a host node between two device partitions (tidl takes the whole CNN)
    it = workbench.Interpreter(model=digits, experimental_delegates=[
        SimulatedAccelerator("tidl", deny=("MEAN",))])
    dbg = StepDebugger(it)
    legend = re.search(r"<div class='wb-timeline-legend'.*", dbg.timeline_html.value, re.S).group(0)
    for kind in ("node", "wait", "copy in", "copy out"):
        assert f"background:{KIND_FILL[kind]}" in legend, kind
    for gid, _nodes, k in dbg._partitions.values():
        if any(sl.lane == "device" and sl.kind == "node" and f"n{sl.node}" in _nodes for sl in dbg.slices):
            assert f"background:{PALETTE[k % len(PALETTE)][0]}" in legend and gid in legend
    assert "device: the accelerator" in legend and "measured" in legend
    cpu = StepDebugger(digits)
    legend = re.search(r"<div class='wb-timeline-legend'.*", cpu.timeline_html.value, re.S).group(0)
    assert "copy in" not in legend and "device:" not in legend and f"background:{KIND_FILL['node']}" in legend


def test_a_vector_is_drawn_as_bars_one_per_value(digits):
    scores = np.linspace(-1.0, 2.0, 10, dtype=np.float32).reshape(1, 10)
    svg = ET.fromstring(bars_svg(scores))
    bars = [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "bar"]
    assert len(bars) == 10 and float(svg.get("height")) >= 40
    tallest = max(bars, key=lambda r: float(r.get("height")))
    assert tallest is bars[9] and float(tallest.get("height")) > 0.6 * float(svg.get("height"))
    assert float(bars[0].get("y")) >= float(bars[9].get("y")) + float(bars[9].get("height")) - 0.01  # below 0
    assert len([r for r in ET.fromstring(bars_svg(np.ones((1, 32)))).iter(f"{SVG}rect")]) == 32
    assert bars_svg(np.ones((1, 8, 8, 1))) is None and bars_svg(np.ones((4, 10))) is None
    assert bars_svg(np.arange(1000)) is None                     # too long: a wrapped heatmap instead
    dbg = StepDebugger(digits)
    dbg.go(len(dbg.steps) - 1)                                   # SOFTMAX: its output is the [1, 10] scores
    html = dbg.tensors_html.value
    assert "float32 [1, 10]" in html and "10 values as bars" in html
    assert len(re.findall(r'<rect class="bar"', html)) == 2 * 10       # its input and its output


def test_a_cpu_run_has_only_the_host_lane(digits):
    dbg = StepDebugger(digits)
    assert "host (CPU, measured)" in dbg.timeline_html.value and "device (modeled)" not in dbg.timeline_html.value


def test_a_delegated_run_shows_the_device_lane_and_the_partition_at_work(digits):
    dbg = StepDebugger(digits, target="tidl")
    assert "device (modeled)" in dbg.timeline_html.value
    kinds = [(s.event.lane, s.event.kind) for s in dbg.steps]
    assert ("device", "copy in") in kinds and ("host", "delegate") in kinds
    first = dbg.current                                      # copy in of the first partition
    assert first.event.kind == "copy in" and first.group is not None and not first.focus
    svg = _svg(dbg.graph_html.value)
    outline = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "outline"
               and any(r.get("stroke") == CURRENT for r in g.iter(f"{SVG}rect"))]
    assert len(outline) == 1 and first.group in "".join(t.text for t in outline[0].iter(f"{SVG}text"))
    # the cursor sits on the device lane's copy-in box
    sl = dbg.slices[first.slice]
    assert (sl.lane, sl.kind) == ("device", "copy in")
    dbg.step_button.click()
    s = dbg.current
    assert (s.event.lane, s.event.kind) == ("device", "node") and _ringed(dbg) == {f"n{s.event.node}"}
    assert dbg.slices[s.slice].lane == "device" and dbg.slices[s.slice].node == s.event.node
    assert "modeled" in dbg.header_html.value
    # switching to a CPU run re-runs and drops the device lane
    dbg.run_on.value = ""
    assert all(st.event.lane == "host" for st in dbg.steps) and "device (modeled)" not in dbg.timeline_html.value


def test_a_chip_with_several_cores_gets_one_timeline_row_per_core(digits):
    """am5729 lists its cores (EVEs and DSPs): each core that works is a row of its own, named as in the
    Chrome trace, and the cursor's box sits on the row of the core that ran the step."""
    dbg = StepDebugger(digits, target="am5729")
    rows = dbg._lanes()
    assert rows[0] == "host" and "eve:0" in rows and "device" not in rows
    html = dbg.timeline_html.value
    assert all(f"{r} (modeled)" in html for r in rows[1:]) and "host (CPU, modeled)" in html
    assert "one row each" in dbg.timeline_html.value
    while dbg.current.event.kind != "node" or dbg.current.event.lane != "device":
        dbg.step_button.click()
    sl = dbg.slices[dbg.current.slice]
    y = 14 + rows.index(sl.unit) * 30 - 1
    assert f'y="{y}"' in dbg.timeline_html.value.split("stroke-width=\"1.5\"/>")[1][:200]


def test_every_step_has_the_timeline_box_of_its_event(digits):
    it = workbench.Interpreter(model=digits, experimental_delegates=[SimulatedAccelerator("tidl")])
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.ones((1, 8, 8, 1), np.float32))
    dbg = StepDebugger(it)
    assert dbg.run_on.disabled and len(dbg.events) == len(dbg.steps)
    assert dbg.slices == timeline(dbg.events)
    for s in dbg.steps:
        sl = dbg.slices[s.slice]
        assert sl.node == s.event.node
        assert sl.lane == ("device" if s.event.lane == "device" else "host")
        assert sl.kind == ("wait" if s.event.kind == "delegate" else s.event.kind)


def test_tensors_of_a_step_come_with_their_statistics_and_a_heatmap(digits):
    dbg = StepDebugger(digits, seed=3)
    dbg.go(1)
    ev = dbg.current.event
    out = ev.outputs[0]
    html = dbg.tensors_html.value
    assert f"tensor {ev.output_ids[0]}" in html and "float32 [1, 8, 8, 16]" in html
    st = tensor_stats(out)
    assert st["min"] == pytest.approx(float(out.min()))
    assert st["std"] == pytest.approx(float(out.astype(np.float64).std()))
    assert f"max {float(out.max()):.4g}" in html
    vectors = sum(1 for a in (*ev.inputs, *ev.outputs) if bars_svg(a) is not None)      # the bias: bars
    assert vectors == 1 and html.count("class='wb-bars'") == vectors
    assert html.count("data:image/png;base64,") == len(ev.inputs) + len(ev.outputs) - vectors
    assert "(constant)" in html                  # the weights are inputs too


def test_a_quantized_tensor_shows_its_scale_and_zero_point():
    model = workbench.load(SAMPLES / "int8_cnn.tflite")
    dbg = StepDebugger(model)
    ev = dbg.current.event
    t = ev.input_ids[0]
    q = model.subgraphs[0].tensors[t].quantization
    html = dbg.tensors_html.value
    assert f"zero point {int(q.zero_point[0])}" in html and "scale" in html
    st = tensor_stats(ev.inputs[0], q)
    assert st["real_min"] == pytest.approx((float(ev.inputs[0].min()) - q.zero_point[0]) * q.scale[0])
    assert "real range" in html


def test_the_picture_follows_the_cursor_on_a_tall_graph():
    model = workbench.load(SAMPLES / "efficientnet_block_float.tflite")
    dbg = StepDebugger(model, window=(400.0, 300.0))
    dbg.slider.value = len(dbg.steps)                 # the last step
    svg = _svg(dbg.graph_html.value)
    x0, y0, w, h = map(float, svg.get("viewBox").split())
    assert h == pytest.approx(300.0)
    box = dbg._layout.box(dbg.current.focus[0])
    assert y0 <= box[1] and box[3] <= y0 + h
    dbg.follow.value = False
    assert float(_svg(dbg.graph_html.value).get("viewBox").split()[3]) > 300.0


def test_heatmap_paints_min_to_max_with_viridis_and_tiles_channels():
    a = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    png, note = heatmap_png(a)
    px = _png_pixels(png)
    assert px.shape == (2, 3, 3) and note == ""
    assert tuple(px[0, 0]) == tuple(_VIRIDIS[0].astype(int)) and tuple(px[1, 2]) == tuple(_VIRIDIS[-1].astype(int))
    img = np.zeros((1, 4, 5, 3), np.float32)         # 3 channels of 4×5: tiles 2 per row with 1-px gaps
    img[..., 2] = 1.0
    png, note = heatmap_png(img)
    assert _png_size(png) == (2 * 5 + 1, 2 * 4 + 1) and "3 channels" in note
    px = _png_pixels(png)
    assert tuple(px[4, 0]) == (255, 255, 255)         # the gap
    assert tuple(px[5, 0]) == tuple(_VIRIDIS[-1].astype(int))   # channel 2, second row of tiles
    png, note = heatmap_png(np.arange(1000))
    assert _png_size(png) == (32, 32) and "wrapped" in note
    assert heatmap_png(np.array([b"x"], dtype=object))[0] is None


def test_png_bytes_writes_a_valid_png():
    rgb = np.random.default_rng(0).integers(0, 256, (5, 7, 3)).astype(np.uint8)
    png = png_bytes(rgb)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and _png_size(png) == (7, 5)
    assert (_png_pixels(png) == rgb).all()


def test_a_corpus_model_steps_quickly(corpus_paths):
    dbg = StepDebugger(workbench.load(corpus_paths["face_landmark_with_attention"]), target="xnnpack")
    dbg.go(300)
    assert dbg.current.focus and _ringed(dbg) == set(dbg.current.focus)
    assert dbg.timings["show_ms"] < 500


def test_steps_inside_a_called_subgraph_ring_the_node_that_called_it(corpus_paths):
    # tidl is a static-shape delegate: as in LiteRT (tensorflow/lite/core/subgraph.cc ModifyGraphWithDelegate,
    # kTfLiteDelegateFlagsAllowDynamicTensors) it is refused on this model's dynamic-sized tensors, and the
    # debugger says so instead of raising; a delegate that allows them runs inside the called subgraphs
    refused = StepDebugger("openwakeword_hey_jarvis", target="tidl")
    assert refused.error and "dynamic-sized" in refused.error and "the run failed" in refused.run_html.value
    name = "openwakeword_hey_jarvis"
    it = workbench.Interpreter(model=workbench.load(corpus.path(name)))
    for k, shape in enumerate(corpus.INPUT_SHAPES.get(name, ())):
        it.resize_tensor_input(k, list(shape))
    it.modify_graph_with_delegate(SimulatedAccelerator("tidl", allow_dynamic_tensors=True))
    it.allocate_tensors()
    dbg = StepDebugger(it)
    inner = [s for s in dbg.steps if s.event.callers]
    assert inner and any(s.event.lane == "device" for s in inner)
    for s in inner:
        caller = s.event.callers[0][1]
        if caller in dbg._partitions:            # the device working for a DELEGATE node of subgraph 0
            continue
        dbg.go(s.index)
        assert _ringed(dbg) == {f"n{caller}"}, s
        assert _cursor_x(dbg) >= 0               # the timeline always has a cursor
    assert all(s.focus or s.group for s in dbg.steps)
