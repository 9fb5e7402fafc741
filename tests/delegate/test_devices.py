"""Several cores on one chip: the am5729 target's EVEs and DSPs, its layer-group policy, the copies
between cores, and one lane per core in the steps and the trace."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import workbench
from workbench.delegate import SimulatedAccelerator, core_times, devices_of
from workbench.delegate.trace import chrome_trace, timeline
from workbench.partition import TargetError, load_target, node_macs, parse_target, partition
from workbench.partition.cost import partition_cost
from workbench.partition.devices import main, place, schedule

DIGITS = Path(__file__).resolve().parents[2] / "sample_models" / "digits_cnn_float.tflite"
TARGETS = Path(workbench.__file__).parent / "partition" / "targets"


@pytest.fixture(scope="module")
def am5729_run():
    d = SimulatedAccelerator("am5729")
    it = workbench.Interpreter(model_path=str(DIGITS), experimental_delegates=[d])
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.random.default_rng(1).random((1, 8, 8, 1), np.float32))
    return d, it, list(it.steps())


def test_am5729_lists_four_eves_and_two_dsps_with_sourced_figures():
    dev = devices_of("am5729")
    assert {k: c.count for k, c in dev.kinds.items()} == {"eve": 4, "dsp": 2}
    assert dev.kinds["dsp"].cost["clock_mhz"] == 750 and dev.kinds["eve"].cost == load_target("am5729").cost
    assert all(c.source for c in dev.kinds.values()) and "using_api.html" in dev.source
    assert dev.link["bandwidth_mb_s"] > 0 and dev.link["transfer_overhead_us"] > 0      # copies are never free
    assert dev.kind_of("CONV_2D") == "eve" and dev.kind_of("SOFTMAX") == "dsp"
    assert dev.kind_of("SOFTMAX", use=("eve",)) == "eve"
    assert devices_of("tidl") is None                 # a target without a devices table has one device


def test_a_malformed_devices_table_names_the_key():
    doc = json.loads((TARGETS / "am5729.json").read_text(encoding="utf-8"))
    doc["devices"]["dsp"]["count"] = 0
    with pytest.raises(TargetError, match=r"devices\.dsp\.count"):
        devices_of(parse_target(doc, "bad.json"))
    doc["devices"]["dsp"]["count"] = 2
    doc["devices"]["policy"]["gpu"] = ["CONV_2D"]
    with pytest.raises(TargetError, match=r"devices\.policy\.gpu: no such kind"):
        devices_of(parse_target(doc, "bad.json"))
    with pytest.raises(ValueError, match="cores 'npu'"):
        place(None, (), devices_of("am5729"), "npu")


def test_an_am5729_run_has_a_host_lane_and_one_lane_per_core(am5729_run):
    d, it, events = am5729_run
    units = {e.unit for e in events if e.lane == "device"}
    assert units == {"eve:0", "dsp:0"}
    convs = {e.unit for e in events if e.kind == "node" and e.op == "CONV_2D"}
    assert convs == {"eve:0"} and {e.unit for e in events if e.op in ("MAX_POOL_2D", "SOFTMAX")} == {"dsp:0"}
    trace = chrome_trace(events)
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {"host (CPU, modeled)", "eve:0 (modeled)", "dsp:0 (modeled)"}
    assert len({e["tid"] for e in trace["traceEvents"] if e["ph"] == "X"}) == 3


def test_copies_between_cores_are_counted_and_the_plan_equals_the_device_count(am5729_run):
    d, it, events = am5729_run
    between = [e for e in events if e.kind == "copy"]
    # conv (EVE) → pool (DSP) → conv (EVE) → MEAN (DSP): three tensors change core
    assert len(between) == 3 and all(e.bytes > 0 and e.modeled_ms > 0 for e in between)
    plan = it.delegations[0][1].plans[0]
    (part,) = plan.partitions
    steps = schedule(plan, part, devices_of("am5729"))
    device = [e for e in events if e.lane == "device"]
    assert sum(e.modeled_ms for e in device) * 1000 == pytest.approx(part.est_us)
    assert sum(s.us for s in steps) == pytest.approx(part.est_us)
    assert d.device_us == pytest.approx(plan.estimate()["target_us"])          # one cost function
    slices = timeline(events)
    (wait,) = [s for s in slices if s.kind == "wait"]
    assert wait.dur_us == pytest.approx(part.est_us)
    # the standalone plan counts the same cores: partition() and a delegated run give one figure
    alone = partition(workbench.load(DIGITS), "am5729").partitions[0]
    assert alone.est_us == pytest.approx(part.est_us)
    one_device = partition_cost(load_target("am5729").cost, [node_macs(plan.graph, i) for i in part.nodes],
                                [plan.graph.nbytes(t) for t in part.runtime_inputs],
                                [plan.graph.nbytes(t) for t in part.outputs]).total_us
    assert alone.est_us != pytest.approx(one_device)      # the cores and their copies change the figure


def test_eve_only_dsp_only_and_both_are_modeled_and_printed(capsys):
    t = core_times(DIGITS, "am5729")
    rows = {label: total for label, _, _, total in t.rows}
    assert set(rows) == {"EVE only", "DSP only", "EVE + DSP"} and all(v > 0 for v in rows.values())
    # the digits CNN changes core three times with both: the copies cost more than the DSP's convolutions save
    assert rows["EVE + DSP"] > rows["EVE only"]
    assert main([str(DIGITS)]) == 0
    out = capsys.readouterr().out
    assert "EVE + DSP" in out and "published ms" in out and "modeled" in out
    with pytest.raises(TargetError, match="lists no devices"):
        core_times(DIGITS, "tidl")
