"""The tests' own layout: no test module imports another, and only tests/ itself goes on sys.path.

What two test modules share lives in the package tests/helpers/ (``from helpers import builders``).  A test
module that imports another one (``import test_fuzz``, ``from test_partition_rules import ...``) makes the
second one's tests depend on who imported it first, and needs every folder of tests/ on sys.path.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
PY_FILES = sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)
CONFTESTS = [p for p in PY_FILES if p.name == "conftest.py"]


def is_test_module(name: str) -> bool:
    """A module name that names a test module or a conftest (their basenames are not importable names)."""
    top = name.split(".")[0]
    return top.startswith("test_") or top == "conftest"


def imported_names(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import in the tree, at any depth, and of every importlib.import_module call
    whose argument is a string literal or an f-string starting with a literal."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.func, (ast.Attribute, ast.Name)) and (
                getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in ("import_module", "__import__"):
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                arg = arg.values[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.append((node.lineno, arg.value))
    return out


def test_the_checker_sees_every_form_of_import():
    src = ("import test_a\nfrom test_b import x\ndef f():\n    import conftest\n"
           "importlib.import_module('test_c')\nimportlib.import_module(f'test_{x}')\n"
           "from helpers import builders\nimport helpers.test_like\n")
    found = [name for _, name in imported_names(ast.parse(src)) if is_test_module(name)]
    assert found == ["test_a", "test_b", "conftest", "test_c", "test_"]


@pytest.mark.parametrize("path", PY_FILES, ids=[str(p.relative_to(TESTS)) for p in PY_FILES])
def test_no_test_module_imports_another(path):
    bad = [f"{path.relative_to(TESTS)}:{line}: imports {name}"
           for line, name in imported_names(ast.parse(path.read_text(), str(path))) if is_test_module(name)]
    assert not bad, "move what is shared into tests/helpers/:\n" + "\n".join(bad)


def paths_added_by(conftest: Path) -> list[str]:
    """The sys.path entries a conftest adds when it is executed (in a child process, so nothing here moves)."""
    code = ("import runpy, sys\n"
            "before = list(sys.path)\n"
            f"runpy.run_path({str(conftest)!r})\n"
            "print('\\n'.join(p for p in sys.path if p not in before))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=TESTS.parent)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line]


def test_the_sys_path_check_runs_the_conftest_code(tmp_path):
    adds_folders = tmp_path / "conftest.py"
    adds_folders.write_text("import sys\nsys.path.insert(0, '/somewhere/tests/schema')\n")
    assert paths_added_by(adds_folders) == ["/somewhere/tests/schema"]


@pytest.mark.parametrize("conftest", CONFTESTS, ids=[str(p.relative_to(TESTS)) for p in CONFTESTS])
def test_conftest_puts_no_subfolder_of_tests_on_sys_path(conftest):
    added = [Path(p).resolve() for p in paths_added_by(conftest)]
    subfolders = [str(p) for p in added if p != TESTS and TESTS in p.parents]
    assert not subfolders, f"{conftest.relative_to(TESTS)} puts folders under tests/ on sys.path: {subfolders}"
    assert set(added) <= {TESTS}, added
