"""Delegates applied in LiteRT's steps: chained delegates, init and prepare in the constructor, the
static-shape flag, and a resize undoing and redoing the delegates.

Each test names the LiteRT function it follows (``tflite/core/subgraph.cc``, ``tflite/core/interpreter.cc``
in google-ai-edge/LiteRT).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from helpers.random_inputs import random_inputs
from workbench import Interpreter, WorkbenchError, corpus, load
from workbench.delegate import RESTORED, Delegate, SimulatedAccelerator, load_delegate
from workbench.delegate.device import DeviceKernel
from workbench.errors import DelegateError
from workbench.interpreter.delegation import STATIC_ONLY, first_dynamic_tensor

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


@lru_cache(maxsize=None)
def _model(path):
    return load(path)


def _inputs(it, seed=3):
    return random_inputs(it.get_input_details(), seed)


def _run(it, xs, times=1):
    if not it._sg(0).allocated:
        it.allocate_tensors()
    outs = []
    for _ in range(times):
        for d, x in zip(it.get_input_details(), xs):
            it.set_tensor(d["index"], x)
        it.invoke()
        outs.append([it.get_tensor(d["index"]).copy() for d in it.get_output_details()])
    return outs


def _close(a, b) -> bool:
    return all(x.dtype == y.dtype and x.shape == y.shape and np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True)
               for ra, rb in zip(a, b) for x, y in zip(ra, rb))


# -- 1. chaining -----------------------------------------------------------------------------------------------

def test_a_second_delegate_sees_the_current_plan_with_the_first_ones_node():
    # tflite/core/interpreter.cc ModifyGraphWithDelegateImpl applies each delegate to the graph the one before
    # left; the delegate reads the current plan (subgraph.cc GetExecutionPlan) and ReplaceNodeSubsetsWithDelegate-
    # Kernels logs "Replacing <nodes_to_replace> out of <execution_plan_.size()> node(s)"
    m = _model(str(SAMPLES / "digits_cnn_float.tflite"))
    a, b = load_delegate("tidl", {"deny": "0,1,4"}), load_delegate("xnnpack")   # 4: the MEAN, which tidl takes
    it = Interpreter(model=m, experimental_delegates=[a, b])
    assert it.delegate_log == [
        "Replacing 4 out of 7 node(s) with delegate (simulated-tidl) node, yielding 4 partitions for subgraph 0 "
        "(main).",
        "Replacing 3 out of 5 node(s) with delegate (simulated-xnnpack) node, yielding 4 partitions for subgraph 0 "
        "(main)."]
    plan = it.plan_nodes()
    assert [n.op_name for n in plan] == ["simulated-xnnpack", "simulated-tidl", "simulated-xnnpack", "simulated-tidl"]
    assert b.log[-2] == "simulated-xnnpack delegate: 3 nodes delegated out of 5 nodes with 2 partitions."
    # the nodes the first delegate took stay out of the second one's partitions, with the reason
    mine = it.delegations[1][1].plans[0].placements
    assert [p.node for p in mine if p.partition is None] == [2, 3, 5, 6]
    assert all(p.code == "delegated" and "simulated-tidl" in p.reason for p in mine if p.partition is None)
    xs = _inputs(it)
    assert _close(_run(Interpreter(model=m), xs), _run(it, xs))


def test_a_node_of_another_delegate_is_not_taken_by_a_delegate_that_takes_everything():
    m = _model(str(SAMPLES / "digits_cnn_float.tflite"))

    class Everything(Delegate):
        name = "everything"

        def supports(self, sig):
            return None

    it = Interpreter(model=m, experimental_delegates=[SimulatedAccelerator("tidl", deny=(4,)), Everything()])
    ops = [n.op_name for n in it.plan_nodes()]
    assert ops.count("simulated-tidl") == 2 and ops.count("everything") == 1 and len(ops) == 3
    xs = _inputs(it)
    assert _close(_run(Interpreter(model=m), xs), _run(it, xs))


def _needs_resize(name):
    return name in corpus.INPUT_SHAPES


def _chain(m, name, first, second):
    """The two delegates on ``m``: through the constructor, or — for a model whose stored input shape cannot
    be prepared — resized first and then ModifyGraphWithDelegate, as a C++ program would do."""
    if not _needs_resize(name):
        return Interpreter(model=m, experimental_delegates=[first, second])
    it = Interpreter(model=m)
    for d, shape in zip(it.get_input_details(), corpus.INPUT_SHAPES[name]):
        it.resize_tensor_input(d["index"], list(shape))
    it.allocate_tensors()
    it.modify_graph_with_delegate(first)
    it.modify_graph_with_delegate(second)
    return it


@pytest.mark.slow
def test_tidl_then_xnnpack_on_every_corpus_model(corpus_paths):
    checked = refused = 0
    for name, path in sorted(corpus_paths.items()):
        m = _model(str(path))
        cpu = Interpreter(model=m)
        for d, shape in zip(cpu.get_input_details(), corpus.INPUT_SHAPES.get(name, ())):
            cpu.resize_tensor_input(d["index"], list(shape))
        try:
            cpu.allocate_tensors()
        except WorkbenchError:
            continue                 # a model the CPU interpreter cannot run (an unregistered custom op …)
        xs = _inputs(cpu)
        times = 3 if name in corpus.STATEFUL else 1
        want = _run(cpu, xs, times)
        dynamic = first_dynamic_tensor(cpu._sg(0))
        tidl = SimulatedAccelerator("tidl")
        if dynamic is not None:
            # subgraph.cc ModifyGraphWithDelegateImpl step 1: a static-only delegate is refused
            with pytest.raises(DelegateError, match="only supports static-sized tensors") as err:
                _chain(m, name, tidl, SimulatedAccelerator("xnnpack"))
            assert str(err.value) == STATIC_ONLY.format(dynamic), name
            refused += 1
            tidl = SimulatedAccelerator("tidl", allow_dynamic_tensors=True)
        it = _chain(m, name, tidl, SimulatedAccelerator("xnnpack"))
        assert _close(want, _run(it, xs, times)), f"{name}: tidl + xnnpack differ from the CPU-only run"
        # the log lines count the plan each delegate saw: the original nodes, then what tidl left
        sg_name = m.subgraphs[0].name or ""
        lines = {line.split("delegate (")[1].split(")")[0]: line for line in it.delegate_log
                 if line.startswith("Replacing") and line.endswith(f"for subgraph 0 ({sg_name}).")}
        if "simulated-tidl" in lines:
            assert int(lines["simulated-tidl"].split()[4]) == len(m.subgraphs[0].operators), name
        if "simulated-xnnpack" in lines:
            taken, seen = int(lines["simulated-xnnpack"].split()[1]), int(lines["simulated-xnnpack"].split()[4])
            parts = len(it.delegations[1][1].plans[0].partitions)
            assert seen == len(it.execution_plan()) + taken - parts, name
        checked += 1
    assert checked >= 45 and refused >= 1


# -- 2. init and prepare in the constructor ---------------------------------------------------------------

class _Counting(DeviceKernel):
    calls: list = []

    def init(self, context, node):
        self.calls.append(("init", node.index))

    def prepare(self, context, node):
        self.calls.append(("prepare", node.index))
        return super().prepare(context, node)


class _CountingDelegate(SimulatedAccelerator):
    def create_kernel(self, partition):
        return _Counting(self, partition)


@pytest.mark.parametrize("dynamic", [False, True])
def test_init_runs_as_the_node_is_added_and_a_static_delegate_prepares_in_the_constructor(dynamic):
    # subgraph.cc AddNodeWithParameters calls init; ModifyGraphWithDelegateImpl step 3 (no
    # kTfLiteDelegateFlagsAllowDynamicTensors) calls EnsureMemoryAllocations, and AllocateTensors then returns
    # early; with the flag, prepare waits for AllocateTensors
    m = _model(str(SAMPLES / "digits_cnn_float.tflite"))
    _Counting.calls = []
    it = Interpreter(model=m, experimental_delegates=[_CountingDelegate("tidl", allow_dynamic_tensors=dynamic)])
    node = it.delegations[0][1].nodes[0][0]
    assert ("init", node) in _Counting.calls
    assert (("prepare", node) in _Counting.calls) is not dynamic
    it.allocate_tensors()
    assert [c for c in _Counting.calls if c[0] == "prepare"].count(("prepare", node)) == 1
    assert [c for c in _Counting.calls if c[0] == "init"].count(("init", node)) == 1


def test_a_kernel_failing_in_prepare_fails_the_constructor_and_removes_every_delegate():
    # subgraph.cc ModifyGraphWithDelegateImpl: reset_delegation_if_not_ok(EnsureMemoryAllocations()) →
    # RemoveAllDelegates (interpreter.cc RemoveAllDelegates: every subgraph, every delegate) and
    # "Restored original execution plan after delegate application failure."
    m = _model(str(SAMPLES / "digits_cnn_float.tflite"))

    class Broken(DeviceKernel):
        def prepare(self, context, node):
            raise RuntimeError("no device memory")

    class BrokenDelegate(SimulatedAccelerator):
        def create_kernel(self, partition):
            return Broken(self, partition)

    first = SimulatedAccelerator("tidl", deny=(5, 6))
    with pytest.raises(DelegateError) as err:
        Interpreter(model=m, experimental_delegates=[first, BrokenDelegate("tidl", name="broken")])
    n = len(m.subgraphs[0].operators)
    assert str(err.value).endswith(f"no device memory\nNode number {n + 1} (broken) failed to prepare.\n{RESTORED}")
    # the teaching aid: the same, but it goes on with the ORIGINAL plan (the first delegate removed too)
    it = Interpreter(model=m, experimental_delegates=[SimulatedAccelerator("tidl", deny=(5, 6)),
                                                      BrokenDelegate("tidl", name="broken", fallback_to_cpu=True)])
    assert it.execution_plan() == list(range(n)) and it.placements() == []
    assert [r for _, r in it.delegations] == [None, None]
    assert it.delegate_log[-2] == RESTORED and "LiteRT raises a RuntimeError here" in it.delegate_log[-1]
    xs = _inputs(it)
    assert _close(_run(Interpreter(model=m), xs), _run(it, xs))


# -- 3. the static-shape flag ----------------------------------------------------------------------------------

def test_a_delegate_without_the_dynamic_flag_is_refused_on_a_graph_with_dynamic_tensors():
    # subgraph.cc ModifyGraphWithDelegateImpl step 1: PrepareOpsStartingAt, then, with has_dynamic_tensors_,
    # "Attempting to use a delegate that only supports static-sized tensors …" and kTfLiteApplicationError
    m = _model(str(SAMPLES / "gru_tiny_float.tflite"))
    cpu = Interpreter(model=m)
    cpu.allocate_tensors()
    t = first_dynamic_tensor(cpu._sg(0))
    assert t is not None
    with pytest.raises(DelegateError) as err:
        Interpreter(model=m, experimental_delegates=[SimulatedAccelerator("tidl")])
    assert str(err.value) == (f"Attempting to use a delegate that only supports static-sized tensors with a graph "
                              f"that has dynamic-sized tensors (tensor#{t} is a dynamic-sized tensor).")
    assert Delegate.allow_dynamic_tensors is False and SimulatedAccelerator("tidl").allow_dynamic_tensors is False
    # xnnpack_delegate.cc GetXNNPackDelegateFlags: the flag is set (subgraph reshaping is on by default)
    assert SimulatedAccelerator("xnnpack").allow_dynamic_tensors is True
    for d in (SimulatedAccelerator("xnnpack"), load_delegate("tidl", {"allow_dynamic_tensors": "true"})):
        it = Interpreter(model=m, experimental_delegates=[d])
        xs = _inputs(it)
        assert _close(_run(Interpreter(model=m), xs), _run(it, xs))


def test_a_read_variable_of_known_shape_is_not_a_dynamic_tensor_as_in_litert():
    # tflite/kernels/read_variable.cc Prepare marks only a rank-0 output dynamic
    m = _model(str(SAMPLES / "resource_variable.tflite"))
    cpu = Interpreter(model=m)
    cpu.allocate_tensors()
    assert cpu._sg(0).context.dynamic and first_dynamic_tensor(cpu._sg(0)) is None
    Interpreter(model=m, experimental_delegates=[SimulatedAccelerator("tidl")])


# -- 4. resize: undo, then redo ------------------------------------------------------------------------------------

def _batch_run(m, batch, target="tidl"):
    d = SimulatedAccelerator(target)
    it = Interpreter(model=m, experimental_delegates=[d])
    inp = it.get_input_details()[0]
    shape = [batch] + [int(x) for x in inp["shape"][1:]]
    if batch != 1:
        it.resize_tensor_input(inp["index"], shape)
        assert it.execution_plan() == list(range(len(m.subgraphs[0].operators)))     # undone
    it.allocate_tensors()
    x = np.random.default_rng(5).uniform(-1, 1, shape).astype(np.float32)
    it.set_tensor(inp["index"], x)
    it.invoke()
    out = it.get_tensor(it.get_output_details()[0]["index"])
    cpu = Interpreter(model=m)
    cpu.resize_tensor_input(inp["index"], shape)
    cpu.allocate_tensors()
    cpu.set_tensor(inp["index"], x)
    cpu.invoke()
    assert np.allclose(out, cpu.get_tensor(cpu.get_output_details()[0]["index"]), rtol=1e-5, atol=1e-6)
    return it, d


def test_a_resize_undoes_a_static_delegate_and_the_next_allocation_redoes_it_for_the_new_shape():
    # subgraph.cc ResizeInputTensor → UndoAllDelegates (the graph was immutable); AllocateTensors →
    # RedoAllDelegates → ModifyGraphWithDelegateImpl again, with the new shapes
    m = _model(str(SAMPLES / "audio_conv1d_float.tflite"))
    it1, d1 = _batch_run(m, 1)
    it3, d3 = _batch_run(m, 3)
    assert "Redoing 1 delegates." in it3.delegate_log and "Redoing 1 delegates." not in it1.delegate_log
    assert d3.device.bytes_moved == 3 * d1.device.bytes_moved
    plan1, plan3 = it1.delegations[0][1].plans[0], it3.delegations[0][1].plans[0]
    assert plan3.estimate()["target_us"] > plan1.estimate()["target_us"]
    assert d3.device_us == pytest.approx(plan3.estimate()["target_us"]) and d3.device_us > d1.device_us


def test_a_resize_keeps_a_delegate_that_allows_dynamic_tensors():
    # subgraph.cc ResizeInputTensor undoes delegates only when the graph is immutable
    m = _model(str(SAMPLES / "audio_conv1d_float.tflite"))
    d = SimulatedAccelerator("xnnpack")
    it = Interpreter(model=m, experimental_delegates=[d])
    plan = it.execution_plan()
    inp = it.get_input_details()[0]
    it.resize_tensor_input(inp["index"], [2] + [int(x) for x in inp["shape"][1:]])
    assert it.execution_plan() == plan
    it.allocate_tensors()
    assert it.execution_plan() == plan and "Redoing 1 delegates." not in it.delegate_log
