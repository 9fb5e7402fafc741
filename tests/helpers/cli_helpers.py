"""Running the `workbench` command line in tests: in-process and as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from workbench.cli import main

ROOT = Path(__file__).resolve().parents[2]


def strict_json(text: str):
    """Parse JSON, refusing NaN / Infinity tokens (not valid JSON)."""
    def refuse(token):
        raise AssertionError(f"non-JSON constant {token} in the output")
    return json.loads(text, parse_constant=refuse)


def run_inprocess(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def run_subprocess(*args) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "workbench.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr
