"""The built wheel (and sdist) is the whole library: installed into a fresh virtualenv and run from a
folder outside the repository, the CLI and the views work.

The wheel is built once per module, from a copy of the source tree as git sees it (tracked files and
untracked ones that are not ignored): building in the repository itself would reuse its ``build/``
folder, whose stale modules setuptools copies into the wheel.  ``--no-build-isolation`` uses this
interpreter's setuptools (the test extras pin the version ``[build-system]`` asks for), so nothing is
downloaded.

The child virtualenv gets its dependencies (numpy, numba, ...) from this interpreter's site-packages
through a ``.pth`` file holding their paths.  Such a line only appends the folder to ``sys.path``;
the ``.pth`` files inside it are not run, so the editable install of the parent (a finder hook in
``__editable__.*.pth``) never loads in the child, and the child's own site-packages comes first:
:func:`test_the_child_imports_the_wheels_copy` checks both.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "sample_models" / "digits_cnn_float.tflite"
TOP_LEVEL = ("pyproject.toml", "README.md", "MANIFEST.in", "LICENSE")
TIMEOUT = 600


def _run(cmd, cwd, env=None, check=True) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} (in {cwd}) exited {proc.returncode}\n"
                    f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}")
    return proc


def _git_files(*args: str) -> list[str]:
    out = _run(["git", "ls-files", "-z", *args], cwd=REPO).stdout
    return [p for p in out.split("\0") if p and "__pycache__" not in p.split("/")]


def _setuptools_version() -> tuple[int, ...]:
    version = importlib.metadata.version("setuptools")
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit())


@pytest.fixture(scope="module")
def source_tree(tmp_path_factory) -> Path:
    """A copy of what the distributions are built from: workbench/ and the top-level project files."""
    if _setuptools_version() < (77,):
        pytest.fail(f"setuptools {importlib.metadata.version('setuptools')} is older than the >=77 that "
                    "pyproject.toml's [build-system] needs; `make test` installs the test extras, which pin it")
    src = tmp_path_factory.mktemp("src")
    files = _git_files("--cached", "--others", "--exclude-standard", "--", "workbench", *TOP_LEVEL)
    for rel in files:
        path = REPO / rel
        if path.is_file():  # a tracked file deleted in the working tree is not built
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / rel)
    assert (src / "pyproject.toml").is_file() and (src / "workbench" / "__init__.py").is_file()
    return src


@pytest.fixture(scope="module")
def wheel(source_tree, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", out, source_tree], cwd=source_tree)
    (whl,) = out.glob("tflite_workbench-*.whl")
    return whl


@pytest.fixture(scope="module")
def sdist(source_tree, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    _run([sys.executable, "-c", "import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])",
          out], cwd=source_tree)
    (tar,) = out.glob("tflite_workbench-*.tar.gz")
    return tar


def _shipped_by_git() -> list[str]:
    """Every non-Python file under workbench/ that git tracks: what the library reads at run time."""
    files = [p for p in _git_files("--", "workbench") if not p.endswith(".py")]
    assert "workbench/partition/targets/tidl.json" in files  # the listing itself is right
    return files


def test_the_wheel_holds_every_data_file_git_tracks_under_workbench(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [p for p in _shipped_by_git() if p not in names]
    assert not missing, f"{wheel.name} lacks files the library reads (declare them in pyproject.toml's " \
                        f"[tool.setuptools.package-data]): {missing}"


def test_the_wheel_holds_every_module_git_tracks_under_workbench(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = [p for p in _git_files("--", "workbench") if p.endswith(".py") and (REPO / p).is_file()]
    missing = [p for p in tracked if p not in names]
    assert not missing, f"{wheel.name} lacks modules (a folder without __init__.py?): {missing}"


def test_the_sdist_holds_every_data_file_git_tracks_under_workbench(sdist):
    with tarfile.open(sdist) as tar:
        root = sdist.name[: -len(".tar.gz")]
        names = {n.removeprefix(root + "/") for n in tar.getnames()}
    missing = [p for p in _shipped_by_git() if p not in names]
    assert not missing, f"{sdist.name} lacks files the library reads: {missing}"


# ---------------------------------------------------------------------------------------------
# the wheel installed into a fresh virtualenv, run from a folder outside the repository
# ---------------------------------------------------------------------------------------------
class Child:
    def __init__(self, root: Path, work: Path):
        self.root, self.work = root, work
        self.bin = root / "bin"
        self.python = self.bin / "python"
        self.site = Path(_run([self.python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                              cwd=work, env=self.env()).stdout.strip())

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONSAFEPATH"] = "1"  # the working directory is never put on sys.path
        return env

    def run(self, *args, check=True) -> subprocess.CompletedProcess:
        return _run(args, cwd=self.work, env=self.env(), check=check)

    def workbench(self, *args, check=True) -> subprocess.CompletedProcess:
        return self.run(self.bin / "workbench", *args, check=check)


def _parent_paths() -> list[str]:
    """This interpreter's import folders (its site-packages and whatever its .pth files added), less any
    that holds a ``workbench`` (the repository) and the tests/ folder pytest put on sys.path."""
    out = []
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        if (path.is_dir() and not (path / "workbench").exists() and path != REPO / "tests"
                and REPO / "tests" not in path.parents and str(path) not in out):
            out.append(str(path))
    return out


@pytest.fixture(scope="module")
def child(wheel, tmp_path_factory) -> Child:
    root = tmp_path_factory.mktemp("venv")
    work = tmp_path_factory.mktemp("outside")
    assert REPO not in work.parents and work != REPO
    _run([sys.executable, "-m", "venv", "--clear", "--without-pip", root], cwd=work)
    env = Child(root, work)
    (env.site / "_parent_site_packages.pth").write_text("".join(f"{p}\n" for p in _parent_paths()))
    _run([sys.executable, "-m", "pip", "--python", env.python, "install", "--no-deps", "--no-index", "-q",
          wheel], cwd=work)
    shutil.copy2(MODEL, work / "model.tflite")
    return env


def test_the_child_imports_the_wheels_copy(child):
    probe = ("import json, sys, numpy, importlib.metadata as md, workbench, workbench.partition;"
             "print(json.dumps({'workbench': workbench.__file__, 'numpy': numpy.__file__,"
             " 'finders': [repr(f) for f in sys.meta_path],"
             " 'dist': str(md.distribution('tflite-workbench').locate_file(''))}))")
    seen = json.loads(child.run(child.python, "-c", probe).stdout)
    assert Path(seen["workbench"]).is_relative_to(child.site), seen
    assert Path(seen["dist"]).resolve() == child.site.resolve(), seen
    assert not any("editable" in f.lower() for f in seen["finders"]), seen
    assert not Path(seen["numpy"]).is_relative_to(child.site), seen  # dependencies come from the parent


def test_version(child):
    version = child.run(child.python, "-c", "import importlib.metadata as md; print(md.version('tflite-workbench'))")
    out = child.workbench("--version").stdout
    assert out.strip() == f"workbench {version.stdout.strip()}"


def test_inspect(child):
    out = child.workbench("inspect", "model.tflite").stdout
    assert "model.tflite" in out and "schema version 3" in out


def test_versions_against_a_runtime(child):
    out = child.workbench("versions", "model.tflite", "--runtime", "2.3.0").stdout
    assert "CONV_2D" in out


def test_partition_lists_the_targets(child):
    out = child.workbench("partition", "--list-targets").stdout
    names = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert {"tidl", "edgetpu", "xnnpack"} <= names, out


def test_partition_writes_a_model_that_runs(child):
    child.workbench("partition", "model.tflite", "--target", "tidl", "--strategy", "tidl", "-o", "out.tflite")
    assert (child.work / "out.tflite").is_file()
    out = child.workbench("run", "out.tflite").stdout
    assert "float32[1, 10]" in out


def test_run_with_a_delegate_writes_a_trace(child):
    trace = child.work / "t.json"
    trace.unlink(missing_ok=True)
    child.workbench("run", "model.tflite", "--delegate", "tidl", "--trace", "t.json")
    assert json.loads(trace.read_text())["traceEvents"]


def test_op_graph_saves_html(child):
    child.run(child.python, "-c",
              "import workbench, workbench.viz; "
              "workbench.viz.op_graph(workbench.load('model.tflite')).save_html('g.html')")
    assert "<svg" in (child.work / "g.html").read_text()
