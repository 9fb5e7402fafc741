"""Imports run one way (docs/architecture.md): perf → schema → options → versioning → partition → interpreter →
delegate → viz → cli, with errors / config and the two standalone helpers (corpus, bench) below all.
``perf`` (numba, BLAS, VNNI, the precompiled library) imports nothing but errors and config.

Every ``import`` statement of every module is read with ``ast`` — those inside functions too, since a
lazy import is still a dependency — and resolved to the package it names.  A module may import its
own layer and the layers below it, never one above.  The facade ``workbench/__init__.py`` sits on top.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "workbench"

# (layer name, the top-level modules / packages of workbench in it), lowest first
LAYERS = [
    ("base", {"errors", "config", "corpus", "bench"}),
    ("perf", {"perf"}),
    ("schema", {"schema"}),
    ("options", {"options"}),
    ("versioning", {"versioning"}),
    ("partition", {"partition"}),
    ("interpreter", {"interpreter"}),
    ("delegate", {"delegate"}),
    ("viz", {"viz"}),
    ("cli", {"cli"}),
]
RANK = {part: k for k, (_, parts) in enumerate(LAYERS) for part in parts}
FACADE = "__init__"


def _part_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py")


def _module_name(path: Path) -> list[str]:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return parts


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in the file that names a workbench module."""
    here = _module_name(path)
    return imports_in(path.read_text(encoding="utf-8"), here if path.name == "__init__.py" else here[:-1])


