"""A delegate written by subclassing ``Delegate`` carries its own ``name`` into the plan, the placements'
reasons and the partition labels of ``viz.op_graph`` — not the name of the target whose cost figures
it borrows (XNNPACK's)."""

from __future__ import annotations

import numpy as np

import workbench
from workbench import viz
from workbench.delegate import Delegate, SimulatedAccelerator
from workbench.schema import AddOptions, ModelBuilder
from workbench.schema import BuiltinOperator as B


def _add_relu_add_model():
    """ADD → RELU → ADD: a RELU-only delegate takes node 1 alone."""
    b = ModelBuilder()
    x = b.input("x", [1, 4])
    c = b.constant("c", np.array([[-2, -1, 1, 2]], np.float32))
    y = b.tensor("y", [1, 4])
    b.op(B.ADD, [x, c], [y], AddOptions())
    z = b.tensor("z", [1, 4])
    b.op(B.RELU, [y], [z])
    w = b.tensor("w", [1, 4])
    b.op(B.ADD, [z, c], [w], AddOptions())
    b.output(w)
    return b.build()


class ReluOnly(Delegate):
    name = "relu-only"

    def supports(self, sig):
        return None if sig.name == "RELU" else f"{sig.name}: this device only does RELU"


def test_a_custom_delegate_names_its_partitions_in_op_graph_and_in_the_placements():
    it = workbench.Interpreter(model=_add_relu_add_model(), experimental_delegates=[ReluOnly()])
    view = viz.op_graph(it)
    (group,) = view.groups
    assert group.label == "P0 · relu-only · 1 nodes" and group.target == "relu-only"
    assert "relu-only" in view.title
    assert it.placements()[1].reason == "offloaded to relu-only partition 0"
    dot = view.dot().source
    assert "relu-only" in dot and "xnnpack" not in dot


def test_a_custom_delegate_still_uses_xnnpacks_cost_figures():
    d = ReluOnly()
    assert d.target.name == "relu-only"
    assert d.target.cost == workbench.partition.load_target("xnnpack").cost
    assert d.target.ops == workbench.partition.load_target("xnnpack").ops


def test_two_instances_with_different_names_label_their_own_plans():
    a, b = ReluOnly(), ReluOnly()
    b.name = "relu-two"
    m = _add_relu_add_model()
    assert a.prepare(m).target.name == "relu-only"
    assert b.prepare(m).target.name == "relu-two"


def test_a_simulated_accelerator_keeps_the_name_of_its_target_in_labels():
    it = workbench.Interpreter(model=_add_relu_add_model(), experimental_delegates=[SimulatedAccelerator("tidl")])
    assert {g.target for g in viz.op_graph(it).groups} == {"tidl"}
