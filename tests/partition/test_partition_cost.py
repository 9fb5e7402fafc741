"""The one cost model (partition/cost.py): estimates by part, device memory, the hard limit."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.builders import add_fc_model
from workbench import Interpreter
from workbench.delegate import SimulatedAccelerator
from workbench.partition import partition
from workbench.partition.cost import MB, device_node_us, partition_cost, transfer_us

COST = {"macs_per_cycle": 2, "clock_mhz": 1, "bandwidth_mb_s": 4, "op_overhead_us": 1, "transfer_overhead_us": 10}


def _target(tmp_path, **cost):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"name": "t", "description": "ADD and FC", "ops": {"ADD": {}, "FULLY_CONNECTED": {}},
                             "cost": {**COST, **cost}}))
    return str(f)


def test_a_partition_costs_the_sum_of_its_nodes_and_its_copies():
    c = partition_cost(COST, [4, 6], [8], [16, 4], streamed_bytes=40)
    assert (c.compute_us, c.overhead_us, c.copy_in_us, c.copy_out_us, c.streamed_us) == (5.0, 2.0, 12.0, 25.0, 10.0)
    assert c.total_us == 54.0
    assert c.total_us == (device_node_us(COST, 4) + device_node_us(COST, 6) + transfer_us(COST, 8)
                          + transfer_us(COST, 16) + transfer_us(COST, 4) + 40 / COST["bandwidth_mb_s"])


def test_weights_that_do_not_fit_are_streamed_and_cost_on_every_run(tmp_path):
    m = add_fc_model()
    roomy = partition(m, _target(tmp_path), "tflite").partitions[0]
    tight = partition(m, _target(tmp_path, memory_mb=20 / MB), "tflite").partitions[0]
    assert roomy.weights_bytes == tight.weights_bytes == (4 + 12 + 3) * 4       # c, W, b
    assert roomy.streamed_bytes == 0 and tight.streamed_bytes == roomy.weights_bytes - 20
    assert tight.est_us == pytest.approx(roomy.est_us + tight.streamed_bytes / COST["bandwidth_mb_s"])
    d = SimulatedAccelerator(_target(tmp_path, memory_mb=20 / MB))
    it = Interpreter(model=m, experimental_delegates=[d])
    it.allocate_tensors()
    it.invoke()
    assert d.device_us == pytest.approx(tight.est_us)
    assert [e.kind for e in it.steps() if e.lane == "device"].count("stream") == 1


def test_a_partition_over_the_hard_limit_is_refused_with_a_reason(tmp_path):
    plan = partition(add_fc_model(), _target(tmp_path, max_partition_mb=40 / MB), "tflite")
    assert plan.offloaded < 2
    refused = [p for p in plan.placements if p.code == "constraint"]
    assert refused and "of device memory" in refused[0].reason and "limit of" in refused[0].reason
    x = np.ones((1, 4), np.float32)
    a = Interpreter(model=add_fc_model(), experimental_delegates=[SimulatedAccelerator(
        _target(tmp_path, max_partition_mb=40 / MB))])
    b = Interpreter(model=add_fc_model())
    for it in (a, b):
        it.allocate_tensors()
        it.set_tensor(0, x)
        it.invoke()
    assert np.array_equal(a.get_tensor(5), b.get_tensor(5))
