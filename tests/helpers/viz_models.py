"""Small models for the view tests, built in code, and shared helpers.

``branchy_model()``: nine operators whose chains and neighbourhoods are known by hand::

    x → n0 CONV_2D(+RELU6) → n1 RELU → n2 TANH → n3 LOGISTIC ─┬→ n4 RELU  ─┐
                                                                 └→ n5 RELU6 ─┴→ n6 ADD → n7 RELU
                                                                                   → n8 TANH → y

Chains of ≥ 3: [n0 n1 n2 n3] and [n6 n7 n8] (n3 has two readers, n6 two producers).
"""

from __future__ import annotations

import graphviz
import numpy as np

from workbench.schema import ActivationFunctionType, AddOptions, Conv2DOptions, Padding
from workbench.schema import BuiltinOperator as B
from workbench.schema.builder import ModelBuilder

try:
    graphviz.Digraph().pipe(format="svg")
    HAVE_DOT = True
except graphviz.ExecutableNotFound:
    HAVE_DOT = False


def branchy_model(names: bool = True):
    b = ModelBuilder("viz test: branchy")
    x = b.input("x", [1, 4, 4, 2])
    w = b.constant("w", np.ones((2, 1, 1, 2), np.float32))
    bias = b.constant("b", np.zeros(2, np.float32))
    t = [b.tensor(f"t{k}", [1, 4, 4, 2]) for k in range(9)]
    b.op(B.CONV_2D, [x, w, bias], [t[0]], Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1,
                                                         fused_activation_function=ActivationFunctionType.RELU6))
    b.op(B.RELU, [t[0]], [t[1]])
    b.op(B.TANH, [t[1]], [t[2]])
    b.op(B.LOGISTIC, [t[2]], [t[3]])
    b.op(B.RELU, [t[3]], [t[4]])
    b.op(B.RELU6, [t[3]], [t[5]])
    b.op(B.ADD, [t[4], t[5]], [t[6]], AddOptions())
    b.op(B.RELU, [t[6]], [t[7]])
    b.op(B.TANH, [t[7]], [t[8]])
    b.output(t[8])
    return b.build("main" if names else None)


def undirected_ball(g, centre: int, radius: int) -> set:
    """Operator indices within ``radius`` data edges of ``centre`` — from the partitioner's GraphView,
    independently of the view model."""
    seen, frontier = {centre}, {centre}
    for _ in range(radius):
        nxt = set()
        for i in frontier:
            nxt.update(g.predecessors(i))
            nxt.update(g.successors(i))
        frontier = nxt - seen
        seen |= frontier
    return seen
