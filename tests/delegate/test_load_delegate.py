"""load_delegate and Interpreter(experimental_delegates=...), checked against what LiteRT 2.3 does."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.builders import add_fc_model
from workbench import Interpreter
from workbench.delegate import SimulatedAccelerator, load_delegate
from workbench.schema import BuiltinOperator as B


def _run(it, x):
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def test_load_delegate_takes_a_target_name_and_string_options():
    d = load_delegate("tidl", {"mode": "compiled", "strategy": "tidl", "max_partitions": "2", "min_nodes": 1,
                               "deny": "3,SOFTMAX", "max_versions": "CONV_2D:3", "fallback_to_cpu": "true",
                               "name": "am57"})
    assert isinstance(d, SimulatedAccelerator)
    assert (d.mode, d.strategy, d.max_partitions, d.min_nodes, d.deny, d.max_versions, d.fallback_to_cpu, d.name) == \
        ("compiled", "tidl", 2, 1, (3, "SOFTMAX"), {"CONV_2D": 3}, True, "am57")


def test_load_delegate_takes_a_target_file(tmp_path):
    f = tmp_path / "mine.json"
    f.write_text('{"name": "mine", "description": "relu only", "ops": {"RELU": {}}, '
                 '"cost": {"macs_per_cycle": 1, "clock_mhz": 1, "bandwidth_mb_s": 1, "op_overhead_us": 0, '
                 '"transfer_overhead_us": 0}}')
    assert load_delegate(str(f)).target.name == "mine"


@pytest.mark.parametrize("library, options, why", [
    ("no-such-target", None, "no-such-target"),
    ("tidl", {"colour": "red"}, "unknown option colour"),
    ("tidl", {"strategy": "best"}, "strategy='best'"),
    ("tidl", {"mode": "later"}, "mode='later'"),
    ("tidl", {"strategy": "tidl"}, "strategy 'tidl' is an offline compile"),
    ("tidl", {"max_partitions": "many"}, "expected an integer"),
    ("tidl", {"fallback_to_cpu": "perhaps"}, "expected true or false"),
    ("tidl", {"max_versions": "CONV_2D"}, "is not OP:N"),
])
def test_load_delegate_refuses_what_it_cannot_load_with_a_value_error(library, options, why):
    with pytest.raises(ValueError, match="Failed to load delegate from ") as err:
        load_delegate(library, options)
    assert why in str(err.value)


def test_the_constructor_applies_the_delegate_and_logs_litert_line():
    m = add_fc_model()
    d = load_delegate("xnnpack")
    it = Interpreter(model=m, experimental_delegates=[d])
    line = it.delegate_log[-1]
    assert line.startswith("Replacing ") and f"with delegate ({d.name}) node, yielding" in line
    assert line.endswith("for subgraph 0 (" + (m.subgraphs[0].name or "") + ").")
    plan = it.execution_plan()
    assert any(it.nodes[i].op == B.DELEGATE for i in plan)
    places = it.placements()
    assert len(places) == len(m.subgraphs[0].operators)
    assert {p.lane for p in places} <= {"cpu", "device"}
    x = np.random.default_rng(0).standard_normal(it.get_input_details()[0]["shape"]).astype(np.float32)
    assert np.array_equal(_run(it, x), _run(Interpreter(model=m), x))


def test_something_that_is_not_a_delegate_is_refused():
    with pytest.raises(ValueError, match="is not a delegate"):
        Interpreter(model=add_fc_model(), experimental_delegates=[object()])


def test_without_delegates_there_are_no_placements():
    it = Interpreter(model=add_fc_model())
    assert it.placements() == [] and it.delegate_log == [] and it.execution_plan() == list(range(len(it.nodes)))


def test_every_placement_has_a_reason_code_shared_by_plan_and_interpreter():
    from workbench.partition import REASON_CODES, partition

    m = add_fc_model()
    d = load_delegate("xnnpack", {"deny": "FULLY_CONNECTED"})
    it = Interpreter(model=m, experimental_delegates=[d])
    codes = {p.node: p.code for p in it.placements()}
    assert codes == {0: "offloaded", 1: "denied"}
    plan = partition(m, "xnnpack", "tflite", deny=["FULLY_CONNECTED"])
    assert [p.code for p in plan.placements] == ["offloaded", "denied"]
    assert plan.to_dict()["placements"][1]["code"] == "denied" and set(codes.values()) <= set(REASON_CODES)
    old = Interpreter(model=m, experimental_delegates=[load_delegate("xnnpack", {"max_versions": "ADD:0"})])
    assert old.placements()[0].code == "version" and "Max version supported: 0." in old.placements()[0].reason
