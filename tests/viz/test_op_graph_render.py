"""The renderers: reasons visible without hovering (badge + table), inline SVG inside HTML, one
self-contained file, a text fallback, and the rename that ended the two ``GraphView`` classes."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import graphviz
import pytest

import workbench
from helpers.viz_models import HAVE_DOT, branchy_model
from workbench import viz
from workbench.partition import compile as compile_plan
from workbench.partition import partition

needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="graphviz's dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"


@pytest.fixture(scope="module")
def plan(corpus_paths):
    return partition(workbench.load(corpus_paths["selfie_segmentation"]), "tidl", "tidl")


def _svg_groups(svg_text: str) -> dict:
    """id → <g> element of an inline SVG."""
    root = ET.fromstring(svg_text)
    return {g.get("id"): g for g in root.iter(f"{SVG}g") if g.get("id")}


@needs_dot
def test_every_cpu_node_has_its_reason_in_the_table_and_its_badge_on_the_node(plan):
    g = viz.op_graph(plan)
    page = g.html()
    prefix = g._cache["prefix"]
    groups = _svg_groups(g.svg())
    cpu = [p for p in plan.placements if p.partition is None]
    assert cpu
    for p in cpu:
        n = g.node(p.node)
        row = re.search(rf"<tr id='{prefix}_r{n.badge}'>(.*?)</tr>", page, re.S)
        assert row and html.escape(p.reason, quote=True) in row.group(1), p
        node_g = groups[f"{prefix}_n{p.node}"]
        badge = next(x for x in node_g.iter(f"{SVG}g") if x.get("id") == f"a_{prefix}_badge_n{p.node}_{n.badge}")
        texts = [t.text for t in badge.iter(f"{SVG}text")]
        assert texts == [str(n.badge)]
        link = next(badge.iter(f"{SVG}a"))
        assert link.get(f"{XLINK}href") == f"#{prefix}_r{n.badge}" and p.reason in link.get(f"{XLINK}title")
    for p in plan.placements:   # device nodes carry no badge
        if p.partition is not None:
            assert not any((x.get("id") or "").startswith(f"a_{prefix}_badge_n{p.node}_")
                           for x in groups[f"{prefix}_n{p.node}"].iter(f"{SVG}g"))


@needs_dot
def test_tooltips_and_bytes_are_in_the_svg(plan):
    g = viz.op_graph(plan)
    s = g.svg()
    assert not s.startswith("<?xml") and "<!DOCTYPE" not in s and s.startswith("<svg")
    assert "on the CPU [1]: HARD_SWISH: not supported" in s
    e = g.crossing[0]
    assert f"⇄ {e.nbytes:,} B" in s


def test_edges_show_shape_and_dtype(plan):
    g = viz.op_graph(plan)
    src = g.dot().source
    for e in g.edges:
        if not e.static:
            assert e.label in src
    assert "[1,128,128,16] f32" in src


@needs_dot
def test_save_html_writes_one_self_contained_file(plan, tmp_path):
    g = viz.op_graph(plan).with_overlay("int8 error", {3: 0.125}, fmt="{:.3f}")
    out = g.save_html(tmp_path / "plan.html")
    assert list(tmp_path.iterdir()) == [out]
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") == 1 and "</svg>" in text
    assert "<?xml" not in text and "<!DOCTYPE svg" not in text
    assert "int8 error 0.125" in text and "HARD_SWISH: not supported" in text
    assert not re.search(r"<(script|link|img|iframe)\b", text, re.I)
    assert not re.search(r"\b(src|href|xlink:href)\s*=\s*[\"'](?!#)", text, re.I)
    assert not re.search(r"url\((?!#)", text)


@needs_dot
def test_side_by_side_saves_both_graphs(plan, tmp_path):
    s = viz.offload_view(compile_plan(plan), plan)
    text = s.save_html(tmp_path / "fig5.html").read_text(encoding="utf-8")
    assert text.count("<svg") == 2 and "offload op" in text
    assert set(s._repr_mimebundle_()) == {"text/plain", "text/html"}


def test_mimebundle_has_text_and_html(plan):
    g = viz.op_graph(plan)
    bundle = g._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert "[7] partition-limit: its partition is over the limit on partitions" in bundle["text/plain"]
    assert ("supported, but the walk reset the subgraph's output at node 192 (RESIZE_BILINEAR), leaving it between "
            "that node and the graph output, and max_num_subgraphs=16 passes were made: 193, 194, 195, 196"
            in bundle["text/plain"])
    assert "P1 · tidl · 8 nodes" in bundle["text/plain"]
    assert set(g._repr_mimebundle_(include={"text/plain"})) == {"text/plain"}
    assert str(g) == bundle["text/plain"] and repr(g).startswith("OpGraph(plan tidl/tidl")


def test_html_without_dot_still_has_the_tables(plan, monkeypatch):
    g = viz.op_graph(plan)

    def no_dot(*a, **k):
        raise graphviz.ExecutableNotFound(["dot"])

    monkeypatch.setattr(graphviz.Digraph, "pipe", no_dot)
    page = g.html()
    assert "apt-get install graphviz" in page and "HARD_SWISH: not supported" in page and "<svg" not in page


@needs_dot
def test_collapsed_and_focused_views_render(plan):
    g = viz.op_graph(plan)
    c = g.collapse(3)
    s = c.svg()
    assert s.count('class="node"') == len(c.nodes)
    assert "chains collapsed" in c.html() and "double border" in c.html()
    f = g.focus(100, 2)
    assert _svg_groups(f.svg()) and "neighbour" in f.dot().source


def test_model_view_legend_and_custom_ops(corpus_paths):
    g = viz.op_graph(workbench.load(corpus_paths["selfie_segmentation"]))
    src = g.dot().source
    assert "Convolution2DTransposeBias v1" in src and "#fce4ec" in src     # the custom op stands out
    assert "operator (op + version)" in g.html()


def test_the_two_graph_classes_have_two_names():
    from workbench.partition import GraphView

    assert not hasattr(viz, "GraphView")
    assert viz.TensorGraph is not GraphView and viz.graph_view(branchy_model()).__class__ is viz.TensorGraph


def test_viz_works_without_model_explorer_installed():
    code = ("import sys; sys.modules['model_explorer'] = None\n"
            "import workbench.viz as v\n"
            "import sys; sys.path.insert(0, 'tests'); from helpers.viz_models import branchy_model\n"
            "g = v.op_graph(branchy_model()); g.summary(); g._repr_mimebundle_()\n"
            "try:\n    g.explorer_node_data()\nexcept ImportError as e:\n    print('ImportError:', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=_repo())
    assert out.returncode == 0, out.stderr
    assert "ImportError: exporting Model Explorer node data needs the ai-edge-model-explorer package" in out.stdout


def _repo():
    from pathlib import Path

    return str(Path(__file__).resolve().parents[2])
