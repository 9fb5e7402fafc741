"""A delegated run step by step on two lanes, and its Chrome trace."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import workbench
from workbench.delegate import SimulatedAccelerator
from workbench.delegate.trace import chrome_trace, timeline, write_chrome_trace

DIGITS = Path(__file__).resolve().parents[2] / "sample_models" / "digits_cnn_float.tflite"


def _delegated():
    # the tidl target takes every op of the digits CNN (its MEAN as a pooling layer); denying the MEAN keeps
    # one node on the CPU between two device partitions, so the run crosses the boundary twice
    m = workbench.load(DIGITS)
    d = SimulatedAccelerator("tidl", deny=("MEAN",))
    it = workbench.Interpreter(model=m, experimental_delegates=[d])
    it.allocate_tensors()
    x = np.random.default_rng(0).random((1, 8, 8, 1), np.float32)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    return m, d, it, x


def test_steps_come_in_order_cpu_nodes_copy_in_device_nodes_copy_out():
    m, d, it, x = _delegated()
    events = list(it.steps())
    kinds = [(e.lane, e.kind, e.op if e.kind == "node" else "") for e in events]
    assert kinds == [
        ("device", "copy in", ""), ("device", "node", "CONV_2D"), ("device", "node", "CONV_2D"),
        ("device", "node", "MAX_POOL_2D"), ("device", "node", "CONV_2D"), ("device", "copy out", ""),
        ("host", "delegate", ""), ("host", "node", "MEAN"),
        ("device", "copy in", ""), ("device", "node", "FULLY_CONNECTED"), ("device", "node", "SOFTMAX"),
        ("device", "copy out", ""), ("host", "delegate", "")]
    # device nodes carry the original node index, their intermediate tensors and a modeled time
    dev = [e for e in events if e.lane == "device" and e.kind == "node"]
    assert [e.node for e in dev] == [0, 1, 2, 3, 5, 6]
    assert all(e.modeled_ms > 0 and e.elapsed_ms >= 0 and e.outputs for e in dev)
    assert dev[0].outputs[0].shape == (1, 8, 8, 8)
    # copies: bytes of the tensor that crossed; the delegate node's modeled time is the partition's estimate
    cin = events[0]
    assert cin.bytes == x.nbytes and cin.input_ids == (it.get_input_details()[0]["index"],)
    plan = it.delegations[0][1].plans[0]
    waits = [e for e in events if e.kind == "delegate"]
    assert sorted(round(w.modeled_ms * 1000, 6) for w in waits) == \
        sorted(round(p.est_us, 6) for p in plan.partitions)
    # the same outputs as invoke()
    out = [e for e in events if e.kind == "delegate"][-1].outputs[0]
    it.invoke()
    assert np.array_equal(out, it.get_tensor(it.get_output_details()[0]["index"]))


def test_one_clock_host_measured_device_modeled_and_nested():
    m, d, it, x = _delegated()
    slices = timeline(it.steps())
    waits = [s for s in slices if s.kind == "wait"]
    assert len(waits) == 2 and all(s.clock == "modeled" for s in waits)
    assert all(s.clock == "measured" for s in slices if s.lane == "host" and s.kind == "node")
    for w in waits:        # every device slice of a run sits inside the host's wait for it
        inside = [s for s in slices if s.lane == "device" and w.start_us - 1e-9 <= s.start_us < w.end_us]
        assert inside and all(s.end_us <= w.end_us + 1e-6 for s in inside)
        assert sum(s.dur_us for s in inside) == pytest.approx(w.dur_us)
    # nothing overlaps within a lane
    for lane in ("host", "device"):
        seq = sorted((s for s in slices if s.lane == lane and s.depth == 0), key=lambda s: s.start_us)
        assert all(a.end_us <= b.start_us + 1e-6 for a, b in zip(seq, seq[1:]))


def test_chrome_trace_has_two_lanes_complete_events_and_named_copies(tmp_path):
    m, d, it, x = _delegated()
    path = write_chrome_trace(list(it.steps()), tmp_path / "trace.json")
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {"host (CPU, measured)", "device (modeled)"}
    xs = [e for e in events if e["ph"] == "X"]
    assert {e["tid"] for e in xs} == {1, 2}
    assert all(set(e) >= {"name", "ph", "ts", "dur", "pid", "tid", "args"} and e["dur"] >= 0 for e in xs)
    copies = [e for e in xs if e["name"] in ("copy in", "copy out")]
    assert len(copies) == 4 and all(e["args"]["bytes"] > 0 and e["tid"] == 2 for e in copies)
    assert chrome_trace(list(it.steps()))["traceEvents"][0]["ph"] == "M"


def test_a_plain_interpreter_steps_only_on_the_host():
    it = workbench.Interpreter(model_path=str(DIGITS))
    it.allocate_tensors()
    events = list(it.steps())
    assert {e.lane for e in events} == {"host"} and all(e.modeled_ms is None for e in events)
    assert [s.lane for s in timeline(events)] == ["host"] * len(events)
