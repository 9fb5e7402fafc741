"""A delegated run step by step on one clock, and its Chrome trace (a host lane and one lane per core)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import workbench
from workbench.delegate import SimulatedAccelerator
from workbench.delegate.trace import chrome_trace, measured_table, timeline, write_chrome_trace
from workbench.partition import GraphView, load_target, node_macs
from workbench.partition.cost import cpu_node_us

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


def test_one_clock_host_and_device_both_modeled_from_the_target_and_nested():
    m, d, it, x = _delegated()
    events = list(it.steps())
    slices = timeline(events)
    assert {s.clock for s in slices} == {"modeled"}          # a delegated run: one clock, the target's
    waits = [s for s in slices if s.kind == "wait"]
    assert len(waits) == 2
    # the host's MEAN takes the host's modeled time from the same target file, not what this machine measured
    (mean,) = [s for s in slices if s.lane == "host" and s.kind == "node"]
    cost = load_target("tidl").cost
    assert mean.dur_us == pytest.approx(cpu_node_us(cost, node_macs(GraphView(m, 0), mean.node)))
    assert mean.start_us == pytest.approx(waits[0].end_us) and waits[1].start_us == pytest.approx(mean.end_us)
    for w in waits:        # every device slice of a run sits inside the host's wait for it
        inside = [s for s in slices if s.lane == "device" and w.start_us - 1e-9 <= s.start_us < w.end_us]
        assert inside and all(s.end_us <= w.end_us + 1e-6 for s in inside)
        assert sum(s.dur_us for s in inside) == pytest.approx(w.dur_us)
    # nothing overlaps within a lane
    assert {s.unit for s in slices} == {"host", "device"}      # one core: the "device" lane
    for lane in ("host", "device"):
        seq = sorted((s for s in slices if s.lane == lane and s.depth == 0), key=lambda s: s.start_us)
        assert all(a.end_us <= b.start_us + 1e-6 for a, b in zip(seq, seq[1:]))


def test_the_measured_times_come_apart_in_a_labelled_table_and_on_request():
    m, d, it, x = _delegated()
    events = list(it.steps())
    table = measured_table(events)
    assert "measured on this machine" in table.label and "not on the timeline" in str(table)
    assert [r[2] for r in table.rows] == [e.op for e in events if e.kind == "node"]
    assert [r[3] for r in table.rows] == ["device"] * 4 + ["host"] + ["device"] * 2
    assert table.total_ms == pytest.approx(sum(e.elapsed_ms for e in events if e.kind == "node"))
    assert "<caption>measured on this machine" in table._repr_html_()
    measured = timeline(events, clock="measured")            # asked for: the host's measured times
    (mean,) = [s for s in measured if s.lane == "host" and s.kind == "node"]
    assert mean.clock == "measured" and mean.dur_us == pytest.approx(events[7].elapsed_ms * 1000.0)
    with pytest.raises(ValueError, match="clock must be one of"):
        timeline(events, clock="wall")


def test_a_plain_run_gets_the_modeled_clock_when_given_a_target_and_its_model():
    it = workbench.Interpreter(model_path=str(DIGITS))
    it.allocate_tensors()
    events = list(it.steps())
    slices = timeline(events, target="am5729", model=DIGITS)
    g, cost = GraphView(workbench.load(DIGITS), 0), load_target("am5729")
    overhead = cost.devices["host"]["op_overhead_us"]
    assert overhead > 0
    assert [s.dur_us for s in slices] == pytest.approx([cpu_node_us(cost.cost, node_macs(g, s.node)) + overhead
                                                        for s in slices])
    with pytest.raises(ValueError, match="needs cost figures"):
        timeline(events, clock="modeled")


def test_chrome_trace_has_two_lanes_complete_events_and_named_copies(tmp_path):
    m, d, it, x = _delegated()
    path = write_chrome_trace(list(it.steps()), tmp_path / "trace.json")
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {"host (CPU, modeled)", "device (modeled)"}
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
