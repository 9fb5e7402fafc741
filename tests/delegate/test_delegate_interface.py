"""The delegate interface and the toy SimulatedAccelerator (ARCHITECTURE "Partition and delegate")."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from workbench import Interpreter, load
from workbench.delegate import RESTORED, Delegate, DelegateError, NodeSignature, SimulatedAccelerator, apply
from workbench.partition import partition
from workbench.schema import BuiltinOperator as B
from workbench.schema import DepthwiseConv2DOptions, ModelBuilder


@lru_cache(maxsize=None)
def _model(path):
    return load(path)


def _inputs(model):
    it = Interpreter(model=model)
    rng = np.random.default_rng(3)
    return [rng.uniform(-1, 1, size=d["shape"]).astype(d["dtype"]) for d in it.get_input_details()]


def _run(it, inputs):
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]).copy() for d in it.get_output_details()]


def depthwise_model(version=2):
    b = ModelBuilder()
    x = b.input("x", [1, 8, 8, 3])
    w = b.constant("w", np.ones((1, 3, 3, 3), np.float32))
    y = b.tensor("y", [1, 8, 8, 3])
    b.op(B.DEPTHWISE_CONV_2D, [x, w, -1], [y], DepthwiseConv2DOptions(stride_w=1, stride_h=1, dilation_w_factor=2,
                                                                    dilation_h_factor=2), version=version)
    z = b.tensor("z", [1, 8, 8, 3])
    b.op(B.RELU, [y], [z])
    b.output(z)
    return b.build()


@pytest.mark.parametrize("target", ["tidl", "xnnpack", "edgetpu"])
def test_it_claims_what_the_target_supports_with_the_exact_reasons(corpus_paths, target):
    for name, path in sorted(corpus_paths.items()):
        m = _model(str(path))
        mine = SimulatedAccelerator(target).prepare(m)
        ref = partition(m, target, "tflite")
        assert mine.placements == ref.placements, name
        assert mine.partitions == ref.partitions, name


def test_prepare_refuses_a_newer_op_version_with_the_gpu_delegate_words():
    m = depthwise_model(version=2)
    d = SimulatedAccelerator("xnnpack", max_versions={"DEPTHWISE_CONV_2D": 1})
    plan = d.prepare(m)
    assert plan.placements[0].reason == "DEPTHWISE_CONV_2D: Max version supported: 1. Requested version 2."
    assert plan.placements[1].on_target
    assert d.log[-1] == "simulated-xnnpack delegate: 1 nodes delegated out of 2 nodes with 1 partitions."
    # -1 = no limit (the newest CheckMaxSupportedOpVersion); the version it knows is enough
    assert SimulatedAccelerator("xnnpack", max_versions={"DEPTHWISE_CONV_2D": -1}).prepare(m).offloaded == 2
    assert SimulatedAccelerator("xnnpack", max_versions={"DEPTHWISE_CONV_2D": 2}).prepare(m).offloaded == 2


def test_the_target_max_version_is_the_delegate_version_limit(corpus_paths):
    # old-delegate knows every op at version 1 only: the same nodes stay on the CPU as with the target's
    # own check, but with the GPU delegate's message
    for name, path in sorted(corpus_paths.items()):
        m = _model(str(path))
        mine = SimulatedAccelerator("old-delegate").prepare(m)
        ref = partition(m, "old-delegate", "tflite")
        assert [p.partition for p in mine.placements] == [p.partition for p in ref.placements], name
        for a, b in zip(mine.placements, ref.placements):
            if b.reason.startswith(f"{b.op} v"):
                assert a.reason == f"{a.op}: Max version supported: 1. Requested version {a.version}.", name
            else:
                assert a.reason == b.reason


@pytest.mark.parametrize("name", ["hand_recrop", "selfie_segmentation", "sine_float"])
def test_partitions_run_on_the_cpu_bit_exact_and_count_device_time(corpus_paths, name):
    m = _model(str(corpus_paths[name]))
    d = SimulatedAccelerator("tidl")
    x = _inputs(m)
    want = _run(Interpreter(model=m), x)
    it = d.interpreter(m)
    got = _run(it, x)
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    delegated = [n for n in it.nodes if n.index in it.execution_plan() and n.op == B.DELEGATE]
    assert delegated and {n.op_name for n in delegated} == {d.name}
    one = sum(s.est_us for s in d.stats.values())
    assert d.invocations == 1 and d.device_us == pytest.approx(one)
    it.invoke()
    assert d.invocations == 2 and d.device_us == pytest.approx(2 * one)
    assert all(s.invocations == 2 for s in d.stats.values())
    d.reset_stats()
    assert d.device_us == 0


def test_failing_on_purpose_in_prepare_restores_the_original_plan(corpus_paths):
    m = _model(str(corpus_paths["hand_recrop"]))
    d = SimulatedAccelerator("tidl", fail="prepare")
    with pytest.raises(DelegateError, match="failing on purpose in prepare"):
        d.prepare(m)
    with pytest.raises(RuntimeError, match="failing on purpose in prepare") as err:
        Interpreter(model=m, experimental_delegates=[d])
    assert str(err.value).endswith(RESTORED)            # as LiteRT's constructor says it
    d.fallback_to_cpu = True                           # the teaching aid: keep going on the CPU
    it, plan = apply(d, m)
    assert plan is None and it.delegate_log[-2] == RESTORED and it.execution_plan() == list(range(len(it.nodes)))
    assert "LiteRT raises a RuntimeError here" in it.delegate_log[-1]     # the aid says what LiteRT does
    x = _inputs(m)
    assert all(np.array_equal(a, b) for a, b in zip(_run(it, x), _run(Interpreter(model=m), x)))
    assert SimulatedAccelerator("tidl").prepare(m).offloaded > 0
    it, plan = apply(SimulatedAccelerator("tidl"), m)
    assert plan is not None and plan.plans[0].partitions and plan.nodes[0]


def test_failing_on_purpose_in_invoke(corpus_paths):
    m = _model(str(corpus_paths["sine_float"]))
    d = SimulatedAccelerator("tidl", fail="invoke")
    it = d.interpreter(m)
    with pytest.raises(DelegateError, match="failing on purpose in invoke") as err:
        it.allocate_tensors()
        it.invoke()
    assert isinstance(err.value, RuntimeError)
    node = it.delegations[0][1].nodes[0][0]
    assert f"Node number {node} (simulated-tidl) failed to invoke." in str(err.value)


def test_failing_on_purpose_in_init_fails_the_constructor(corpus_paths):
    # tflite/core/subgraph.cc ReplaceNodeSubsetsWithDelegateKernels → AddNodeWithParameters runs the kernel's
    # init as the DELEGATE node is added, inside the constructor's ModifyGraphWithDelegate; a failure there
    # removes the delegate (RemoveAllDelegates) and the constructor raises
    m = _model(str(corpus_paths["sine_float"]))
    with pytest.raises(DelegateError, match="failing on purpose in init") as err:
        SimulatedAccelerator("tidl", fail="init").interpreter(m)
    n = len(m.subgraphs[0].operators)
    assert f"Node number {n} (simulated-tidl) failed to prepare.\n{RESTORED}" in str(err.value)


def test_bad_fail_point_and_the_abstract_base():
    with pytest.raises(ValueError, match="fail must be one of prepare, init, invoke"):
        SimulatedAccelerator("tidl", fail="sometimes")
    m = depthwise_model()
    g_sig = NodeSignature(partition(m, "xnnpack").graph, 0)
    assert (g_sig.name, g_sig.version, g_sig.is_custom) == ("DEPTHWISE_CONV_2D", 2, False)
    with pytest.raises(NotImplementedError):
        Delegate().supports(g_sig)


def test_a_delegate_of_ones_own():
    """A subclass needs supports, create_kernel and a target (for cost figures) — nothing else."""

    class ReluOnly(SimulatedAccelerator):
        name = "relu-only"

        def supports(self, sig):
            return None if sig.name == "RELU" else f"{sig.name}: I only do RELU"

    d = ReluOnly("xnnpack", name="relu-only")
    plan = d.prepare(depthwise_model())
    assert plan.placements[0].reason == "DEPTHWISE_CONV_2D: I only do RELU"
    assert [p.nodes for p in plan.partitions] == [(1,)]
    x = _inputs(depthwise_model())
    want = _run(Interpreter(model=depthwise_model()), x)
    got = _run(d.interpreter(depthwise_model()), x)
    assert np.array_equal(want[0], got[0]) and d.invocations == 1
