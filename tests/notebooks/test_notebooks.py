"""Run every notebook under notebooks/ headless and check what the learner would see.

Each notebook is executed from an in-memory copy (nothing is written back into notebooks/) with
nbclient, in the notebooks/ directory, on a ``python3`` kernel pinned to the interpreter running
the tests (so the kernel sees this venv's workbench, whatever other kernelspecs the machine has).
Each notebook runs once per test process (the ``executed`` fixture of tests/notebooks/conftest.py, shared
with notebook 04's own tests), with the exercise audit as its last cell; the executed copy is saved under
pytest's temporary directory for inspection when a test fails.
"""

from __future__ import annotations

import sys

import nbformat
import pytest

from helpers.exercise_audit import AUDITS
from helpers.notebook_runner import NOTEBOOK_DIR, NOTEBOOKS, PROBE, outputs, texts
from workbench.viz.exercise import NONE, RIGHT, WRONG, Bank


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks under notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_saved_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs; clear them before saving"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_headless(path, executed):
    nb = executed(path)
    errors = [o for o in outputs(nb) if o.output_type == "error"]
    assert not errors
    text = texts(nb)
    # the probe's print may reach us as two stream chunks ("PREFIX:" and " /path"), joined by a newline
    assert f"{PROBE} {sys.prefix}" in " ".join(text.split()), "the kernel did not run this venv's interpreter"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_page_of_the_docs_site_shows_a_graph(path, executed, tmp_path):
    """`make docs` renders each executed notebook (dev/build_docs.py); its page shows a graph or image."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_docs", NOTEBOOK_DIR.parent / "dev" / "build_docs.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    page = builder.render_notebook(executed(path), tmp_path / f"{path.stem}.html")
    html = page.read_text(encoding="utf-8")
    assert builder.shows_a_graph(html), f"{page.name}: no inline SVG or image"


def test_anatomy_notebook_shows_header_xray_graph_and_explorer(executed):
    nb = executed(NOTEBOOK_DIR / "01_anatomy_of_a_tflite_file.ipynb")
    text = texts(nb)
    data = [o.data for o in outputs(nb) if o.output_type in ("execute_result", "display_data")]
    assert "TFL3" in text and "root offset" in text
    assert any("wb-xray" in d.get("text/html", "") and "vtable" in d["text/html"] for d in data), "no X-ray table"
    assert "stride_w" in text and "past the vtable's end" in text
    assert any("<svg" in d.get("image/svg+xml", "") for d in data), "no graph picture (is graphviz's dot installed?)"
    assert any("application/vnd.jupyter.widget-view+json" in d for d in data), "no explorer widget"
    assert "same model: True" in text
    assert "Landmarks2TransformMatrix" in text or "left_rotation_idx" in text
    assert "raw struct" in text
    # outputs stay small: nothing close to a full dump of the model
    assert max(len(str(d.get("text/plain", ""))) for d in data) < 5000


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_exercise_checks_its_bank_answer_reveals_and_lands_in_the_record(path, executed):
    """The exercise audit ran as the notebook's last cell (tests/helpers/exercise_audit.py)."""
    executed(path)
    audit = AUDITS[path]
    report = audit["report"]
    bank = Bank(path.parent / "solutions" / f"{path.stem}.md")
    assert sorted(r["key"] for r in report) == sorted(bank.specs)
    for r in report:
        q = r["question"]
        assert (r["none"], r["wrong"], r["right"]) == (NONE, WRONG, RIGHT), q
        assert "✗" in r["widget_wrong"] and "✓" in r["widget_right"], q
        assert ("Answer first" in r["widget_none"]) if r["task"] is None else ("Write" in r["widget_none"]), q
        assert r["hidden_after_wrong"] and r["revealed"], q
        assert len(r["reveal"]) > 40, f"{q}: the reveal says next to nothing"
        assert "{{" not in r["reveal"], q
        assert q in r["static"] and r["reveal"][:40] not in r["static"], q
    # the record of the last notebook cell's kind: right, wrong (then right), revealed, not answered
    statuses = [row["status"] for row in audit["record"]["exercises"]]
    expected = ["right", "wrong", "revealed", "not answered"][:len(statuses)]
    assert statuses == expected, statuses
    counts = audit["record"]["counts"]
    assert counts["right"] == 1 and counts["wrong"] == 1
    assert audit["record"]["exercises"][1]["right_at_try"] == 2
    assert "wb-exercise-summary" in audit["html"] and "revealed" in audit["html"]
