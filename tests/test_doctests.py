"""Docstring examples that are self-contained (no model file needed) must stay true."""

import doctest

import pytest

import workbench.interpreter.quant
import workbench.interpreter.quant.fixed_point
import workbench.interpreter.quant.hybrid
import workbench.interpreter.quant.pooling
import workbench.interpreter.quant.recurrent

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
