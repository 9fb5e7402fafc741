"""The instructor pack (docs/instructors.md, docs/cheatsheet.md, docs/glossary.md): the glossary has an
anchor for every term the notebooks rely on and keeps its entries in alphabetical order, every relative
link of the three pages reaches an existing file (and, with a #fragment, an existing anchor), README.md
and docs/notebooks.md link the three pages, and every call and command of the cheat sheet runs."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACK = [DOCS / "instructors.md", DOCS / "cheatsheet.md", DOCS / "glossary.md"]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')

# Every term the glossary must define, with the anchor a page or a notebook links to.
REQUIRED = {
    "FlatBuffer": "flatbuffer", "vtable": "vtable", "soffset": "soffset", "table": "table",
    "buffer": "buffer", "operator code": "operator-code", "builtin operator": "builtin-operator",
    "custom operator": "custom-operator", "options table": "options-table", "op version": "op-version",
    "minimum runtime": "minimum-runtime", "kernel registration": "kernel-registration",
    "delegate": "delegate", "partition": "partition", "node subset": "node-subset",
    "execution plan": "execution-plan", "allowlist": "allowlist", "TIDL": "tidl", "EVE": "eve",
    "DSP": "dsp", "Edge TPU": "edge-tpu", "XNNPACK": "xnnpack", "quantization": "quantization",
    "scale": "scale", "zero point": "zero-point", "per-tensor": "per-tensor", "per-channel": "per-channel",
    "int8": "int8", "int16x8": "int16x8", "16x8": "16x8", "hybrid quantization": "hybrid-quantization",
    "dynamic-range quantization": "dynamic-range-quantization", "float16 weights": "float16-weights",
    "requantization": "requantization", "fixed-point multiplier": "fixed-point-multiplier",
    "SRDHM": "srdhm", "rounding divide by power of two": "rounding-divide-by-power-of-two", "SNR": "snr",
    "calibration": "calibration", "power-of-two scale": "power-of-two-scale", "producer": "producer",
    "min_consumer": "min-consumer", "bad_consumers": "bad-consumers", "Chrome trace": "chrome-trace",
    "Perfetto": "perfetto",
}


def text_without_code(path: Path) -> str:
    return re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)


def glossary_entries() -> list[tuple[str, list[str], str]]:
    """(title, anchors, body) of every ``## `` entry of the glossary."""
    text = (DOCS / "glossary.md").read_text(encoding="utf-8")
    entries = []
    for block in re.split(r"(?m)^(?=## )", text)[1:]:
        heading, _, body = block.partition("\n")
        entries.append((ANCHOR.sub("", heading[3:]).strip(), ANCHOR.findall(heading), body.strip()))
    return entries


