"""interpreter/delegation.py: ReplaceNodeSubsetsWithDelegateKernels, undoing a failed delegate, its errors."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from helpers.tiny_models import relu_chain
from workbench import Interpreter
from workbench.errors import DelegateError
from workbench.interpreter import Kernel, delegation


class _Relu(Kernel):
    """A delegate kernel that runs a whole subset of RELUs as one."""

    def prepare(self, context, node):
        context.set_output(node.outputs[0], context.shape(node.inputs[0]), context.dtype(node.inputs[0]))

    def invoke(self, context, node, data):
        t = context.tensors
        t[node.outputs[0]][...] = np.maximum(t[node.inputs[0]], 0)


def _subsets():
    return [SimpleNamespace(partition=False, nodes=[0], inputs=[0], outputs=[1]),
            SimpleNamespace(partition=True, nodes=[1, 2], inputs=[1], outputs=[3])]


def test_a_partition_subset_becomes_one_delegate_node_appended_to_the_nodes():
    it = Interpreter(model=relu_chain(3))
    sg = it._sg(0)
    added = delegation.replace_node_subsets(sg, _Relu(), "TEST_DELEGATE", _subsets())
    assert added == [3] and sg.execution_plan == [0, 3]
    node = sg.nodes[3]
    assert node.op_name == "TEST_DELEGATE" and node.params["nodes_to_replace"] == (1, 2)
    it.allocate_tensors()
    it.set_tensor(0, np.array([-1, 2, -3, 4], np.float32))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(3), [0, 2, 0, 4])


def test_restore_undoes_what_was_replaced_after_the_snapshot():
    it = Interpreter(model=relu_chain(3))
    sg = it._sg(0)
    snap = delegation.snapshot(sg)
    delegation.replace_node_subsets(sg, _Relu(), "TEST_DELEGATE", _subsets())
    delegation.restore(sg, snap)
    assert sg.execution_plan == [0, 1, 2] and len(sg.nodes) == 3 and sg.delegate_kernels == {}


def test_subsets_that_miss_a_node_of_the_plan_are_refused():
    sg = Interpreter(model=relu_chain(3))._sg(0)
    with pytest.raises(DelegateError, match="do not cover the execution plan of subgraph 0 exactly once"):
        delegation.replace_node_subsets(sg, _Relu(), "TEST_DELEGATE", _subsets()[1:])


def test_a_failing_delegate_kernel_is_reported_as_litert_reports_it():
    class Broken(_Relu):
        def invoke(self, context, node, data):
            raise ValueError("device lost")

    it = Interpreter(model=relu_chain(3))
    it.replace_node_subsets(Broken(), "TEST_DELEGATE", _subsets())
    it.allocate_tensors()
    with pytest.raises(DelegateError, match=r"device lost\nNode number 3 \(TEST_DELEGATE\) failed to invoke\."):
        it.invoke()


def test_modify_graph_with_delegate_restores_the_plan_when_the_delegate_fails():
    class Failing:
        def delegate_prepare(self, interpreter):
            interpreter.replace_node_subsets(_Relu(), "TEST_DELEGATE", _subsets())
            raise RuntimeError("no device")

    it = Interpreter(model=relu_chain(3))
    with pytest.raises(DelegateError, match=delegation.RESTORED):
        it.modify_graph_with_delegate(Failing())
    assert it.execution_plan() == [0, 1, 2] and len(it.nodes) == 3


class _Counted(_Relu):
    def __init__(self):
        self.calls = []

    def init(self, context, node):
        self.calls.append("init")
        return "user data"

    def prepare(self, context, node):
        self.calls.append("prepare")
        super().prepare(context, node)


def test_the_kernel_init_runs_when_the_delegate_node_is_added():
    # tflite/core/subgraph.cc ReplaceNodeSubsetsWithDelegateKernels → AddNodeWithParameters → OpInit
    it = Interpreter(model=relu_chain(3))
    kern = _Counted()
    added = it.replace_node_subsets(kern, "TEST_DELEGATE", _subsets())
    assert kern.calls == ["init"] and it._sg(0).delegate_init[added[0]] == "user data"
    it.allocate_tensors()
    assert kern.calls == ["init", "prepare"]             # allocation does not run init again


class _Applies:
    """A delegate object with only delegate_prepare (and the flag): it replaces nodes 1 and 2."""

    def __init__(self, dynamic=False):
        self.allow_dynamic_tensors = dynamic
        self.kernel = _Counted()

    def delegate_prepare(self, interpreter):
        interpreter.replace_node_subsets(self.kernel, "TEST_DELEGATE", _subsets())
        return "applied"


def test_a_static_delegate_is_prepared_when_applied_and_a_resize_undoes_and_redoes_it():
    # subgraph.cc ModifyGraphWithDelegateImpl (EnsureMemoryAllocations), ResizeInputTensor → UndoAllDelegates,
    # AllocateTensors → RedoAllDelegates
    d = _Applies()
    it = Interpreter(model=relu_chain(3), experimental_delegates=[d])
    assert d.kernel.calls == ["init", "prepare"] and it.execution_plan() == [0, 3]
    it.resize_tensor_input(0, [2, 4])
    assert it.execution_plan() == [0, 1, 2] and len(it.nodes) == 3
    it.allocate_tensors()
    assert it.execution_plan() == [0, 3] and it.delegate_log[-1] == "Redoing 1 delegates."
    it.set_tensor(0, np.array([[-1, 2, -3, 4]] * 2, np.float32))
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(3), [[0, 2, 0, 4]] * 2)
    dynamic = _Applies(dynamic=True)
    it = Interpreter(model=relu_chain(3), experimental_delegates=[dynamic])
    assert dynamic.kernel.calls == ["init"]              # prepared by allocate_tensors
    it.resize_tensor_input(0, [2, 4])
    assert it.execution_plan() == [0, 3]                  # not undone: the delegate allows dynamic tensors


def test_a_failing_delegate_removes_every_delegate_applied_before():
    # interpreter.cc ModifyGraphWithDelegateImpl: a delegate error → RemoveAllDelegates
    class Failing:
        def delegate_prepare(self, interpreter):
            raise RuntimeError("no device")

    it = Interpreter(model=relu_chain(3))
    it.modify_graph_with_delegate(_Applies())
    assert it.execution_plan() == [0, 3]
    with pytest.raises(DelegateError, match="no device\n" + delegation.RESTORED):
        it.modify_graph_with_delegate(Failing())
    assert it.execution_plan() == [0, 1, 2] and len(it.nodes) == 3 and it.delegations == [(it.delegations[0][0], None)]
