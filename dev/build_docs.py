"""Build the static documentation site under build/docs/ (`make docs`).

What it does:
  1. executes the notebooks under notebooks/ (nbclient, working directory notebooks/, a ``python3``
     kernel pinned to the interpreter running this script, as tests/notebooks/test_notebooks.py does);
  2. renders each executed notebook with its outputs to HTML (nbconvert's HTMLExporter, which keeps
     the ``text/html`` outputs of the views, so their inline <svg> graphs show in the static page;
     widgets show the state nbclient saved, or their text);
  3. renders README.md and docs/*.md to HTML (mistune, which the jupyter stack already installs),
     with links to .md pages pointing at their .html pages;
  4. writes index.html linking everything.

Usage (from the repository root):
    .venv/bin/python dev/build_docs.py [--out build/docs] [--skip-notebooks]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
DOCS_DIR = ROOT / "docs"
CELL_TIMEOUT = 600

_STYLE = """<style>
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #222; }
pre { background: #f6f8fa; padding: .8rem; overflow-x: auto; }
code { background: #f6f8fa; padding: 0 .2rem; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .2rem .5rem; vertical-align: top; }
img { max-width: 100%; }
nav { margin-bottom: 1.5rem; font-size: .9rem; }
</style>"""


# ---------------------------------------------------------------------------- notebooks

def pin_python3_kernel(spec_root: Path) -> str:
    """Write a ``python3`` kernelspec running this interpreter and put it first on JUPYTER_PATH."""
    spec_dir = spec_root / "kernels" / "python3"
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (workbench venv)", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    os.environ["JUPYTER_PATH"] = str(spec_root)
    return "python3"


def execute_notebook(path: Path, kernel: str = "python3"):
    """Execute one notebook in memory (nothing is written back into notebooks/) and return it."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name=kernel, timeout=CELL_TIMEOUT, allow_errors=False,
                   resources={"metadata": {"path": str(NOTEBOOK_DIR)}}).execute()
    return nb


_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_WIDGET_NOTE = ("<p><em>An interactive widget, shown here in the state the executed notebook left it in; "
                "run the notebook in JupyterLab to use it.</em></p>")


def _widget_html(model_id: str, state: dict, seen: set) -> list[str]:
    """The HTML a widget shows in its last state: its HTML values and its Output children's rich outputs."""
    model = state.get(model_id)
    if model is None or model_id in seen:
        return []
    seen.add(model_id)
    values = model.get("state", {})
    parts = []
    if model.get("model_name") == "HTMLModel" and values.get("value"):
        parts.append(values["value"])
    for output in values.get("outputs", ()):  # an Output widget holds ordinary outputs
        data = output.get("data", {})
        if "text/html" in data:
            parts.append("".join(data["text/html"]))
        elif "image/svg+xml" in data:
            parts.append("".join(data["image/svg+xml"]))
        elif output.get("output_type") == "stream":
            parts.append(f"<pre>{html.escape(''.join(output.get('text', '')))}</pre>")
    children = values.get("children", ())
    children = [children] if isinstance(children, str) else children
    for child in children:
        if isinstance(child, str) and child.startswith("IPY_MODEL_"):
            parts += _widget_html(child[len("IPY_MODEL_"):], state, seen)
    return parts


def freeze_widgets(nb):
    """A copy of ``nb`` whose widget outputs are static HTML (their last state), so that a page needs no
    widget JavaScript and the graphs inside widgets show in it as inline SVG."""
    import copy

    nb = copy.deepcopy(nb)
    state = nb.metadata.get("widgets", {}).get(_WIDGET_STATE, {}).get("state", {})
    for cell in nb.cells:
        for output in cell.get("outputs", ()):
            data = output.get("data", {})
            if _WIDGET_VIEW not in data:
                continue
            parts = _widget_html(data[_WIDGET_VIEW].get("model_id", ""), state, set())
            snapshot = "\n".join(parts) if parts else data.get("text/html", "")
            output["data"] = {"text/html": f"<div class=\"widget-snapshot\">{snapshot}</div>{_WIDGET_NOTE}",
                              "text/plain": data.get("text/plain", "")}
    nb.metadata.pop("widgets", None)
    return nb


def render_notebook(nb, out_path: Path, title: str | None = None) -> Path:
    """Write an executed notebook as one static HTML page with its outputs; return the path."""
    from nbconvert import HTMLExporter

    nb = freeze_widgets(nb)
    exporter = HTMLExporter()  # the "lab" template; text/html outputs (inline <svg>) are kept as they are
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title or out_path.stem}})
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(body, encoding="utf-8")
    return out_path


