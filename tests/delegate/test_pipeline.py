"""Frames in flight: N frames run for real, scheduled on the modeled clock as TIDL API's pipelines do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import workbench
from workbench import WorkbenchError
from workbench.delegate import SimulatedAccelerator, pipeline

DIGITS = Path(__file__).resolve().parents[2] / "sample_models" / "digits_cnn_float.tflite"
MOBILENET = Path("/work/shared/models/mobilenet_v1_a10_224_float32.tflite")


def _interp(path=DIGITS, target="am5729", **kw):
    it = workbench.Interpreter(model_path=str(path),
                               experimental_delegates=[SimulatedAccelerator(target, **kw)])
    it.allocate_tensors()
    return it


def _plain_outputs(path, frames, target="am5729", **kw):
    it = _interp(path, target, **kw)
    out = []
    for arrays in frames:
        for d, a in zip(it.get_input_details(), arrays):
            it.set_tensor(d["index"], a)
        it.invoke()
        out.append([it.get_tensor(d["index"]).copy() for d in it.get_output_details()])
    return out


def _frames(n, shape, seed=3):
    rng = np.random.default_rng(seed)
    return [[rng.random(shape, np.float32)] for _ in range(n)]


def test_32_frames_of_the_digits_cnn_equal_the_plain_run_and_several_eves_take_different_frames():
    frames = _frames(32, (1, 8, 8, 1))
    run = pipeline(_interp(), frames=32, in_flight=4, inputs=frames)
    want = _plain_outputs(DIGITS, frames)
    assert run.frames == 32 and len(run.outputs) == 32
    assert all(np.array_equal(a, b) for got, exp in zip(run.outputs, want) for a, b in zip(got, exp))
    assert run.clock == "modeled" and "modeled" in str(run)
    assert run.throughput_fps >= 1000.0 / run.mean_latency_ms - 1e-9
    assert {"eve:0", "eve:1", "eve:2", "eve:3", "dsp:0", "dsp:1"} <= set(run.lanes())
    assert run.overlaps() > 0
    eves = {s.args["frame"] % 4: s.unit for s in run.slices if s.unit.startswith("eve")}
    assert eves == {0: "eve:0", 1: "eve:1", 2: "eve:2", 3: "eve:3"}


def test_one_frame_in_flight_is_the_plain_latency_and_no_overlap():
    run = pipeline(_interp(), frames=8, in_flight=1)
    assert run.overlaps() == 0
    assert run.latency_ms == pytest.approx([run.one_frame_ms] * 8)
    assert run.throughput_fps == pytest.approx(1000.0 / run.one_frame_ms)


def test_the_host_part_of_the_next_frame_overlaps_the_device_part_of_this_one():
    # the MEAN kept on the host: each frame is device, host, device
    run = pipeline(_interp(deny=("MEAN",)), frames=6, in_flight=2)
    host = [s for s in run.slices if s.lane == "host"]
    device = [s for s in run.slices if s.lane == "device"]
    assert host and any(h.args["frame"] == d.args["frame"] + 1 and h.start_us < d.end_us and d.start_us < h.end_us
                        for h in host for d in device)
    assert run.throughput_fps > 1000.0 / run.one_frame_ms          # faster than one frame at a time
    tids = {e["tid"] for e in run.chrome_trace()["traceEvents"] if e["ph"] == "X"}
    assert len(tids) == len(run.lanes())


def test_bad_arguments_raise_typed_errors():
    it = _interp()
    with pytest.raises(WorkbenchError, match="in_flight"):
        pipeline(it, frames=2, in_flight=0)
    with pytest.raises(WorkbenchError, match="frames must be"):
        pipeline(it, frames=0)
    with pytest.raises(WorkbenchError, match="no delegate"):
        plain = workbench.Interpreter(model_path=str(DIGITS))
        plain.allocate_tensors()
        pipeline(plain, frames=2)


def test_32_frames_of_mobilenet_v1_equal_the_plain_run():
    if not MOBILENET.exists():
        pytest.skip(f"{MOBILENET} is absent")
    frames = _frames(32, (1, 224, 224, 3))
    run = pipeline(_interp(MOBILENET), frames=32, in_flight=4, inputs=frames)
    want = _plain_outputs(MOBILENET, frames)
    assert all(np.array_equal(a, b) for got, exp in zip(run.outputs, want) for a, b in zip(got, exp))
    assert run.throughput_fps >= 1000.0 / run.mean_latency_ms - 1e-9 and run.overlaps() > 0
