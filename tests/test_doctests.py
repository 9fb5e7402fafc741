"""Docstring examples that are self-contained (no model file needed) must stay true."""

import doctest

import pytest

import workbench.interpreter.quant


@pytest.mark.parametrize("module", [workbench.interpreter.quant], ids=lambda m: m.__name__)
def test_docstring_examples_hold(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
