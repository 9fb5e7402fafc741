"""Writing a delegate (a subclass with ``supports`` and ``create_kernel``) and a custom-op kernel
(init / prepare / invoke / free, registered with ``OpResolver.add_custom``), as docs/delegate.md shows."""

from __future__ import annotations

import numpy as np
import pytest

import workbench
from workbench.delegate import Delegate
from workbench.interpreter import BuiltinOpResolver, Kernel
from workbench.schema import AddOptions, ModelBuilder
from workbench.schema import BuiltinOperator as B


def _add_relu_model():
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    c = b.constant("c", np.array([[-2, -1, 1, 2]], np.float32))
    y = b.tensor("y", [1, 4])
    b.op(B.ADD, [x, c], [y], AddOptions())
    z = b.tensor("z", [1, 4])
    b.op(B.RELU, [y], [z])
    b.output(z)
    return b.build()


# -- a delegate in about twenty lines ----------------------------------------------------------------

class ReluKernel(Kernel):
    """The device: it knows one thing, max(x, 0)."""

    def prepare(self, context, node):
        context.set_output(node.outputs[0], context.shape(node.inputs[0]), context.dtype(node.inputs[0]))

    def invoke(self, context, node, data):
        t = context.tensors
        np.maximum(t[node.inputs[0]], 0, out=t[node.outputs[0]])


class ReluDelegate(Delegate):
    name = "relu-device"

    def supports(self, sig):
        return None if sig.name == "RELU" else f"{sig.name}: this device only does RELU"

    def create_kernel(self, partition):
        return ReluKernel()


def test_a_delegate_of_twenty_lines_runs_its_partition():
    m = _add_relu_model()
    d = ReluDelegate()
    it = workbench.Interpreter(model=m, experimental_delegates=[d])
    assert [(p.lane, p.code) for p in it.placements()] == [("cpu", "other"), ("device", "offloaded")]
    assert it.placements()[0].reason == "ADD: this device only does RELU"
    assert it.delegate_log[-1].startswith("Replacing 1 out of 2 node(s) with delegate (relu-device) node")
    it.allocate_tensors()
    x = np.array([[0.5, 0.5, -0.5, -3]], np.float32)
    it.set_tensor(0, x)
    it.invoke()
    assert np.array_equal(it.get_tensor(it.get_output_details()[0]["index"]), np.maximum(x + [[-2, -1, 1, 2]], 0))


def test_a_delegate_with_a_version_limit_refuses_a_newer_op_at_prepare():
    class OldRelu(ReluDelegate):
        def max_version(self, sig):
            return 0                       # knows no version of anything
    it = workbench.Interpreter(model=_add_relu_model(), experimental_delegates=[OldRelu()])
    assert it.placements()[1].code == "version"
    assert it.placements()[1].reason == "RELU: Max version supported: 0. Requested version 1."
    assert it.delegate_log == []           # nothing replaced: no "Replacing" line


# -- a custom-op kernel: init / prepare / invoke / free ---------------------------------------------

class Twice(Kernel):
    """A custom op ``Twice``: y = 2 x.  Every lifecycle step is recorded, as a learner would print it."""

    calls: list = []

    def init(self, context, node):           # once per node, when the interpreter is built up
        self.calls.append(("init", node.index))
        return {"factor": 2}

    def prepare(self, context, node):        # shapes, constants: once per allocate_tensors
        self.calls.append(("prepare", node.index))
        context.set_output(node.outputs[0], context.shape(node.inputs[0]), context.dtype(node.inputs[0]))
        return "prepared"

    def invoke(self, context, node, data):  # every invoke
        self.calls.append(("invoke", data))
        t = context.tensors
        t[node.outputs[0]][...] = 2 * t[node.inputs[0]]

    def free(self, context, node, data):     # when the node's data is dropped (a new allocate_tensors)
        self.calls.append(("free", data))


def _twice_model():
    b = ModelBuilder()
    x = b.input("x", [3])
    y = b.tensor("y", [3])
    b.op(B.CUSTOM, [x], [y], custom_code="Twice")
    b.output(y)
    return b.build()


def test_a_custom_op_kernel_goes_through_init_prepare_invoke_free():
    Twice.calls = []
    resolver = BuiltinOpResolver()
    resolver.add_custom("Twice", Twice)
    it = workbench.Interpreter(model=_twice_model(), op_resolver=resolver)
    it.allocate_tensors()
    it.set_tensor(0, np.array([1, 2, 3], np.float32))
    it.invoke()
    it.invoke()
    assert np.array_equal(it.get_tensor(it.get_output_details()[0]["index"]), [2, 4, 6])
    it.allocate_tensors()                  # again: the old data is freed first
    assert Twice.calls == [("init", 0), ("prepare", 0), ("invoke", "prepared"), ("invoke", "prepared"),
                           ("free", "prepared"), ("init", 0), ("prepare", 0)]


def test_without_its_registration_the_custom_op_is_refused():
    with pytest.raises(workbench.UnsupportedOpError, match="Twice"):
        workbench.Interpreter(model=_twice_model()).allocate_tensors()
