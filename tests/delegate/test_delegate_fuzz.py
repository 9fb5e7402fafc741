"""Mutated models through delegated runs raise only workbench errors.

The interpreter fuzzer's cases (tests/interpreter/test_interpreter_fuzz.py: model-level and byte-level mutations
of small built and sample models) are run again with a simulated accelerator applied in the
constructor, for two targets: whatever the mutation, only a WorkbenchError may escape — from the
partitioner, the delegate's prepare, the device kernel or the partition's own interpreter — and no case
may hang.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import interpreter_fuzz_cases as F
from workbench.delegate import SimulatedAccelerator
from workbench.errors import WorkbenchError
from workbench.interpreter import Interpreter

SEEDS = 80          # per base, per kind (model-level, byte-level)


def _device_bytes(it) -> int:
    """Tensor memory of the partitions' own interpreters (the device's), which the host's plan leaves out."""
    total = 0
    for _, _, _, data in it._sg(0).prepared:
        inner = getattr(getattr(data, "data", None), "inner", None)
        if inner is not None and inner.arena_plan is not None:
            total += inner.arena_plan.size
    return total


def _exercise_delegated(target):
    def exercise(case) -> str:
        kind, payload, seed = case
        try:
            d = SimulatedAccelerator(target)
            if kind == "object":
                it = Interpreter(model=payload, max_while_iterations=F.MAX_WHILE, experimental_delegates=[d])
            else:
                it = Interpreter(model_content=payload, max_while_iterations=F.MAX_WHILE, experimental_delegates=[d])
            it.allocate_tensors()
            if it.arena_plan.size + _device_bytes(it) > F.MAX_ARENA_BYTES:
                return "skipped"         # big, not wrong (as the plain fuzzer skips them)
            rng = np.random.default_rng(seed)
            for det in it.get_input_details():
                shape = tuple(int(x) for x in det["shape"])
                if det["dtype"] is np.object_ or np.prod(shape, dtype=np.float64) > F.MAX_INPUT_ELEMENTS:
                    return "skipped"
                it.set_tensor(det["index"], F._random_value(rng, shape, det["dtype"]))
            it.invoke()
            for det in it.get_output_details():
                it.get_tensor(det["index"])
            return "ran" if any(p.lane == "device" for p in it.placements()) else "ran-on-cpu"
        except WorkbenchError:
            return "rejected"
    return exercise


@pytest.mark.parametrize("target", ["xnnpack", "tidl"])
def test_mutated_models_through_a_delegate_raise_only_workbench_errors(monkeypatch, target):
    monkeypatch.setattr(F, "exercise", _exercise_delegated(target))
    outcomes: dict = {}
    failures = []
    for name in F.CASES:
        for kind in ("model", "bytes"):
            for seed in range(SEEDS):
                outcome, exc, tb, how = F.run_one(name, kind, seed)
                if exc is not None:
                    failures.append((name, kind, seed, how, exc, tb))
                else:
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert not failures, F._format(failures)
    assert outcomes.get("ran", 0) and outcomes.get("rejected", 0), outcomes
