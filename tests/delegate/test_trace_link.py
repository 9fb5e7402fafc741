"""A written Chrome trace, shown in a notebook: a link relative to the working directory (the notebook's
folder, so JupyterLab can serve it) and how to open it in Perfetto."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

import workbench
from workbench.delegate import SimulatedAccelerator
from workbench.delegate.trace import PERFETTO, trace_link, write_chrome_trace

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def _events():
    it = workbench.Interpreter(model_path=str(SAMPLES / "digits_cnn_float.tflite"),
                               experimental_delegates=[SimulatedAccelerator("tidl")])
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.ones((1, 8, 8, 1), np.float32))
    return list(it.steps())


def test_a_trace_written_next_to_the_notebook_gets_a_relative_link_and_the_perfetto_steps(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_chrome_trace(_events(), "06_trace.json")
    assert json.loads((tmp_path / "06_trace.json").read_text())["traceEvents"]
    link = trace_link(path)
    page = link._repr_html_()
    assert re.search(r"<a href='06_trace\.json' download='06_trace\.json'>", page), page
    assert f"<a href='{PERFETTO}'" in page and "Open trace file" in page
    assert "Open trace file" in str(link) and "06_trace.json" in str(link)


def test_a_trace_in_a_subfolder_links_relative_and_one_outside_links_its_full_path(tmp_path, monkeypatch):
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    assert trace_link(tmp_path / "runs" / "a b.json").href == "runs/a%20b.json"
    outside = tmp_path.parent / "elsewhere.json"
    assert trace_link(outside).href.endswith("/elsewhere.json") and trace_link(outside).href.startswith("/")