def imports_in(source: str, package: list[str]) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "workbench"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "workbench":
                continue
            if mod == "workbench":     # `from .. import kernels`: the names are modules of the package
                out += [(node.lineno, f"workbench.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, mod))
    return out


def _modules():
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_part_of_the_package_has_a_layer():
    parts = {_part_of(p) for p in _modules()} - {FACADE}
    missing = sorted(parts - set(RANK))
    assert not missing, f"place these in LAYERS (and in docs/architecture.md's layer diagram): {missing}"


@pytest.mark.parametrize("part", [name for name, _ in LAYERS])
def test_imports_run_one_way(part):
    members = dict(LAYERS)[part]
    bad = []
    for path in _modules():
        if _part_of(path) not in members:
            continue
        for line, mod in imports_of(path):
            target = mod.split(".")[1] if "." in mod else FACADE
            if target == FACADE:
                bad.append(f"{path.relative_to(ROOT.parent)}:{line} imports the facade 'workbench' itself")
            elif RANK.get(target, -1) > RANK[_part_of(path)]:
                bad.append(f"{path.relative_to(ROOT.parent)}:{line} imports {mod} "
                           f"({LAYERS[RANK[target]][0]} is above {part})")
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_the_parser_sees_lazy_and_relative_imports():
    # a module of workbench.partition importing upward inside a function is still caught
    source = ("import numpy\n"
              "def f():\n    from ..interpreter import Interpreter\n    from . import graph\n"
              "    import workbench.delegate.offload\n    from .. import viz\n")
    found = [m for _, m in imports_in(source, ["workbench", "partition"])]
    assert found == ["workbench.interpreter", "workbench.partition", "workbench.delegate.offload", "workbench.viz"]


def _loaded_after(statement: str) -> set[str]:
    code = (f"import sys\n{statement}\n"
            "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('workbench'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_importing_the_partitioner_loads_no_interpreter_module():
    loaded = _loaded_after("import workbench.partition")
    assert not {m for m in loaded if m.startswith(("workbench.interpreter", "workbench.delegate"))}


def test_the_interpreter_loads_no_partition_or_delegate_module_until_it_builds_a_resolver():
    loaded = _loaded_after("import workbench.interpreter")
    assert not {m for m in loaded if m.startswith(("workbench.partition", "workbench.delegate"))}


def test_the_offload_kernel_is_registered_through_the_entry_point():
    # the first builtin resolver loads the workbench.kernels plugins: the offload op resolves
    code = ("from workbench.interpreter.registry import BuiltinOpResolver, load_kernel_plugins\n"
            "r = BuiltinOpResolver()\n"
            "print(load_kernel_plugins())\n"
            "print(type(r.find('workbench-offload', 1)).__module__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "workbench-offload = workbench.delegate.offload" in out
    assert out.split()[-1] == "workbench.delegate.offload"


# partition and interpreter are siblings: the partitioner knows nothing of kernels, the interpreter nothing
# of partitions (the layer order alone would let the interpreter import the partitioner)
SIBLINGS = [("interpreter", "partition"), ("partition", "interpreter")]


@pytest.mark.parametrize("part, forbidden", SIBLINGS)
def test_siblings_do_not_import_each_other(part, forbidden):
    bad = [f"{path.relative_to(ROOT.parent)}:{line} imports {mod}"
           for path in _modules() if _part_of(path) == part
           for line, mod in imports_of(path) if mod.split(".")[1:2] == [forbidden]]
    assert not bad, "\n".join(bad)


# inside the interpreter: the teaching layer (kernels/, quant/) is plain numpy; the speed layer (fast/)
# may read it, never the other way round; only the speed layer reaches the performance machinery (perf)
TEACHING = ("kernels", "quant")
# (ctypes is not speed machinery: quant/prepare.py calls the C library's own erfcf / exp through it, the
# function TFLite calls, where no numpy formulation of glibc's is written out in kernels/_libm.py)
SPEED_MACHINERY = ("numba", "llvmlite", "threading", "concurrent", "multiprocessing")


def _third_party_imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.lineno, node.module))
    return out


def _interpreter_part(path: Path) -> str | None:
    rel = path.relative_to(ROOT)
    return rel.parts[1] if rel.parts[0] == "interpreter" and len(rel.parts) > 2 else None


def test_the_teaching_layer_imports_no_speed_layer_and_no_performance_machinery():
    bad = []
    for path in _modules():
        if _interpreter_part(path) not in TEACHING:
            continue
        where = path.relative_to(ROOT.parent)
        for line, mod in imports_of(path):
            if mod.startswith(("workbench.perf", "workbench.interpreter.fast")):
                bad.append(f"{where}:{line} imports {mod}")
        for line, mod in _third_party_imports(path):
            if mod.split(".")[0] in SPEED_MACHINERY:
                bad.append(f"{where}:{line} imports {mod}")
    assert not bad, "the teaching layer must stay plain numpy:\n" + "\n".join(bad)


def test_the_teaching_layer_has_no_fast_path_vocabulary():
    # no numba / BLAS / VNNI / threads / scratch named in kernels/ code (comments
    # and docstrings may point the reader to the speed layer)
    words = ("njit", "run_rows", "vnni", "_blas", "num_threads", "scratch", "invoke_reference")
    bad = []
    for path in sorted((ROOT / "interpreter" / "kernels").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        hit = sorted(w for w in words if any(w in name.lower() for name in names))
        if hit:
            bad.append(f"{path.relative_to(ROOT.parent)}: {', '.join(hit)}")
    assert not bad, "\n".join(bad)


def test_the_speed_layer_registers_only_for_teaching_layer_data():
    # every fast path is keyed by an <Op>Data class the teaching layer defines, and states its variants
    from workbench.interpreter import fast
    from workbench.interpreter.variants import VARIANTS

    fast._load()
    assert fast.FAST_PATHS
    for (op, cls), (bind, variants) in fast.FAST_PATHS.items():
        assert cls.__module__.startswith("workbench.interpreter.kernels."), (op, cls)
        assert bind.__module__.startswith("workbench.interpreter.fast."), (op, bind)
        assert variants and variants <= set(VARIANTS), (op, cls, variants)


def test_kernel_files_stay_readable():
    # at most three op files over 300 lines, none over 450
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines())
             for p in (ROOT / "interpreter" / "kernels").glob("*.py")}
    over = sorted(name for name, n in sizes.items() if n > 300)
    assert max(sizes.values()) <= 450, {n: s for n, s in sizes.items() if s > 450}
    assert len(over) <= 3, {n: sizes[n] for n in over}
