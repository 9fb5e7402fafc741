"""allocate_tensors in TFLite's steps: resolve, prepare (fold, defer), lifetimes, arena — and its errors."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.builders import add_fc_model
from workbench import Interpreter
from workbench.errors import TensorError
from workbench.interpreter import BuiltinOpResolver, Kernel, planner
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder


class Greedy(Kernel):
    def prepare(self, context, node):
        raise MemoryError("a scratch buffer of 10^15 bytes")


def _custom_model():
    b = ModelBuilder()
    x = b.input("x", [3])
    y = b.tensor("y", [3])
    b.op(B.CUSTOM, [x], [y], custom_code="Greedy")
    b.output(y)
    return b.build()


def test_a_memory_error_in_prepare_is_a_tensor_error_naming_the_node():
    r = BuiltinOpResolver()
    r.add_custom("Greedy", Greedy)
    with pytest.raises(TensorError, match=r"node 0 \(Greedy\) of subgraph 0: prepare needs more memory"):
        Interpreter(model=_custom_model(), op_resolver=r).allocate_tensors()


def test_the_steps_leave_what_a_learner_reads():
    it = Interpreter(model=add_fc_model())
    it.allocate_tensors()
    sg = it._sg(0)
    assert [n.op_name for n, _, _, _ in sg.prepared] == ["ADD", "FULLY_CONNECTED"]
    assert sg.folded_nodes == [] and sg.deferred_nodes == []
    life = planner.lifetimes(sg, [(None, n, None, None) for n in sg.plan_nodes()])
    assert life[0] == [-1, 2] and life[5] == [1, 2]        # input: the whole invoke; output: to the end
    assert it.arena_plan.size > 0
    it.set_tensor(0, np.ones((1, 4), np.float32))
    it.invoke()
    assert it.get_tensor(5).shape == (1, 3)
