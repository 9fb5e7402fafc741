"""Fuzzing the interpreter: a malformed model may only ever raise a workbench error.

Each case takes a small valid model (tiny models built here with ModelBuilder, and the small
``sample_models/*.tflite``), mutates it with a seeded recipe, and then runs
``Interpreter(...)``, ``allocate_tensors()``, ``set_tensor`` on every input (random values of the
planned shape and dtype), ``invoke()`` and ``get_tensor`` on every output.  Only a
:class:`~workbench.errors.WorkbenchError` (ModelError, UnsupportedOpError, TensorError, the
kernels' KernelError, ...) may escape; anything else (IndexError, a foreign ValueError,
ZeroDivisionError, numpy / numba errors, RecursionError, MemoryError, OverflowError, ...) fails
the test, and so does a case taking longer than ``CASE_SECONDS`` (a hang).

Two kinds of mutation:

* model level (``dataclasses.replace`` on the parsed Model): wrong tensor shapes and dtypes,
  out-of-range / repeated / absent (-1) / swapped tensor indices, absurd option values (stride 0,
  dilation -1, axis 99, huge sizes), shapes whose product overflows, other opcodes and versions,
  wrong buffers.  Half of these cases hand the Model object to ``Interpreter(model=...)`` (a model
  built in code is not validated by ``load``), the other half its bytes when ``dump`` accepts it.
* byte level: the schema fuzzer's mutations (tests/schema/test_fuzz.py) on the model's bytes.

The failure names the base and the seed; reproduce one case with::

    python tests/interpreter/test_interpreter_fuzz.py conv model 123
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if __name__ == "__main__":  # run as a script: tests/ on sys.path (for the package helpers), as under pytest
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers import interpreter_fuzz_cases
from helpers.interpreter_fuzz_cases import (
    CASES,
    CaseTimeout,
    _format,
    base_bytes,
    exercise,
    make_case,
    mutate_bytes,
    mutate_model,
    run_case,
    run_one,
)

                        # loop variable that doubles each time must stay small)


# --------------------------------------------------------------------------------------------
# tests


# bases that do not run on random inputs as they are: a run-time shape input (random values are no
# valid shape), an input of unknown rank
NOT_RUNNABLE = {"reshape_runtime", "strided_slice_masks"}


def test_base_models_run():
    """Every unmutated base runs cleanly (else the fuzzer would only test rejection)."""
    for name in CASES:
        outcome, exc, tb = run_case(("bytes", base_bytes(name), 0))
        assert exc is None, f"{name}: {tb}"
        assert outcome == ("rejected" if name in NOT_RUNNABLE else "ran"), (name, outcome)


@pytest.mark.parametrize("name", list(CASES))
def test_mutated_models_raise_only_workbench_errors(name):
    n_model, n_bytes = CASES[name]
    outcomes: dict[str, int] = {}
    failures = []
    for kind, count in (("model", n_model), ("bytes", n_bytes)):
        for seed in range(count):
            outcome, exc, tb, how = run_one(name, kind, seed)
            if exc is not None:
                failures.append((name, kind, seed, how, exc, tb))
            else:
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert not failures, _format(failures)
    # the fuzzer must reach invoke, not only be rejected at load
    assert outcomes.get("rejected", 0), outcomes
    if name not in NOT_RUNNABLE:
        assert outcomes.get("ran", 0), outcomes


def test_case_count():
    assert sum(a + b for a, b in CASES.values()) >= 1000


def test_mutations_are_reproducible():
    assert mutate_model("conv", 3)[1] == mutate_model("conv", 3)[1]
    assert mutate_bytes("conv", 3) == mutate_bytes("conv", 3)


def test_run_case_reports_foreign_errors_and_hangs(monkeypatch):
    def raises(case):
        raise IndexError("boom")

    monkeypatch.setattr(interpreter_fuzz_cases, "exercise", raises)
    assert isinstance(run_case(None)[1], IndexError)

    def hangs(case):
        while True:
            pass

    monkeypatch.setattr(interpreter_fuzz_cases, "CASE_SECONDS", 0.2)
    monkeypatch.setattr(interpreter_fuzz_cases, "exercise", hangs)
    assert isinstance(run_case(None)[1], CaseTimeout)


if __name__ == "__main__":  # python tests/interpreter/test_interpreter_fuzz.py BASE KIND SEED
    base, kind_, seed_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
    case_, how_ = make_case(base, kind_, seed_)
    print(f"{base} {kind_} {seed_}: {how_}")
    if case_[0] == "dump-failed":
        raise case_[1]
    print(exercise(case_))
