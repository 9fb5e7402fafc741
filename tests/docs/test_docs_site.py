"""The documentation: README.md stays short, every relative link of README.md and docs/*.md points to a
file that exists, and the site builder (dev/build_docs.py, `make docs`) renders a notebook's inline SVG
graphs and the Markdown pages.  The eight real notebooks are rendered in tests/notebooks/test_notebooks.py,
from the copies that module already executes."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def load_builder():
    spec = importlib.util.spec_from_file_location("build_docs", ROOT / "dev" / "build_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def relative_links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)  # code blocks hold no links
    links = [m.group(1) for m in LINK.finditer(text)]
    return [link.split("#")[0] for link in links
            if not re.match(r"^[a-z][a-z0-9+.-]*:", link) and not link.startswith("#")]


def test_readme_fits_on_a_few_screens():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 200, f"README.md has {lines} lines; move details into docs/"


def test_there_are_docs_pages_for_each_topic():
    names = {p.stem for p in DOC_FILES[1:]}
    assert {"architecture", "cli", "interpreter", "delegate", "notebooks"} <= names


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.name)
def test_every_relative_link_points_to_an_existing_file(path):
    links = relative_links(path)
    missing = [link for link in links if not (path.parent / link).exists()]
    assert not missing, f"{path.name}: links to missing files {missing}"


def test_link_finder_sees_relative_links_and_skips_urls(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[a](cli.md#x) ![p](images/g.png) [u](https://example.org/x.md)\n```\n[c](in_code.md)\n```\n")
    assert relative_links(page) == ["cli.md", "images/g.png"]


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.name)
def test_no_page_points_outside_the_repository(path):
    text = path.read_text(encoding="utf-8")
    assert "../" + "shared" not in text and "TFLITE" + "_FACTS" not in text
    assert not re.search(r"\b[Ii]ssues?\s*#?\d+", text)


def tiny_notebook(with_graph: bool):
    svg = '<div><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg></div>'
    cell = new_code_cell("show()", execution_count=1)
    if with_graph:
        cell.outputs = [new_output("display_data", data={"text/html": svg, "text/plain": "<graph>"})]
    else:
        cell.outputs = [new_output("stream", name="stdout", text="no picture\n")]
    return new_notebook(cells=[new_markdown_cell("# A tiny notebook"), cell])


def test_builder_keeps_an_inline_svg_output(tmp_path):
    builder = load_builder()
    page = builder.render_notebook(tiny_notebook(True), tmp_path / "tiny.html")
    html = page.read_text(encoding="utf-8")
    assert "<svg" in html and "<rect" in html   # the graph itself, not a placeholder
    assert builder.shows_a_graph(html)


def test_builder_sees_a_page_without_a_graph(tmp_path):
    builder = load_builder()
    html = builder.render_notebook(tiny_notebook(False), tmp_path / "plain.html").read_text(encoding="utf-8")
    assert "no picture" in html
    assert not builder.shows_a_graph(html)


def test_markdown_links_to_pages_become_html_links():
    builder = load_builder()
    html = builder.render_markdown("[cli](cli.md#json) and [code](../workbench/config.py) "
                                   "![g](images/g.png)", "docs", "t")
    assert 'href="cli.html#json"' in html
    assert 'href="../../workbench/config.py"' in html
    assert 'src="images/g.png"' in html
    readme = builder.render_markdown("[arch](docs/architecture.md)", ".", "README")
    assert 'href="architecture.html"' in readme


def test_builder_without_notebooks_writes_index_and_every_page(tmp_path):
    builder = load_builder()
    report = builder.build(tmp_path, execute=False)
    assert (tmp_path / "index.html").is_file()
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    for name in report["pages"]:
        assert (tmp_path / name).is_file()
        assert f'href="{name}"' in index
    assert "readme.html" in report["pages"] and "architecture.html" in report["pages"]
    assert (tmp_path / "images" / "digits_cnn_tidl.png").is_file()
