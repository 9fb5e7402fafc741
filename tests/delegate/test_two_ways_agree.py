"""Runtime delegation and the compiled model agree, and in float precision both equal the CPU-only run.

For every corpus model the workbench runs and every shipped target: the delegate's placements equal
the partitioner's plan; the delegated interpreter, the compiled model of ``workbench partition -o``
(the paper's custom op) and the CPU-only interpreter give bit-identical outputs; and the plan's modeled
device time equals what the simulated device counted for one invoke (one cost function).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from helpers.random_inputs import random_inputs
from workbench import Interpreter, WorkbenchError, load
from workbench.delegate import SimulatedAccelerator
from workbench.interpreter.delegation import first_dynamic_tensor
from workbench.partition import compile as compile_plan
from workbench.partition import list_targets, partition

# every shipped target as a runtime delegate (TFLite's partitioning), and the two targets whose offline
# compilers cut otherwise, as compiled-mode delegates (the partitions `workbench partition -o` writes)
CASES = [(t, "tflite") for t in list_targets()] + [("tidl", "tidl"), ("edgetpu", "edgetpu")]


@lru_cache(maxsize=None)
def _model(path):
    return load(path)


def _feed(model, seed=7):
    return random_inputs(Interpreter(model=model).get_input_details(), seed)


def _run(it, xs, times=1):
    it.allocate_tensors()
    outs = []
    for _ in range(times):
        for d, x in zip(it.get_input_details(), xs):
            it.set_tensor(d["index"], x)
        it.invoke()
        outs.append([it.get_tensor(d["index"]).copy() for d in it.get_output_details()])
    return outs


def _same(a, b) -> bool:
    return all(x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")
               for ra, rb in zip(a, b) for x, y in zip(ra, rb))


@lru_cache(maxsize=None)
def _cpu_only(path):
    """(inputs, outputs of two invokes, whether the graph has dynamic-sized tensors) of the CPU-only run,
    once per model for every case; None for a model the CPU interpreter cannot run (Flex, an unregistered
    custom op, …)."""
    m = _model(path)
    xs = _feed(m)
    cpu = Interpreter(model=m)
    try:
        want = _run(cpu, xs, times=2)
    except WorkbenchError:
        return None
    return xs, want, first_dynamic_tensor(cpu._sg(0)) is not None


def _corpus(corpus_paths):
    return sorted(corpus_paths.items())


@pytest.mark.parametrize("target, strategy", CASES)
def test_delegated_compiled_and_cpu_only_runs_are_identical(corpus_paths, target, strategy):
    checked = 0
    for name, path in _corpus(corpus_paths):
        m = _model(str(path))
        cpu = _cpu_only(str(path))
        if cpu is None:
            continue
        # a delegate needing static shapes is refused on a graph with dynamic-sized tensors (subgraph.cc
        # ModifyGraphWithDelegateImpl; tests/delegate/test_delegates_applied_as_litert.py): here it says it can
        xs, want, dynamic = cpu
        mode = "runtime" if strategy == "tflite" else "compiled"
        d = SimulatedAccelerator(target, strategy=strategy, mode=mode,
                                 **({"allow_dynamic_tensors": True} if dynamic else {}))
        it = Interpreter(model=m, experimental_delegates=[d])
        plan = partition(m, target, strategy)
        got = _run(it, xs, times=2)
        mine = it.placements() or [p for p in plan.placements if p.partition is None]
        assert [(p.node, p.partition) for p in mine] == [(p.node, p.partition) for p in plan.placements], name
        # the same reasons, but for a version refusal in the GPU delegate's words, and a variable that another
        # subgraph also names (the runtime delegate sees every subgraph; the plan only subgraph 0)
        for a, b in zip(mine, plan.placements):
            assert (a.reason == b.reason or "Max version supported" in a.reason
                    or "is also used by subgraph" in a.reason), (name, a, b)
        assert _same(want, got), f"{name}: delegated run differs from the CPU-only run"
        if plan.partitions:
            compiled = _run(Interpreter(model=compile_plan(plan)), xs, times=2)
            assert _same(want, compiled), f"{name}: compiled model differs from the CPU-only run"
            # the delegate's own plan: a delegate that needs static shapes sees the shapes the graph was
            # prepared for (subgraph.cc ModifyGraphWithDelegateImpl prepares first), which differ from the
            # file's placeholders where a signature has -1 (star_trek_activation_phrase_v2)
            one = it.delegations[0][1].plans[0].estimate()["target_us"]
            on_main = sum(s.device_us for s in d.stats.values())          # subgraph 0, as the plan
            assert on_main == pytest.approx(2 * one), f"{name}: modeled device time ≠ plan estimate"
        checked += 1
    assert checked >= 20
