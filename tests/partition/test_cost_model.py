"""The cost model's rules (partition/cost.py) on hand-made numbers, the published timings it is checked
against (benchmarks/data/published_timings.json) and the committed check (benchmarks/results/
cost_model_check.json)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from helpers.builders import add_fc_model
from workbench.partition import GraphView, TargetError, load_target, node_macs, parse_target
from workbench.partition.cost import NodeWork, device_node_us, op_kind, partition_cost, transfer_us

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data" / "published_timings.json"
CHECK = ROOT / "benchmarks" / "results" / "cost_model_check.json"

OLD = {"macs_per_cycle": 2, "clock_mhz": 5, "bandwidth_mb_s": 4, "op_overhead_us": 3, "transfer_overhead_us": 10}
NEW = {**OLD, "conv_efficiency": 0.5, "depthwise_efficiency": 0.25, "other_efficiency": 0.8,
       "memory_bandwidth_mb_s": 100}


def test_compute_runs_at_the_efficiency_of_the_ops_kind():
    # 10 MACs per µs at the peak; 1000 MACs
    assert device_node_us(NEW, 1000, op="CONV_2D") == 1000 / (10 * 0.5) + 3
    assert device_node_us(NEW, 1000, op="FULLY_CONNECTED") == 1000 / (10 * 0.5) + 3
    assert device_node_us(NEW, 1000, op="DEPTHWISE_CONV_2D") == 1000 / (10 * 0.25) + 3
    assert device_node_us(NEW, 1000, op="ADD") == 1000 / (10 * 0.8) + 3
    assert [op_kind(o) for o in ("CONV_2D", "DEPTHWISE_CONV_2D", "MEAN", None)] == ["conv", "depthwise", "other",
                                                                                     "other"]


def test_a_node_takes_the_slower_of_compute_and_memory_plus_its_overhead():
    # compute 1000 / 5 = 200 µs; memory (in + out + weights) / 100 bytes per µs
    assert device_node_us(NEW, 1000, op="CONV_2D", in_bytes=4000, out_bytes=4000, weight_bytes=2000) == 200 + 3
    assert device_node_us(NEW, 1000, op="CONV_2D", in_bytes=20000, out_bytes=4000, weight_bytes=6000) == 300 + 3
    assert device_node_us(NEW, 0, op="RESHAPE", in_bytes=500, out_bytes=500) == 10 + 3


def test_without_the_new_figures_a_node_costs_what_the_first_model_said():
    for macs, op, nbytes in ((0, "RESHAPE", 10**6), (1234, "CONV_2D", 10**9), (77, "DEPTHWISE_CONV_2D", 5)):
        old = macs / (OLD["macs_per_cycle"] * OLD["clock_mhz"]) + OLD["op_overhead_us"]
        assert device_node_us(OLD, macs, op=op, in_bytes=nbytes, out_bytes=nbytes, weight_bytes=nbytes) == old
        assert device_node_us(OLD, NodeWork(macs, op, nbytes, nbytes, nbytes)) == old
    c = partition_cost(OLD, [NodeWork(40, "CONV_2D", 9, 9, 9), 60], [8], [16])
    assert (c.compute_us, c.overhead_us, c.copy_in_us, c.copy_out_us) == (10.0, 6.0, 12.0, 14.0)


def test_node_work_carries_what_the_model_reads_and_the_partition_sums_the_nodes():
    w = NodeWork(1000, "CONV_2D", in_bytes=20000, out_bytes=4000, weight_bytes=6000)
    assert w == 1000 and w + 1 == 1001 and (w.op, w.in_bytes, w.out_bytes, w.weight_bytes) == ("CONV_2D", 20000,
                                                                                               4000, 6000)
    assert device_node_us(NEW, w) == device_node_us(NEW, 1000, op="CONV_2D", in_bytes=20000, out_bytes=4000,
                                                    weight_bytes=6000)
    d = NodeWork(1000, "DEPTHWISE_CONV_2D")
    c = partition_cost(NEW, [w, d], [8], [16], streamed_bytes=40)
    assert c.total_us == pytest.approx(device_node_us(NEW, w) + device_node_us(NEW, d) + transfer_us(NEW, 8)
                                       + transfer_us(NEW, 16) + 40 / NEW["bandwidth_mb_s"])
    assert c.streamed_us == 10.0                       # weights beyond the device's memory: over the host link


def test_node_macs_reports_the_op_and_its_activation_and_weight_bytes():
    g = GraphView(add_fc_model())
    add, fc = node_macs(g, 0), node_macs(g, 1)
    assert (add.op, add.in_bytes, add.out_bytes, add.weight_bytes) == ("ADD", 16, 16, 16)     # x + constant c
    assert (fc.op, int(fc), fc.in_bytes, fc.out_bytes, fc.weight_bytes) == ("FULLY_CONNECTED", 12, 16, 12, 48 + 12)


def test_an_efficiency_of_zero_is_refused_with_a_typed_error():
    doc = {"name": "t", "description": "x", "ops": {"ADD": {}},
           "cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1, "conv_efficiency": 0}}
    with pytest.raises(TargetError, match="conv_efficiency"):
        parse_target(doc)


def test_every_published_timing_carries_its_source():
    rows = json.loads(DATA.read_text(encoding="utf-8"))["rows"]
    assert {r["vendor"] for r in rows} == {"Coral", "TI"} and len(rows) >= 40
    for r in rows:
        assert r["time_ms"] > 0 and r["network"] and r["column"]
        assert r["source"]["title"] and r["source"]["url"].startswith("https://") and r["source"]["table"], r


def test_the_committed_check_says_what_its_rows_give_and_the_targets_hold_its_figures():
    doc = json.loads(CHECK.read_text(encoding="utf-8"))
    goal = doc["goal"]
    for target, r in doc["results"].items():
        held = [row for row in r["rows"] if row["half"] == "held_out"]
        fit = [row for row in r["rows"] if row["half"] == "fit"]
        assert [row["network"] for row in held] == doc["splits"][target]["held_out"]
        assert not {row["network"] for row in held} & {row["network"] for row in fit}
        assert len(r["figures"]) <= 4
        median = statistics.median(abs(x["modeled_ms"] - x["published_ms"]) / x["published_ms"] for x in held)
        worst = max(max(x["modeled_ms"] / x["published_ms"], x["published_ms"] / x["modeled_ms"]) for x in held)
        assert r["held_out_median_error"] == pytest.approx(median, abs=1e-3)
        assert r["held_out_worst_ratio"] == pytest.approx(worst, abs=1e-3)
        assert r["goal_met"] == (median <= goal["held_out_median_error_max"]
                                 and worst <= goal["held_out_worst_ratio_max"])
        cost = load_target(target).cost
        for k, v in r["figures"].items():
            assert cost[k] == v, (target, k)


def test_the_committed_second_look_follows_its_declaration_and_the_dsp_holds_its_figures():
    doc = json.loads(CHECK.read_text(encoding="utf-8"))["second_look"]
    declared, results = doc["declared"], doc["results"]
    dsp = results["dsp"]
    assert [r["network"] for r in dsp["rows"] if r["half"] == "fit"] == declared["dsp"]["fit"]
    assert [r["network"] for r in dsp["rows"] if r["half"] == "held_out"] == declared["dsp"]["held_out"]
    assert sorted(dsp["figures"]) == sorted(declared["dsp"]["fitted"]) and len(dsp["figures"]) <= 4
    held = [r for r in dsp["rows"] if r["half"] == "held_out"]
    assert dsp["held_out_median_error"] == pytest.approx(statistics.median(r["error"] for r in held), abs=1e-3)
    for column in declared["sparse"]:                      # predicted with nothing fitted
        rows = results[column]
        assert rows and all(r["figures_of"] == declared["sparse"][column] for r in rows)
        for r in rows:
            assert r["ratio"] == pytest.approx(r["modeled_ms"] / r["published_ms"], abs=1e-3)
    over = load_target("am5729").devices["dsp"]["cost"]
    assert {k: over[k] for k in dsp["figures"]} == dsp["figures"]


def test_the_usb3_floor_is_the_streamed_weights_at_500_mb_per_s_and_flags_only_rows_below_it():
    doc = json.loads(CHECK.read_text(encoding="utf-8"))
    floor = doc["usb3_floor"]
    assert floor["payload_bytes_per_s"] == 500e6                  # 5 Gbit/s with 8b/10b coding: 4 Gbit/s
    rows = {r["network"]: r for r in doc["results"]["edgetpu"]["rows"]}
    mb = load_target("edgetpu").cost["memory_mb"] * 2**20
    for r in floor["rows"]:
        streamed = max(0.0, rows[r["network"]]["weight_bytes"] - mb)
        assert r["floor_ms"] == pytest.approx(streamed / 500e6 * 1000, abs=0.01)
        assert r["below_floor"] == (r["published_ms"] < r["floor_ms"])
    assert [r["network"] for r in floor["rows"] if r["below_floor"]] == ["Inception-ResNet V2 (299x299)"]


def test_two_ti_documents_on_the_same_network_are_compared_at_the_same_clock():
    doc = json.loads(CHECK.read_text(encoding="utf-8"))
    times = {(r["network"], r["device"]): r["time_ms"] for r in json.loads(DATA.read_text(encoding="utf-8"))["rows"]}
    rows = doc["same_network_two_ti_documents"]
    assert {r["network"] for r in rows} == {"JacintoNet11_v2", "JSegNet21", "SqueezeNet1.1"}
    for r in rows:
        scale = 535 / 650 if r["guide_device"].startswith("eve") else 1.0     # the guide's EVEs run at 535 MHz
        assert r["guide_ms"] == times[(r["network"], r["guide_device"])]
        assert r["ratio"] == pytest.approx(r["guide_ms"] * scale / times[(r["network"], r["sdk_device"])], abs=1e-3)
