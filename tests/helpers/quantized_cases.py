"""The scaffolding the one-op case tables share (tests/interpreter/quant/test_quantized_*.py and friends).

A test module holds ``CASES``: case name → a function that, given the name, returns
``(ModelBuilder, {input name: array})``.  This module builds a case (operator versions set by
TFLite's op-version rules), runs it on our interpreter (fast kernels, or the plain numpy references
with ``reference=True``) and compares outputs exactly.  ai-edge-litert's builtin kernels run every
case of a table once per test session through ``litert_runner.run_built`` (each model in a child
process, a few at a time: its kernels may abort the process)::

    def build_case(name):
        return quantized_cases.build(CASES, name)

    @pytest.fixture(scope="session")
    def litert_results(tmp_path_factory):
        return litert_runner.run_built(tmp_path_factory.mktemp("litert_mine"), CASES, build_case, workers=2)

    def test_bit_exact_with_litert(case, litert_results):
        model, inputs = build_case(case)
        assert_same(run_ours(model, inputs), litert_outputs(litert_results[case]), case)
"""

from __future__ import annotations

import numpy as np

from workbench.interpreter import Interpreter
from workbench.versioning import update_versions


def build(cases: dict, name: str):
    """Case ``name`` of ``cases``: the model (versions by the op-version rules) and its inputs by name."""
    builder, inputs = cases[name](name)
    return update_versions(builder.build()), inputs


def run_ours(model, inputs: dict, reference: bool = False) -> list:
    """The outputs of one invoke of our interpreter (fast kernels, or the references), in output order."""
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    by_name = {d["name"]: d for d in it.get_input_details()}
    for name, value in inputs.items():
        it.set_tensor(by_name[name]["index"], value)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def litert_outputs(result) -> list:
    """litert's outputs of one case, in output order (the test fails if litert refused or crashed)."""
    assert result.ok, result.describe()
    return [result.outputs[f"output_{k}"] for k in range(len(result.outputs))]


def assert_same(ours: list, theirs: list, what: str, dtype=None, float_bits: bool = True) -> None:
    """Every output element equal: same shape and dtype (``dtype`` if given), integers by value,
    floats bit for bit (or by value with ``float_bits=False``: then +0 equals -0 and NaN nothing)."""
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype and (dtype is None or a.dtype == dtype), \
            f"{what} output {k}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype.kind == "f" and float_bits:
            bits = np.dtype(f"u{a.dtype.itemsize}")
            bad = int((a.view(bits) != b.view(bits)).sum())
        else:
            bad = int((a != b).sum())
        assert bad == 0, f"{what} output {k}: {bad}/{a.size} elements differ; max |diff| {_max_diff(a, b)}"


def _max_diff(a: np.ndarray, b: np.ndarray):
    if a.dtype.kind in "iu":
        return int(np.abs(a.astype(np.int64) - b.astype(np.int64)).max())
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())
