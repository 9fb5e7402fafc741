"""Run every notebook under notebooks/ headless and check what the learner would see.

Each notebook is executed from an in-memory copy (nothing is written back into notebooks/) with
nbclient, in the notebooks/ directory, on a ``python3`` kernel pinned to the interpreter running
the tests (so the kernel sees this venv's workbench, whatever other kernelspecs the machine has).
Each notebook runs once per test session (the tests share the executed copy), which is saved
under pytest's temporary directory for inspection when a test fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

from helpers.notebook_runner import NOTEBOOK_DIR, NOTEBOOKS, PROBE, outputs, pin_python3_kernel, run_notebook, texts


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """``executed(path)`` → the executed copy of a notebook (each notebook runs once per module)."""
    cache: dict = {}
    root = tmp_path_factory.mktemp("notebooks")
    with pytest.MonkeyPatch.context() as mp:
        kernel = pin_python3_kernel(root / "jupyter", mp)

        def get(path: Path):
            if path not in cache:
                try:
                    cache[path] = run_notebook(path, kernel, root)
                except Exception as exc:  # remember the failure: report it for every test that asks
                    cache[path] = exc
            if isinstance(cache[path], Exception):
                raise cache[path]
            return cache[path]

        yield get


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
