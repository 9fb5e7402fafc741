"""Running the notebooks headless (tests/notebooks/test_notebooks.py), shared with notebook 04's tests
and the viz exercise tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT = 600
PROBE = "WORKBENCH-KERNEL-PREFIX:"
# files a notebook writes next to itself (so JupyterLab can serve them), removed after each run
WRITES = {"06_heterogeneous_execution.ipynb": ("06_trace.json",)}


def pin_python3_kernel(spec_root: Path, monkeypatch) -> str:
    """Put a ``python3`` kernelspec that runs this interpreter first on JUPYTER_PATH."""
    spec_dir = spec_root / "kernels" / "python3"
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (workbench venv)", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(spec_root))
    return "python3"


def run_notebook(path: Path, kernel: str, out_dir: Path, extra=()):
    """Execute a copy of the notebook with a probe cell (and the ``extra`` cells) at its end."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(new_code_cell(f"import sys; print({PROBE!r}, sys.prefix)"))
    nb.cells.extend(extra)
    client = NotebookClient(nb, kernel_name=kernel, timeout=CELL_TIMEOUT, allow_errors=False,
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    try:
        client.execute()
    finally:
        for name in WRITES.get(path.name, ()):
            (NOTEBOOK_DIR / name).unlink(missing_ok=True)
        nbformat.write(nb, out_dir / path.name)  # the executed copy, for a look after a failure
    return nb


def outputs(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            yield from cell.get("outputs", ())


def texts(nb) -> str:
    parts = []
    for o in outputs(nb):
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type in ("execute_result", "display_data"):
            parts.extend(str(v) for k, v in o.data.items() if k.startswith("text/"))
    return "\n".join(parts)
