"""No pointer to a document or a tracker a user of the repository does not have.

A clone of the repository holds the package, its tests and its notebooks; comments, docstrings,
strings and notebook text must stand on what is in it or on public upstream sources (a TensorFlow /
LiteRT file and function, a paper by its title).  The files git tracks under ``workbench/``,
``tests/`` and ``notebooks/`` with a suffix in :data:`SUFFIXES` are read line by line, and a line
fails, named as ``path:line``, when it holds:

* the name of the notes file kept beside the repository (spelled in :data:`PATTERNS`);
* a tracker reference, the word issue followed by a number (with or without ``#``) — unless an
  upstream repository is named right before it (``owner/name issues #N``: a public thread anyone can open);
* the name of an architecture document the repository does not track;
* the parent folder beside the repository (``..`` then ``/shared``): never under ``workbench/`` or
  ``notebooks/``.  The rule chosen for ``tests/``: the tests read the data CI provides there, so a
  line may name that folder's two data directories (``models``, ``edgetpu_pairs``) and nothing else
  of it (no other sub-folder, not the folder alone).

The patterns are built from pieces so that this file does not match them itself.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("workbench", "tests", "notebooks")
SUFFIXES = (".py", ".ipynb", ".md", ".json", ".txt", ".c", ".ll")

_NOTES = "TFLITE" + "_FACTS"
_ARCH_DOC = "ARCHITECTURE" + r"\.md"
_PARENT = r"\.\./" + "shared"
DATA_DIRS = ("models", "edgetpu_pairs")

PATTERNS = {
    "the notes file beside the repository": re.compile(_NOTES),
    "a tracker reference": re.compile(r"(?P<pre>[\w.-]+/[\w.-]+\s+)?\b[Ii]ssues?\s*#?\d+"),
    "an architecture document the repository does not track": re.compile(_ARCH_DOC),
    "the folder beside the repository": re.compile(_PARENT + r"(?P<rest>/[\w.-]+)?"),
}


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--", *SCANNED], cwd=ROOT, capture_output=True, check=False)
    if out.returncode != 0:
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    return sorted(p for p in out.stdout.decode().split("\0") if p.endswith(SUFFIXES))


def _tracks_architecture_doc() -> bool:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
    return any(re.fullmatch(r"(.*/)?" + _ARCH_DOC, p) for p in out.stdout.splitlines())


def findings(path: str, text: str, *, architecture_doc_tracked: bool = False) -> list[str]:
    """``path:line: what — the line`` for every line of ``text`` (the file ``path``) that breaks a rule."""
    in_tests = path.startswith("tests/")
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in PATTERNS.items():
            for m in pattern.finditer(line):
                if what == "a tracker reference" and m.group("pre"):
                    continue  # an upstream repository's public thread
                if what.startswith("an architecture") and architecture_doc_tracked:
                    continue
                if what == "the folder beside the repository" and in_tests \
                        and (m.group("rest") or "").lstrip("/") in DATA_DIRS:
                    continue  # the data CI provides, read by the tests
                found.append(f"{path}:{number}: {what} — {line.strip()[:160]}")
    return found


def test_no_file_points_outside_the_repository():
    doc_tracked = _tracks_architecture_doc()
    problems = []
    for rel in _tracked():
        path = ROOT / rel
        if not path.is_file():
            continue  # deleted in the working tree, not yet committed
        text = path.read_text(encoding="utf-8", errors="replace")
        problems += findings(rel, text, architecture_doc_tracked=doc_tracked)
    assert not problems, ("say the fact and cite its upstream source instead:\n" + "\n".join(problems))


@pytest.mark.parametrize("path, line", [
    ("workbench/a.py", "# rounding as in " + _NOTES + " 4.2"),
    ("tests/a.py", "# since iss" + "ue 13 the delegate ..."),
    ("notebooks/a.md", "see Iss" + "ue #7"),
    ("tests/a.py", '"""Imports run one way (ARCHITECTURE' + '.md)"""'),
    ("workbench/a.py", "MODELS = '.." + "/shared/models'"),
    ("notebooks/a.ipynb", '"source": ["see ..' + '/shared/reference"]'),
    ("tests/a.py", "# the notes in .." + "/shared/reference/notes.md"),
    ("tests/a.py", "# (the repository's .." + "/shared folder)"),
])
def test_each_rule_flags_its_case(path, line):
    assert findings(path, "ok\n" + line) and findings(path, "ok\n" + line)[0].startswith(f"{path}:2: ")


@pytest.mark.parametrize("path, line", [
    ("tests/a.py", "SHARED = ROOT.parent / '..' / 'x'  # CI puts models in .." + "/shared/models"),
    ("tests/a.py", "reason='no pairs (CI provides .." + "/shared/edgetpu_pairs)'"),
    ("workbench/a.json", '"source": "google-coral/edgetpu issues #342, #409"'),
    ("workbench/a.py", "ordered as semver.org §11 says"),
    ("workbench/a.py", "tissue 3 and issuer 4 are words, not references"),
])
def test_what_the_rules_allow(path, line):
    assert findings(path, line) == []
