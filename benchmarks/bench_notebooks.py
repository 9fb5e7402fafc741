"""Time every notebook executed headless, as the test suite runs it (goal: ≤ 60 s each on a 2-core machine).

    python benchmarks/bench_notebooks.py [--repeat 1] [NAME ...]

Each notebook under ``notebooks/`` (or those whose name contains a NAME) is executed from an
in-memory copy with nbclient, in the ``notebooks/`` directory, on a ``python3`` kernel pinned to this
interpreter — the way ``tests/notebooks/test_notebooks.py`` runs them; nothing is written back.  For each
notebook: the wall time of the whole run (kernel start included), the kernel start alone, the
slowest cell, and the number of cells.  A fresh kernel per run; the figure is the best of
``--repeat`` runs.  Records only: there is no timed assertion anywhere.  The corpus models must be
fetched already (``make test`` or ``make lab`` does it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
GOAL_S = 60.0
CELL_TIMEOUT = 600


def pin_python3_kernel(spec_root: Path) -> str:
    """A ``python3`` kernelspec running this interpreter, first on JUPYTER_PATH (as the tests pin it)."""
    spec_dir = spec_root / "kernels" / "python3"
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (workbench venv)", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    os.environ["JUPYTER_PATH"] = str(spec_root)
    return "python3"


class TimedClient(NotebookClient):
    """nbclient's client, noting when the kernel is up and how long each cell takes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cell_seconds: list[float] = []
        self.kernel_up = 0.0

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if not self.kernel_up:
            self.kernel_up = time.perf_counter()
        t0 = time.perf_counter()
        try:
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        finally:
            if cell.cell_type == "code":
                self.cell_seconds.append(time.perf_counter() - t0)


def run(path: Path, kernel: str) -> tuple[float, float, float, int]:
    """(total s, kernel start s, slowest cell s, code cells) for one headless execution."""
    nb = nbformat.read(path, as_version=4)
    client = TimedClient(nb, kernel_name=kernel, timeout=CELL_TIMEOUT, allow_errors=False,
                         resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    t0 = time.perf_counter()
    client.execute()
    total = time.perf_counter() - t0
    start = (client.kernel_up or t0) - t0
    return total, start, max(client.cell_seconds, default=0.0), len(client.cell_seconds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="run only the notebooks whose file name contains one of these")
    ap.add_argument("--repeat", type=int, default=1, help="runs per notebook; the best is reported")
    args = ap.parse_args()
    paths = [p for p in sorted(NOTEBOOK_DIR.glob("*.ipynb")) if not args.names or any(n in p.name for n in args.names)]
    if not paths:
        sys.exit(f"no notebook matches {args.names} in {NOTEBOOK_DIR}")
    print(f"{os.cpu_count()} CPUs; seconds, best of {args.repeat}; goal ≤ {GOAL_S:g} s per notebook (records only)")
    print(f"{'notebook':<36}{'cells':>6}{'kernel':>9}{'slowest cell':>14}{'total':>9}  verdict")
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="bench-notebooks-") as tmp:
        kernel = pin_python3_kernel(Path(tmp) / "jupyter")
        for path in paths:
            runs = [run(path, kernel) for _ in range(max(1, args.repeat))]
            total, start, slowest, cells = min(runs)
            worst = max(worst, total)
            verdict = "within the goal" if total <= GOAL_S else "ABOVE the goal"
            print(f"{path.stem:<36}{cells:>6}{start:>9.1f}{slowest:>14.1f}{total:>9.1f}  {verdict}", flush=True)
    print(f"slowest notebook: {worst:.1f} s — {'within' if worst <= GOAL_S else 'ABOVE'} the {GOAL_S:g} s goal")


if __name__ == "__main__":
    main()