def shows_a_graph(page_html: str) -> bool:
    """Whether a rendered page holds at least one inline SVG or an image."""
    return "<svg" in page_html or "<img" in page_html


# ---------------------------------------------------------------------------- markdown pages

_LINK = re.compile(r'(href|src)="([^"#:]+)(#[^"]*)?"')


def _rewrite_link(target: str, source_dir: str) -> str:
    """A relative link of a Markdown file, as seen from build/docs/ (pages sit flat there)."""
    path = os.path.normpath(os.path.join(source_dir, target))  # relative to the repository root
    if path.startswith("docs/"):
        inner = path[len("docs/"):]
        return inner[:-3] + ".html" if inner.endswith(".md") else inner
    if path == "README.md":
        return "readme.html"
    return "../../" + path  # a file of the repository (build/docs/ is two levels down)


def render_markdown(text: str, source_dir: str = "docs", title: str = "") -> str:
    """Markdown → a standalone HTML page; ``source_dir`` is the file's folder, relative to the root."""
    import mistune

    body = mistune.html(text)
    body = _LINK.sub(lambda m: f'{m[1]}="{_rewrite_link(m[2], source_dir)}{m[3] or ""}"', body)
    nav = '<nav><a href="index.html">TFLite Workbench documentation</a></nav>'
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"{_STYLE}</head><body>{nav}\n{body}</body></html>\n")


def _first_heading(text: str, default: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return default


# ---------------------------------------------------------------------------- the site

def build(out_dir: Path, *, execute: bool = True, notebooks: list[Path] | None = None) -> dict:
    """Build the site into ``out_dir``; return {"notebooks": [...], "pages": [...], "seconds": {...}}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    notebooks = sorted(NOTEBOOK_DIR.glob("*.ipynb")) if notebooks is None else notebooks
    report: dict = {"notebooks": [], "pages": [], "seconds": {}}

    pages = [("readme.html", "README", ROOT / "README.md", ".")]
    pages += [(p.stem + ".html", None, p, "docs") for p in sorted(DOCS_DIR.glob("*.md"))]
    entries = []
    for name, title, src, folder in pages:
        text = src.read_text(encoding="utf-8")
        title = title or _first_heading(text, src.stem)
        (out_dir / name).write_text(render_markdown(text, folder, title), encoding="utf-8")
        report["pages"].append(name)
        entries.append((name, title))
    if (DOCS_DIR / "images").is_dir():
        shutil.copytree(DOCS_DIR / "images", out_dir / "images", dirs_exist_ok=True)

    nb_entries = []
    if execute:
        import nbformat

        with tempfile.TemporaryDirectory() as spec_root:
            kernel = pin_python3_kernel(Path(spec_root))
            for path in notebooks:
                start = time.perf_counter()
                nb = execute_notebook(path, kernel)
                page = render_notebook(nb, out_dir / "notebooks" / (path.stem + ".html"), path.stem)
                if not shows_a_graph(page.read_text(encoding="utf-8")):
                    report.setdefault("without_graph", []).append(path.stem)
                nbformat.write(nb, out_dir / "notebooks" / path.name)  # the executed copy, downloadable
                report["seconds"][path.stem] = round(time.perf_counter() - start, 1)
                report["notebooks"].append(f"notebooks/{page.name}")
                nb_entries.append((f"notebooks/{page.name}", path.stem))
    else:  # keep the notebook pages an earlier full build left
        nb_entries = [(f"notebooks/{p.name}", p.stem) for p in sorted((out_dir / "notebooks").glob("*.html"))]

    items = "".join(f'<li><a href="{n}">{html.escape(t)}</a></li>' for n, t in nb_entries)
    docs = "".join(f'<li><a href="{n}">{html.escape(t)}</a></li>' for n, t in entries)
    index = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>TFLite Workbench</title>{_STYLE}"
             f"</head><body><h1>TFLite Workbench</h1>"
             f"<h2>Notebooks, executed</h2><ol start=\"0\">{items or '<li>(not built: --skip-notebooks)</li>'}</ol>"
             f"<h2>Documentation</h2><ul>{docs}</ul></body></html>\n")
    (out_dir / "index.html").write_text(index, encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "docs")
    parser.add_argument("--skip-notebooks", action="store_true",
                        help="render the Markdown pages only (keep notebook pages built before)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    report = build(args.out, execute=not args.skip_notebooks)
    for name, seconds in report["seconds"].items():
        print(f"  {name}: {seconds} s")
    for name in report.get("without_graph", []):
        print(f"note: notebooks/{name}.html shows no inline SVG graph or image")
    print(f"{len(report['notebooks'])} notebooks, {len(report['pages'])} pages → {args.out / 'index.html'}"
          f" ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
