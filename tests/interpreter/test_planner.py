"""interpreter/planner.py: steps 3 and 4 of allocate_tensors (lifetimes, the arena, variables)."""

from __future__ import annotations

import numpy as np

from helpers.tiny_models import relu_chain
from workbench import Interpreter
from workbench.interpreter import planner
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder


def test_lifetimes_keep_inputs_for_the_whole_invoke_and_intermediates_from_writer_to_last_reader():
    it = Interpreter(model=relu_chain(3, width=8))
    it.allocate_tensors()
    sg = it._sg(0)
    life = planner.lifetimes(sg, [(None, node, None, None) for node in sg.plan_nodes()])
    assert life == {0: [-1, 3], 1: [0, 1], 2: [1, 2], 3: [2, 3]}


def test_plan_arena_shares_bytes_in_a_chain_unless_intermediates_are_kept():
    shared = Interpreter(model=relu_chain(6, width=8))
    shared.allocate_tensors()
    kept = Interpreter(model=relu_chain(6, width=8), keep_intermediates=True)
    kept.allocate_tensors()
    assert shared.arena_plan.shared and not kept.arena_plan.shared
    assert shared.arena_plan.size < kept.arena_plan.size


def test_reset_variable_fills_an_int8_variable_with_its_zero_point():
    b = ModelBuilder()
    x = b.input("x", [3], np.int8, quantization=ModelBuilder.quant([0.5], [-7]))
    v = b.tensor("v", [3], np.int8, quantization=ModelBuilder.quant([0.5], [-7]), is_variable=True)
    y = b.tensor("y", [3], np.int8, quantization=ModelBuilder.quant([0.5], [-7]))
    b.op(B.RELU, [x], [y])
    b.output(y)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    ctx = it._sg(0).context
    ctx.tensors[v] = np.full(3, 5, np.int8)
    planner.reset_variable(ctx, v)
    np.testing.assert_array_equal(ctx.tensors[v], np.full(3, -7, np.int8))
