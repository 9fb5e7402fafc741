"""What a learner can read in notebook 05's graphs: text size at the picture's natural size, partitions
told apart by colour and tag, one reason numbering in ``op_graph`` and the partition lab, the partitions
table's counts, the offload view's modeled times and order, and the lab's placement changes."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

import pytest

import workbench
from helpers.viz_models import HAVE_DOT
from workbench import viz
from workbench.partition import compile as compile_plan
from workbench.partition import partition
from workbench.viz.render import MIN_FONT_PT, partition_colours
from workbench.viz.view_model import REASON_NUMBER
from workbench.viz.widgets import PartitionLab
from workbench.viz.widgets.partition_lab import placement_changes

needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="graphviz's dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"
PX_PER_PT = 4 / 3          # CSS: 1 pt = 4/3 px; both pictures use points as their user unit


@pytest.fixture(scope="module")
def selfie(corpus_paths):
    return workbench.load(corpus_paths["selfie_segmentation"])


@pytest.fixture(scope="module")
def plan_tflite(selfie):
    return partition(selfie, "tidl", "tflite")


@pytest.fixture(scope="module")
def plan_tidl(selfie):
    return partition(selfie, "tidl", "tidl")


def _root(svg_text: str):
    return ET.fromstring(svg_text)


def _font_sizes(root) -> list:
    out = []
    for t in root.iter(f"{SVG}text"):
        size = t.get("font-size")
        if size is None:
            parent_sizes = [g.get("font-size") for g in root.iter() if t in list(g) and g.get("font-size")]
            size = parent_sizes[0] if parent_sizes else None
        out.append(float(size))
    return out


def _natural_size_pt(root) -> tuple:
    return tuple(float(root.get(k).removesuffix("pt")) for k in ("width", "height"))


# -- the big graph of §1 --------------------------------------------------------------------------------

@needs_dot
def test_the_collapsed_plan_graph_keeps_its_natural_size_with_text_of_at_least_11_px(plan_tflite):
    svg_text = viz.op_graph(plan_tflite).collapse(4).svg()
    root = _root(svg_text)
    style = root.get("style") or ""
    assert "max-width:none" in style and "wb-graph" in root.get("class").split()   # not shrunk to the cell
    sizes = _font_sizes(root)
    assert sizes and min(sizes) >= MIN_FONT_PT and min(sizes) * PX_PER_PT >= 11
    w, h = _natural_size_pt(root)
    # one ranking over the partitions' boxes: the picture is tall, not 18 000 pt wide and squeezed
    assert w < 2500 and h > w, (w, h)


@needs_dot
def test_the_html_view_puts_the_picture_in_a_box_scrolling_both_ways(plan_tflite):
    page = viz.op_graph(plan_tflite).collapse(4).html()
    box = re.search(r"<div class='wb-graph' style='([^']*)'><svg", page)
    assert box and "overflow:auto" in box.group(1) and "max-height" in box.group(1)


# -- partitions: colour plus tag --------------------------------------------------------------------------

def test_the_first_21_partitions_have_distinct_colours():
    pairs = [partition_colours(k) for k in range(21)]
    assert len(set(pairs)) == 21


@needs_dot
def test_every_device_node_prints_its_partition_tag_and_20_partitions_differ(plan_tflite):
    assert len(plan_tflite.partitions) >= 20
    g = viz.op_graph(plan_tflite)
    root = _root(g.svg())
    prefix = g.dot().name
    nodes = {x.get("id"): x for x in root.iter(f"{SVG}g") if x.get("id")}
    seen = {}
    for p in plan_tflite.placements:
        if p.partition is None:
            continue
        texts = [t.text for t in nodes[f"{prefix}_n{p.node}"].iter(f"{SVG}text")]
        assert f"P{p.partition}" in texts, (p.node, texts)
        node_path = next(x for x in nodes[f"{prefix}_n{p.node}"].iter(f"{SVG}path"))
        seen.setdefault(p.partition, set()).add((node_path.get("stroke"), node_path.get("fill")))
    looks = [next(iter(v)) for _, v in sorted(seen.items())]
    assert all(len(v) == 1 for v in seen.values()) and len(set(looks)) == len(looks) >= 20


@needs_dot
def test_the_lab_tags_device_nodes_with_their_partition(selfie, plan_tflite):
    lab = PartitionLab(selfie, "tidl", "tflite")
    root = _root(re.search(r"<svg.*?</svg>", lab.graph_html.value, re.S).group(0))
    tags = {}
    for x in root.iter(f"{SVG}g"):
        if x.get("class") == "node":
            tag = next((t for t in x.iter(f"{SVG}g") if t.get("class") == "tag"), None)
            tags[x.get("data-node")] = None if tag is None else next(tag.iter(f"{SVG}text")).text
    for p in plan_tflite.placements:
        assert tags[f"n{p.node}"] == (None if p.partition is None else f"P{p.partition}")
    assert min(_font_sizes(root)) * PX_PER_PT >= 11 and lab.zoom.value == 1.0


# -- one reason numbering ----------------------------------------------------------------------------------

def test_op_graph_and_the_lab_number_a_reason_code_the_same(selfie, plan_tidl):
    g = viz.op_graph(plan_tidl)
    lab = PartitionLab(selfie, "tidl", "tidl")
    badges = {}
    for x in _root(re.search(r"<svg.*?</svg>", lab.graph_html.value, re.S).group(0)).iter(f"{SVG}g"):
        if x.get("class") == "node":
            badge = next((b for b in x.iter(f"{SVG}g") if b.get("class") == "badge"), None)
            if badge is not None:
                badges[x.get("data-node")] = int(next(badge.iter(f"{SVG}text")).text)
    cpu = [p for p in plan_tidl.placements if p.partition is None]
    assert cpu and len({p.code for p in cpu}) > 1
    for p in cpu:
        assert g.node(p.node).badges == (REASON_NUMBER[p.code],) == (badges[f"n{p.node}"],)
    table = g.html()
    for r in g.reasons:      # the table says what each number means: the code and its meaning
        assert re.search(rf"_r{r.number}'>.*?<b>{r.code}</b>", table, re.S)


# -- the partitions table ----------------------------------------------------------------------------------

def test_the_collapsed_graphs_table_counts_the_plans_nodes(plan_tflite):
    view = viz.op_graph(plan_tflite).collapse(4)
    folded = [g for g in view.groups if len(g.nodes) < len(plan_tflite.partitions[g.partition].nodes)]
    assert folded                                   # some partition lost boxes to a chain
    rows = re.findall(r"<tr><td[^>]*><span[^>]*>(P\d+)</span></td><td[^>]*>(\d+)</td>", view.html())
    assert {gid: int(n) for gid, n in rows} == {f"P{p.index}": len(p.nodes) for p in plan_tflite.partitions}


# -- the offload view (§6) ---------------------------------------------------------------------------------

def test_the_offload_view_lists_partitions_in_order_with_their_modeled_time(plan_tidl):
    compiled = compile_plan(plan_tidl)
    opened = viz.op_graph(compiled, expand=True)
    assert [g.partition for g in opened.groups] == sorted(p.index for p in plan_tidl.partitions)
    for g in opened.groups:    # computed from the target's cost figures, as the plan's estimate
        part = plan_tidl.partitions[g.partition]
        if not part.streamed_bytes:
            assert g.est_us == pytest.approx(part.est_us)
    page = viz.offload_view(compiled, plan_tidl).html()
    second = page[page.index("offload ops opened"):]
    rows = re.findall(r"<tr><td[^>]*><span[^>]*>P(\d+)</span></td>(.*?)</tr>", second, re.S)
    rows = rows[-len(plan_tidl.partitions):]       # the compiled model's table comes last
    assert [int(k) for k, _ in rows] == list(range(len(plan_tidl.partitions)))
    for k, cells in rows:
        modeled = re.findall(r"<td[^>]*>([^<]*)</td>", cells)[3]
        assert modeled == f"{plan_tidl.partitions[int(k)].est_us:,.1f}"


def test_the_offload_view_stacks_its_two_graphs(plan_tidl):
    page = viz.offload_view(compile_plan(plan_tidl), plan_tidl).html()
    assert page.count("class='wb-graph-view'") == 2
    assert "flex:1 1 420px" not in page              # no longer two half-width columns


# -- the lab: placement changes ----------------------------------------------------------------------------

def test_renumbering_partitions_is_no_placement_change(plan_tidl):
    n = len(plan_tidl.partitions)
    renumbered = dataclasses.replace(plan_tidl, placements=tuple(
        p if p.partition is None else dataclasses.replace(p, partition=n - 1 - p.partition)
        for p in plan_tidl.placements))
    assert placement_changes(plan_tidl, renumbered).moved == []


def test_a_reworded_reason_of_the_same_code_is_no_placement_change(selfie, plan_tidl):
    fewer = partition(selfie, "tidl", "tidl", max_partitions=2)
    reworded = [(a.node) for a, b in zip(plan_tidl.placements, fewer.placements)
                if a.partition is None and b.partition is None and a.code == b.code and a.reason != b.reason]
    assert reworded                                   # "…=16 was reached" → "…=2 was reached"
    changes = placement_changes(plan_tidl, fewer).moved
    assert not set(reworded) & {m[0] for m in changes}
    lanes = sum(1 for a, b in zip(plan_tidl.placements, fewer.placements)
                if (a.partition is None) != (b.partition is None))
    assert len(changes) == lanes < len(plan_tidl.diff(fewer).moved)


def test_the_lab_counts_placement_changes_and_names_the_first(selfie):
    lab = PartitionLab(selfie, "tidl", "tidl")
    pinned = lab.plan
    lab.pin_button.click()
    lab.max_partitions.value = 2
    expected = placement_changes(pinned, lab.plan).moved
    assert lab.diff.moved == expected
    assert f"· {len(expected)} nodes changed placement since the pinned plan" in lab.summary_html.value
    first = min(m[0] for m in expected)
    assert f"first change: node {first}</b>" in lab.changes_html.value
    assert f"data-changed='{len(expected)}' data-first-change='{first}'" in lab.changes_html.value
    assert lab.changes_html.value.count("class='wb-pl-closeup") == 2     # pinned and now, around it
    for which in ("pinned", "now"):
        close = re.search(rf"wb-pl-closeup-{which}'.*?(<svg.*?</svg>)", lab.changes_html.value, re.S).group(1)
        assert f'data-node="n{first}"' in close


def test_the_pinned_and_current_pictures_are_stacked_not_side_by_side(selfie):
    lab = PartitionLab(selfie, "tidl", "tidl")
    lab.pin_button.click()
    lab.min_nodes.value = 5
    box = next(w for w in lab.widget.children if lab.graph_html in getattr(w, "children", ()))
    assert type(box).__name__ == "VBox" and list(box.children) == [lab.pinned_html, lab.graph_html]
    assert "wb-pl-picture-pinned" in lab.pinned_html.value and "wb-pl-picture-now" in lab.graph_html.value
    for value in (lab.pinned_html.value, lab.graph_html.value):
        assert "contain:inline-size" in value and "overflow:auto" in value


def test_focus_keeps_only_the_reason_texts_of_the_nodes_it_shows(plan_tidl):
    cpu = next(p for p in plan_tidl.placements if p.partition is None)
    view = viz.op_graph(plan_tidl).focus(cpu.node, radius=1)
    shown = {n.index for n in view.nodes if n.index is not None}
    for r in view.reasons:
        assert r.nodes and set(r.nodes) <= shown
        assert {i for _, ns in r.details for i in ns} == set(r.nodes)
    assert cpu.reason in view.reason_of(REASON_NUMBER[cpu.code]).texts
