"""Environment knobs are read only through ``workbench/config.py``.

Every ``WORKBENCH_*`` variable is read there, with a docstring saying what it does and its default;
the rest of the package asks :mod:`workbench.config`.  Three checks over ``workbench/``:

* a grep: no line outside config.py reads ``os.environ`` / ``os.getenv`` with a ``WORKBENCH_`` name;
* the same read with ``ast`` (a call spread over lines, ``environ[...]``, ``"WORKBENCH_X" in environ``),
  and a module that reads the environment under a computed name (``os.environ.get(name)``) must not
  spell a ``WORKBENCH_`` name anywhere in its code: that is the same read by another road;
* every ``WORKBENCH_`` name the package mentions (docs included) is read in config.py, and each one
  config.py reads has a docstring there (of its function or attribute) with its default.

Variables that are not the workbench's own (``NUMBA_*``, ``CC``, ``XDG_CACHE_HOME``) are not knobs.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from workbench import config

ROOT = Path(__file__).resolve().parents[2] / "workbench"
CONFIG = ROOT / "config.py"
SOURCES = sorted(p for p in ROOT.rglob("*.py") if p != CONFIG)
NAME = re.compile(r"\bWORKBENCH_[A-Z0-9_]+\b")
GREP = re.compile(r"""\b(?:os\.)?(?:environ|getenv)\b.*['"]WORKBENCH_""")
ENV_GETTERS = {"get", "pop", "setdefault"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT.parent))


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or \
           (isinstance(node, ast.Name) and node.id == "environ")


def _env_keys(tree: ast.AST) -> list[tuple[int, ast.AST]]:
    """(line, key expression) of every read of the environment in the tree."""
    keys = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in ENV_GETTERS and _is_environ(f.value):
                keys.append((node.lineno, node.args[0]))
            elif ((isinstance(f, ast.Attribute) and f.attr == "getenv")
                  or (isinstance(f, ast.Name) and f.id == "getenv")):
                keys.append((node.lineno, node.args[0]))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            keys.append((node.lineno, node.slice))
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) \
                and any(_is_environ(c) for c in node.comparators):
            keys.append((node.lineno, node.left))
    return keys


def _code_strings(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, value) of the string constants of the module that are not docstrings."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_grep_finds_no_workbench_knob_read_outside_config():
    hits = [f"{_rel(p)}:{k}: {line.strip()}"
            for p in SOURCES for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if GREP.search(line)]
    assert not hits, "read WORKBENCH_* knobs through workbench.config:\n" + "\n".join(hits)


@pytest.mark.parametrize("path", SOURCES, ids=_rel)
def test_no_environment_read_of_a_workbench_name(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    keys = _env_keys(tree)
    direct = [line for line, key in keys
              if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith("WORKBENCH_")]
    assert not direct, f"{_rel(path)} reads a WORKBENCH_ variable on line(s) {direct}: use workbench.config"
    computed = [line for line, key in keys if not isinstance(key, ast.Constant)]
    if computed:
        named = [(line, s) for line, s in _code_strings(tree) if NAME.fullmatch(s)]
        assert not named, (f"{_rel(path)} reads the environment under a computed name (line(s) {computed}) "
                           f"and names {named}: read WORKBENCH_ knobs through workbench.config")


def test_config_reads_every_knob_the_package_mentions_and_documents_each():
    source = CONFIG.read_text(encoding="utf-8")
    read = {key.value for _, key in _env_keys(ast.parse(source))
            if isinstance(key, ast.Constant) and NAME.fullmatch(str(key.value))}
    read |= set(re.findall(r'_(?:flag|level)\("(WORKBENCH_[A-Z0-9_]+)"', source))
    assert {"WORKBENCH_JIT", "WORKBENCH_DEBUG", "WORKBENCH_PRECOMPILED", "WORKBENCH_VNNI",
            "WORKBENCH_CORPUS_DIR", "WORKBENCH_KERNELS_DIR"} <= read
    mentioned = {m for p in SOURCES for m in NAME.findall(p.read_text(encoding="utf-8"))}
    assert mentioned <= read, f"mentioned in workbench/ but not read in config.py: {sorted(mentioned - read)}"
    tree = ast.parse(source)
    docs = [n.value.value for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)][1:]
    docs += [ast.get_docstring(n) or "" for n in tree.body
             if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    for name in sorted(read):
        assert any(f"``{name}" in d and "default" in d for d in docs), \
            f"{name}: give it a docstring in config.py saying what it does and its default"


def test_the_call_time_knobs_follow_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_CORPUS_DIR", str(tmp_path / "corpus"))
    monkeypatch.setenv("WORKBENCH_KERNELS_DIR", str(tmp_path / "kernels"))
    assert config.corpus_dir() == tmp_path / "corpus"
    assert config.kernels_dir() == tmp_path / "kernels"
    from workbench import corpus
    from workbench.perf import precompiled

    assert corpus.cache_dir() == tmp_path / "corpus"
    assert precompiled.library_dir() == tmp_path / "kernels"
    monkeypatch.delenv("WORKBENCH_CORPUS_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert config.corpus_dir() == tmp_path / "xdg" / "tflite-workbench" / "corpus"
    for value, on in [("0", False), ("off", False), (" No ", False), ("1", True), ("", True), ("yes", True)]:
        monkeypatch.setenv("WORKBENCH_VNNI", value)
        assert config.vnni() is on, value
    monkeypatch.delenv("WORKBENCH_VNNI")
    assert config.vnni() is True
    for value, level in [("", 0), ("0", 0), ("2", 2), ("yes", 1)]:
        monkeypatch.setenv("WORKBENCH_DEBUG", value)
        assert config.debug_level() == level, value
