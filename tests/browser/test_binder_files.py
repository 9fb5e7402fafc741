"""Binder (repo2docker) set-up and the two commands: the files follow the conventions they rely on.

repo2docker uses ``binder/`` when it exists (root-level config is then ignored): ``runtime.txt`` picks
Python (``python-3.11``; ignored if an ``environment.yml`` is there), ``apt.txt`` lists Ubuntu packages,
``postBuild`` must be executable and start with ``#!/bin/bash`` and ``set -e`` (otherwise a failing
step is ignored).  The README's Binder link and ``make lab`` open JupyterLab on notebook 00.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
TOUR = "notebooks/00_tour.ipynb"


def _commands(script: str) -> list:
    """The script's lines that do something (no blank lines, no comments; continuations joined)."""
    joined = re.sub(r"\\\n\s*", " ", script)
    return [ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def test_binder_uses_the_pip_route_with_python_311():
    assert BINDER.is_dir()
    assert not (BINDER / "environment.yml").exists(), "an environment.yml would make repo2docker ignore runtime.txt"
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"


def test_apt_txt_installs_graphviz():
    packages = [ln.strip() for ln in (BINDER / "apt.txt").read_text().splitlines()
                if ln.strip() and not ln.strip().startswith("#")]
    assert "graphviz" in packages


def test_post_build_is_an_executable_bash_script_that_stops_on_errors():
    post = BINDER / "postBuild"
    text = post.read_text()
    assert text.startswith("#!/bin/bash\n"), "postBuild must start with #!/bin/bash"
    assert _commands(text)[0] == "set -e", "set -e must come before any command (else errors are ignored)"
    assert post.stat().st_mode & 0o111, "postBuild is not executable"
    if shutil.which("git") and (ROOT / ".git").exists():
        mode = subprocess.run(["git", "ls-files", "-s", "binder/postBuild"], cwd=ROOT, capture_output=True,
                              text=True).stdout.split()
        if mode:                                         # tracked: the executable bit is in the commit too
            assert mode[0] == "100755", f"git stores binder/postBuild as {mode[0]}; git update-index --chmod=+x"
    if shutil.which("bash"):
        check = subprocess.run(["bash", "-n", str(post)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


def test_post_build_installs_fetches_and_builds_the_kernel_library():
    cmds = _commands((BINDER / "postBuild").read_text())
    install = [c for c in cmds if re.search(r"pip install\b.*\.\[[^\]]*\blab\b", c)]
    assert install, "postBuild does not install the project with the lab extras"
    fetch = [i for i, c in enumerate(cmds) if "workbench.corpus" in c]
    build = [i for i, c in enumerate(cmds) if re.search(r"\bworkbench precompile\b", c)]
    assert fetch, "postBuild does not fetch the real-model corpus"
    assert build, "postBuild does not build the precompiled kernel library"
    assert cmds.index(install[0]) < fetch[0] < build[0], "install, then fetch the corpus, then precompile"


def test_readme_binder_link_opens_the_tour_in_jupyterlab():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"https://mybinder\.org/v2/gh/[^\s)\]]+", readme)
    assert links, "no Binder link in the README"
    for link in links:
        url = urlparse(link)
        parts = url.path.split("/")            # ['', 'v2', 'gh', OWNER, REPO, REF]
        assert len(parts) == 6 and all(parts[3:]), f"not /v2/gh/OWNER/REPO/REF: {link}"
        assert parse_qs(url.query).get("urlpath") == [f"lab/tree/{TOUR}"], link
    assert "mybinder.org/badge_logo.svg" in readme


def test_the_tour_exists():
    if not (ROOT / TOUR).is_file():
        pytest.fail(f"{TOUR} is missing: the Binder link and `make lab` open it")


def test_make_lab_opens_the_tour_and_make_test_lists_the_slowest_tests():
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    lab = subprocess.run(["make", "-n", "-s", "lab"], cwd=ROOT, capture_output=True, text=True)
    assert lab.returncode == 0, lab.stderr
    assert re.search(r"jupyter lab .*--LabApp\.default_url=/lab/tree/00_tour\.ipynb notebooks/", lab.stdout), \
        lab.stdout[-2000:]
    test = subprocess.run(["make", "-n", "-s", "test"], cwd=ROOT, capture_output=True, text=True)
    assert test.returncode == 0, test.stderr
    assert "--durations=15" in test.stdout