def heading_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    heading = ANCHOR.sub("", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def anchors_of(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    headings = re.findall(r"(?m)^#{1,6} (.+)$", re.sub(r"```.*?```", "", text, flags=re.S))
    return set(ANCHOR.findall(text)) | {heading_slug(h) for h in headings}


def test_glossary_has_an_anchor_for_every_required_term():
    anchors = {a for _, names, _ in glossary_entries() for a in names}
    missing = {term: anchor for term, anchor in REQUIRED.items() if anchor not in anchors}
    assert not missing, f"docs/glossary.md has no entry (anchor) for {missing}"


def test_every_glossary_entry_has_an_anchor_and_a_definition():
    entries = glossary_entries()
    assert len(entries) >= len(set(REQUIRED.values())) - 8   # several terms share an entry
    for title, anchors, body in entries:
        assert anchors, f"glossary entry {title!r} has no <a id> anchor"
        assert len(body.split()) >= 12, f"glossary entry {title!r} has no definition worth the name"


def test_glossary_anchors_are_unique():
    anchors = [a for _, names, _ in glossary_entries() for a in names]
    assert len(anchors) == len(set(anchors)), sorted({a for a in anchors if anchors.count(a) > 1})


def test_glossary_entries_are_in_alphabetical_order():
    keys = [re.sub(r"^[^a-z0-9]+", "", title.replace("`", "").lower()) for title, _, _ in glossary_entries()]
    out_of_order = [(a, b) for a, b in zip(keys, keys[1:]) if a > b]
    assert not out_of_order, f"glossary entries out of order: {out_of_order[:3]}"


@pytest.mark.parametrize("path", PACK, ids=lambda p: p.name)
def test_every_relative_link_of_the_pack_resolves(path):
    bad = []
    for link in LINK.findall(text_without_code(path)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", link):
            continue  # a URL
        target, _, fragment = link.partition("#")
        file = path if not target else (path.parent / target)
        if not file.exists():
            bad.append(f"{link}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors_of(file):
            bad.append(f"{link}: no anchor #{fragment} in {file.name}")
    assert not bad, f"{path.name}: {bad}"


def test_every_link_to_a_glossary_term_finds_its_entry():
    """Notebooks, answer keys and docs link terms as ``glossary.md#term``: each such anchor exists."""
    anchors = anchors_of(DOCS / "glossary.md")
    sources = [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "notebooks" / "solutions").glob("*.md"),
               *DOCS.glob("*.md"), ROOT / "README.md"]
    missing = sorted({f"{path.relative_to(ROOT)}: #{term}" for path in sources
                      for term in re.findall(r"glossary\.md#([\w-]+)", path.read_text(encoding="utf-8"))
                      if term not in anchors})
    assert not missing, f"links to glossary terms that have no entry: {missing}"


def test_link_checker_sees_a_missing_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text('## <a id="here"></a>Here\n\n## Plain heading\n')
    assert anchors_of(page) == {"here", "plain-heading"}


@pytest.mark.parametrize("page", ["README.md", "docs/notebooks.md"])
def test_the_pack_is_linked_from(page):
    path = ROOT / page
    links = {os.path.normpath(path.parent / link.partition("#")[0]) for link in LINK.findall(text_without_code(path))}
    for wanted in PACK:
        assert str(wanted) in links, f"{page} does not link {wanted.relative_to(ROOT)}"


def test_instructors_page_covers_every_notebook_and_its_answer_key():
    text = (DOCS / "instructors.md").read_text(encoding="utf-8")
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        number = notebook.stem[:2]
        assert re.search(rf"^### {number} · ", text, re.M), f"no section for notebook {notebook.stem}"
        assert f"../notebooks/solutions/{notebook.stem}.md" in text, f"no link to {notebook.stem}'s answer key"


def test_instructors_page_counts_each_notebooks_exercises_as_its_answer_key_does():
    """Each notebook's heading says "N exercises"; the answer key has one `## key` section per exercise
    (besides "explore" and "try-next", which answer the open tasks)."""
    text = (DOCS / "instructors.md").read_text(encoding="utf-8")
    for key_file in sorted((ROOT / "notebooks" / "solutions").glob("*.md")):
        keys = re.findall(r"(?m)^## (\S+) — ", key_file.read_text(encoding="utf-8"))
        count = len([k for k in keys if k not in ("explore", "try-next")])
        heading = re.search(rf"(?m)^### {key_file.stem[:2]} · .*$", text).group(0)
        stated = re.search(r"(\d+) exercises?$", heading)
        assert stated and int(stated.group(1)) == count, (
            f"docs/instructors.md says {heading!r}, but {key_file.name} has {count} exercises: update the "
            "notebook's heading and its table of minutes")


def test_notebooks_page_gives_the_same_times_as_the_instructors_page():
    about = dict(re.findall(r"(?m)^### (\d\d) · .*? — about (\d+) minutes",
                            (DOCS / "instructors.md").read_text(encoding="utf-8")))
    text = (DOCS / "notebooks.md").read_text(encoding="utf-8")
    stated = dict(re.findall(r"(?ms)^### (\d\d) · .*?\*\*Time:\*\*[^*]*?about (\d+)", text))
    assert len(about) == 8 and stated == about


def test_cheatsheet_fits_on_one_page():
    lines = (DOCS / "cheatsheet.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 75, f"docs/cheatsheet.md has {lines} lines: one page is the point"


def test_cheatsheet_python_runs(monkeypatch):
    text = (DOCS / "cheatsheet.md").read_text(encoding="utf-8")
    blocks = [body for lang, body in re.findall(r"(?ms)^```(\w*)\n(.*?)^```", text) if lang == "python"]
    assert blocks
    monkeypatch.chdir(ROOT)   # the sheet's paths are relative to the repository's root
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/cheatsheet.md", "exec"), namespace)
    assert namespace["workbench"].load(namespace["M"]) == namespace["model"]


def cheatsheet_commands() -> list[str]:
    text = (DOCS / "cheatsheet.md").read_text(encoding="utf-8")
    blocks = [body for lang, body in re.findall(r"(?ms)^```(\w*)\n(.*?)^```", text) if not lang]
    lines = [line for block in blocks for line in block.splitlines()]
    return [line.split("#")[0].strip() for line in lines if line.startswith("workbench ")]


def test_cheatsheet_lists_the_five_commands():
    assert {shlex.split(c)[1] for c in cheatsheet_commands()} >= {"inspect", "versions", "partition", "run", "bench"}


@pytest.mark.parametrize("command", cheatsheet_commands())
def test_cheatsheet_command_runs(command, tmp_path, monkeypatch, capsys):
    from workbench.cli import main

    monkeypatch.chdir(ROOT)
    argv = [str(tmp_path / a) if a.endswith(".json") else a for a in shlex.split(command)[1:]]  # no file in the repo
    if argv[0] == "bench":
        argv += ["--runs", "3"]
    status = main(argv)
    out = capsys.readouterr().out
    expected = 1 if argv[0] == "versions" else 0   # `versions --runtime` says "cannot run" with status 1
    assert status == expected, f"{command}: status {status}\n{out}"
    assert out.strip()
