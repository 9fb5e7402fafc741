"""interpreter/prepare.py: steps 1 and 2 of allocate_tensors (kernels, init/prepare, constant folding)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.tiny_models import folding_model
from workbench import Interpreter
from workbench.errors import ModelError, UnsupportedOpError
from workbench.interpreter import prepare
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder


def test_a_node_whose_inputs_are_constants_is_folded_and_its_output_becomes_a_read_only_constant():
    it = Interpreter(model=folding_model())
    it.allocate_tensors()
    sg = it._sg(0)
    assert sg.folded_nodes == [0] and sg.deferred_nodes == []
    assert [node.index for _, node, _ in sg.plan] == [1, 2]
    folded = sg.context.constants[3]              # e
    np.testing.assert_array_equal(folded, np.arange(4, dtype=np.float32) + 1)
    assert not folded.flags.writeable


def test_foldable_refuses_a_node_that_writes_an_output_of_the_subgraph():
    it = Interpreter(model=folding_model())
    it.allocate_tensors()
    sg = it._sg(0)
    kernels = prepare.resolve(sg)
    assert prepare.foldable(sg, sg.nodes[0], kernels[0])
    assert not prepare.foldable(sg, sg.nodes[2], kernels[2])      # RELU reads x and writes the output


def test_resolve_names_the_node_of_a_missing_kernel_and_the_other_missing_ops():
    b = ModelBuilder()
    x = b.input("x", [2])
    y, z = b.tensor("y", [2]), b.tensor("z", [2])
    b.op(B.CUSTOM, [x], [y], custom_code="Nope")
    b.op(B.CUSTOM, [y], [z], custom_code="AlsoNope")
    b.output(z)
    it = Interpreter(model=b.build())
    with pytest.raises(UnsupportedOpError, match=r"needed by node 0 of subgraph 0; also missing: AlsoNope v1"):
        prepare.resolve(it._sg(0))


def test_check_structure_refuses_an_operator_that_writes_a_constant():
    b = ModelBuilder()
    x = b.input("x", [2])
    c = b.constant("c", np.zeros(2, np.float32))
    b.op(B.RELU, [x], [c])
    b.output(c)
    with pytest.raises(ModelError, match=r"output 0 is tensor 1 \('c'\), a constant of the model"):
        Interpreter(model=b.build())
