"""The notebooks' tests share one headless run of each notebook per test process."""

from __future__ import annotations

from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell


@pytest.fixture(scope="session")
def executed(tmp_path_factory):
    """``executed(path)`` → the executed copy of a notebook (each notebook runs once per process, with the
    exercise audit as its last cell; its report goes to ``AUDITS[path]`` and the cell is dropped)."""
    from helpers.exercise_audit import AUDIT, AUDITS, audit_report  # tests/ is on sys.path once pytest runs
    from helpers.notebook_runner import pin_python3_kernel, run_notebook

    cache: dict = {}
    root = tmp_path_factory.mktemp("notebooks")
    with pytest.MonkeyPatch.context() as mp:
        kernel = pin_python3_kernel(root / "jupyter", mp)

        def get(path: Path):
            if path not in cache:
                try:
                    nb = run_notebook(path, kernel, root, extra=[new_code_cell(AUDIT)])
                    AUDITS[path] = audit_report(nb)
                    nb.cells.pop()              # the audit's cell: not part of what the learner sees
                    cache[path] = nb
                except Exception as exc:  # remember the failure: report it for every test that asks
                    cache[path] = exc
            if isinstance(cache[path], Exception):
                raise cache[path]
            return cache[path]

        yield get
