"""Tiny float models built with :class:`workbench.schema.ModelBuilder` for the interpreter's unit tests."""

from __future__ import annotations

import numpy as np

from workbench.schema import AddOptions, ModelBuilder
from workbench.schema import BuiltinOperator as B


def relu_chain(n: int, width: int = 4):
    """x → RELU → … → RELU (``n`` nodes), each on a [width] tensor."""
    b = ModelBuilder()
    t = b.input("x", [width])
    for i in range(n):
        out = b.tensor(f"r{i}", [width])
        b.op(B.RELU, [t], [out])
        t = out
    b.output(t)
    return b.build()


def folding_model():
    """e = c + d (two constants: folded at prepare), y = x + e, z = relu(y) (the output)."""
    b = ModelBuilder()
    x = b.input("x", [4])
    c = b.constant("c", np.arange(4, dtype=np.float32))
    d = b.constant("d", np.ones(4, np.float32))
    e, y, z = b.tensor("e", [4]), b.tensor("y", [4]), b.tensor("z", [4])
    b.op(B.ADD, [c, d], [e], AddOptions())
    b.op(B.ADD, [x, e], [y], AddOptions())
    b.op(B.RELU, [y], [z])
    b.output(z)
    return b.build()
