"""Delegation inside IF / WHILE bodies, subgraph by subgraph, and over a sequence of invokes with state.

Runtime delegation looks at every subgraph: the nodes of a branch or a loop body are partitioned there
and run on the device each time the body runs.  In float precision every output equals the CPU-only
run's; with resource variables, over a whole sequence of invokes.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.control_flow_models import if_model as cf_if_model
from helpers.control_flow_models import while_static_model
from helpers.partition_models import VAR_OPS, make_target, stateful_model
from workbench import Interpreter
from workbench.delegate import SimulatedAccelerator
from workbench.schema import BuiltinOperator as B


def _sequence(it, steps):
    it.allocate_tensors()
    out = []
    for inputs in steps:
        for d, x in zip(it.get_input_details(), inputs):
            it.set_tensor(d["index"], x)
        it.invoke()
        out.append([it.get_tensor(d["index"]).copy() for d in it.get_output_details()])
    return out


def _delegated_subgraphs(it):
    return {s for s, sg in it._subgraphs.items() if any(sg.nodes[i].op == B.DELEGATE for i in sg.execution_plan)}


def test_a_while_body_is_delegated_and_runs_on_the_device_every_iteration():
    m = while_static_model()
    rng = np.random.default_rng(1)
    cpu = Interpreter(model=m)
    cpu.allocate_tensors()
    steps = [[np.asarray(v, d["dtype"]).reshape(d["shape"]) for d, v in
              zip(cpu.get_input_details(), (5, rng.uniform(-1, 1, 4)))] for _ in range(3)]
    d = SimulatedAccelerator("xnnpack")
    it = Interpreter(model=m, experimental_delegates=[d])
    assert _delegated_subgraphs(it) - {0}, it.delegate_log       # a body got a DELEGATE node
    want, got = _sequence(Interpreter(model=m), steps), _sequence(it, steps)
    assert all(np.array_equal(a, b) for ra, rb in zip(want, got) for a, b in zip(ra, rb))
    body = [s for (s, _), st in d.device.stats.items() if s != 0]
    assert body and all(d.device.stats[(s, 0)].invocations >= 3 * 5 for s in body)


@pytest.mark.parametrize("flag", [True, False])
def test_if_branches_are_delegated_subgraph_by_subgraph(flag):
    m = cf_if_model()
    cpu = Interpreter(model=m)
    cpu.allocate_tensors()
    rng = np.random.default_rng(2)
    steps = [[np.asarray(flag if d["dtype"] == np.bool_ else rng.uniform(-1, 1, d["shape"]), d["dtype"])
              .reshape(d["shape"]) for d in cpu.get_input_details()] for _ in range(2)]
    it = Interpreter(model=m, experimental_delegates=[SimulatedAccelerator("xnnpack")])
    assert {1, 2} <= _delegated_subgraphs(it)
    want, got = _sequence(Interpreter(model=m), steps), _sequence(it, steps)
    assert all(np.array_equal(a, b) for ra, rb in zip(want, got) for a, b in zip(ra, rb))


@pytest.mark.parametrize("variables", ["shared", "private"])
def test_state_carries_across_a_sequence_of_invokes(tmp_path, variables):
    t = make_target(tmp_path, variables, {"ADD": {}, "CALL_ONCE": {}, **VAR_OPS}, variables=variables)
    m = stateful_model(split=True)
    steps = [[np.full((1, 4), k, np.float32)] for k in range(5)]
    d = SimulatedAccelerator(t)
    it = Interpreter(model=m, experimental_delegates=[d])
    assert any(p.lane == "device" for p in it.placements())
    want, got = _sequence(Interpreter(model=m), steps), _sequence(it, steps)
    assert all(np.array_equal(a, b) for ra, rb in zip(want, got) for a, b in zip(ra, rb))
    assert len({tuple(r[0].ravel()) for r in got}) == 5        # the state moved every time
