"""Docstring examples that are self-contained (no model file needed) must stay true."""

import doctest

import pytest

import workbench.interpreter.quant
import workbench.interpreter.quant.fixed_point
import workbench.interpreter.quant.hybrid
import workbench.interpreter.quant.pooling
import workbench.interpreter.quant.recurrent
import workbench.partition.subsets

# the modules of the quant package whose docstrings hold examples; an example may use any name the
# package exports (they were written when the package was a single module)
MODULES = [
    workbench.interpreter.quant.fixed_point,
    workbench.interpreter.quant.pooling,
    workbench.interpreter.quant.hybrid,
    workbench.interpreter.quant.recurrent,
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples_hold(module):
    package = workbench.interpreter.quant
    names = {name: getattr(package, name) for name in package.__all__}
    result = doctest.testmod(module, extraglobs=names, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


# modules whose examples use only their own names
SELF_CONTAINED = [
    workbench.partition.subsets,    # graph_info.h's worked example, by the sweeps and by the heap
]


@pytest.mark.parametrize("module", SELF_CONTAINED, ids=lambda m: m.__name__)
def test_self_contained_docstring_examples_hold(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
