"""The partition lab, driven from Python: knobs set, buttons clicked, the picture and tables read back.

What a learner sees is checked in the SVG itself (a node's fill, border, badge, ring; the boxes'
positions) and in the HTML tables; the plan behind it is checked against ``partition`` called directly.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import graphviz
import pytest

import workbench
from workbench.partition import GraphView, load_target, partition
from workbench.viz.render import CPU_BORDER, CPU_FILL, partition_colours
from workbench.viz.widgets import PartitionLab
from workbench.viz.widgets.partition_lab import MOVED, REASON_NUMBER, placement_changes, without_ops

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def effnet():
    return workbench.load(SAMPLES / "efficientnet_block_float.tflite")


@pytest.fixture(scope="module")
def digits():
    return workbench.load(SAMPLES / "digits_cnn_float.tflite")


def _svgs(html_text: str) -> list:
    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", html_text, re.S)]


def _node(svg, node: int) -> dict:
    """What node ``node`` looks like: fill, stroke, dashed, badge text, ring, box position."""
    g = next(x for x in svg.iter(f"{SVG}g") if x.get("data-node") == f"n{node}")
    box = next(r for r in g.iter(f"{SVG}rect") if r.get("class") == "box")
    ring = next((r for r in g.iter(f"{SVG}rect") if r.get("class") == "ring"), None)
    badge = next((b for b in g.iter(f"{SVG}g") if b.get("class") == "badge"), None)
    return {"fill": box.get("fill"), "stroke": box.get("stroke"), "dashed": box.get("stroke-dasharray") is not None,
            "badge": None if badge is None else next(badge.iter(f"{SVG}text")).text,
            "ring": None if ring is None else ring.get("stroke"),
            "at": (box.get("x"), box.get("y"), box.get("width"), box.get("height")),
            "tooltip": next(g.iter(f"{SVG}title")).text}


def _current(lab):
    return _svgs(lab.graph_html.value)[0]


def test_the_lab_shows_the_plan_partition_would_make(effnet):
    lab = PartitionLab(effnet, "tidl", "tidl")
    direct = partition(effnet, "tidl", "tidl")
    assert [(p.partition, str(p.reason)) for p in lab.plan.placements] == \
           [(p.partition, str(p.reason)) for p in direct.placements]
    svg = _current(lab)
    for p in direct.placements:
        look = _node(svg, p.node)
        if p.partition is not None:
            border, fill = partition_colours(p.partition)
            assert (look["fill"], look["stroke"], look["dashed"], look["badge"]) == (fill, border, False, None)
        else:
            assert (look["fill"], look["stroke"], look["dashed"]) == (CPU_FILL, CPU_BORDER, True)
            assert look["badge"] == str(REASON_NUMBER[p.code])
    assert f"{direct.offloaded}/{len(direct.placements)} nodes on tidl" in lab.summary_html.value


def test_denying_a_node_repaints_it_as_a_cpu_node_with_the_denied_badge_and_the_diff_lists_it(effnet):
    lab = PartitionLab(effnet, "tidl", "tidl")
    node = next(p.node for p in lab.plan.placements if p.partition is not None and p.op == "CONV_2D")
    before = _node(_current(lab), node)
    assert not before["dashed"] and before["badge"] is None
    lab.pin_button.click()
    lab.deny.value = (node,)
    after = _node(_current(lab), node)
    assert (after["fill"], after["dashed"], after["badge"]) == (CPU_FILL, True, str(REASON_NUMBER["denied"]))
    assert "denied" in after["tooltip"]
    assert after["ring"] == MOVED                                    # it differs from the pinned plan
    assert after["at"] == before["at"]                               # and it did not move on the page
    moved = {m[0]: m for m in lab.diff.moved}
    assert moved[node][3] == "cpu" and "denied" in str(moved[node][4])
    assert re.search(rf"<td[^>]*>{node}</td><td[^>]*>CONV_2D</td><td[^>]*>P\d+</td><td[^>]*>cpu</td>",
                     lab.diff_html.value)
    pinned = _svgs(lab.pinned_html.value)[0]                          # the pinned plan beside it, unchanged
    assert not _node(pinned, node)["dashed"] and _node(pinned, node)["ring"] == MOVED
    assert lab.pinned_html.layout.display != "none"


def test_the_layout_stays_fixed_and_dot_does_not_run_on_a_recut(effnet, monkeypatch):
    lab = PartitionLab(effnet, "tidl", "tidl")
    first = _current(lab)
    where = {p.node: _node(first, p.node)["at"] for p in lab.plan.placements}

    def no_dot(*a, **k):
        raise AssertionError("dot ran on a recut")

    monkeypatch.setattr(graphviz, "pipe", no_dot)
    lab.strategy.value = "tflite"
    lab.max_partitions.value = 1
    lab.op_toggles["MUL"].value = False
    svg = _current(lab)
    assert {p.node: _node(svg, p.node)["at"] for p in lab.plan.placements} == where
    assert sum(1 for p in lab.plan.placements if p.partition is not None) < sum(
        1 for p in partition(effnet, "tidl", "tflite").placements if p.partition is not None)


def test_a_recut_rings_the_nodes_that_moved_and_only_those(effnet):
    lab = PartitionLab(effnet, "tidl", "tidl")
    old = lab.plan
    lab.op_toggles["LOGISTIC"].value = False
    svg = _current(lab)
    ringed = {p.node for p in lab.plan.placements if _node(svg, p.node)["ring"] == MOVED}
    assert ringed == {m[0] for m in placement_changes(old, lab.plan).moved}
    logistic = {p.node for p in lab.plan.placements if p.op == "LOGISTIC"}
    assert logistic and logistic <= ringed
    assert all(_node(svg, i)["badge"] == str(REASON_NUMBER["unsupported-op"]) for i in logistic)
    lab.zoom.value = 0.5                     # a repaint without a recut keeps the rings
    assert {p.node for p in lab.plan.placements if _node(_current(lab), p.node)["ring"] == MOVED} == ringed


def test_unticking_an_op_takes_it_from_a_derived_target_and_leaves_the_shipped_one_alone(effnet):
    lab = PartitionLab(effnet, "tidl", "tidl")
    assert "LOGISTIC" in lab.op_toggles and lab.op_toggles["LOGISTIC"].value
    lab.op_toggles["LOGISTIC"].value = False
    assert lab.plan.target.name == "tidl without LOGISTIC"
    assert "LOGISTIC" not in lab.plan.target.ops and "LOGISTIC" in load_target("tidl").ops
    assert all(p.partition is None and p.code == "unsupported-op" for p in lab.plan.placements if p.op == "LOGISTIC")
    lab.op_toggles["LOGISTIC"].value = True
    assert lab.plan.target.name == "tidl"


def test_without_ops_spells_out_a_star_target_for_the_models_ops(effnet):
    base = load_target("old-delegate")
    assert "*" in base.ops
    present = {nd.name: False for nd in GraphView(effnet).nodes}
    assert {"ADD", "MUL", "CONV_2D", "LOGISTIC"} <= set(present)
    t = without_ops(base, {"ADD"}, present)
    assert "*" not in t.ops and "ADD" not in t.ops and set(present) - {"ADD"} <= set(t.ops)
    plan = partition(effnet, t, "tflite")
    ref = partition(effnet, base, "tflite", deny=["ADD"])
    assert all(p.partition is None for p in plan.placements if p.op == "ADD")
    assert [p.partition is None for p in plan.placements if p.op != "ADD"] == \
           [p.partition is None for p in ref.placements if p.op != "ADD"]


def test_max_partitions_and_min_nodes_reach_the_partitioner(effnet):
    lab = PartitionLab(effnet, "tidl", "tflite")
    lab.max_partitions.value = 1
    lab.min_nodes.value = 3
    direct = partition(effnet, "tidl", "tflite", max_partitions=1, min_nodes=3)
    assert [p.partition for p in lab.plan.placements] == [p.partition for p in direct.placements]
    assert len(lab.plan.partitions) == 1 and "in <b>1</b> partition " in lab.summary_html.value
    assert "max partitions 1; min nodes 3" in lab.graph_html.value


def test_the_cost_breakdown_adds_up_to_each_partitions_estimate(effnet):
    lab = PartitionLab(effnet, "tidl", "tidl")
    lab.deny.value = (3, 20)
    costs = lab.costs()
    assert len(costs) == len(lab.plan.partitions) > 1
    for part, c in zip(lab.plan.partitions, costs):
        assert c.total_us == pytest.approx(part.est_us)
        assert c.copy_in_us > 0 and c.compute_us > 0
        assert f"<b>{c.total_us:,.1f}</b>" in lab.cost_html.value
    est = lab.estimate()
    assert est == pytest.approx(lab.plan.estimate())


def test_boundary_tensors_and_bytes_moved_are_listed(effnet):
    lab = PartitionLab(effnet, "tidl", "tidl")
    lab.deny.value = (3,)
    plan = lab.plan
    rows = re.findall(r"<tr style=''><td[^>]*>(P\d+)</td><td[^>]*>(→ in|out →)</td><td[^>]*>(\d+)</td>",
                      lab.boundary_html.value)
    want = {(f"P{p.index}", "→ in", str(t)) for p in plan.partitions for t in p.runtime_inputs}
    want |= {(f"P{p.index}", "out →", str(t)) for p in plan.partitions for t in p.outputs}
    assert set(rows) == want
    moved = sum(p.bytes_in + p.bytes_out for p in plan.partitions)
    assert f"<b>{moved:,} bytes</b> moved per run" in lab.summary_html.value
    svg = _current(lab)            # crossing edges bold, with their bytes
    bold = [e for e in svg.iter(f"{SVG}g") if e.get("class") == "edge" and next(e.iter(f"{SVG}path")).get(
        "stroke-width") == "2.2"]
    assert bold and all("⇄" in "".join(t.text for t in e.iter(f"{SVG}text")) for e in bold)


def test_unpin_hides_the_pinned_plan_and_the_diff(effnet):
    lab = PartitionLab(effnet, "tidl", "tidl")
    lab.pin_button.click()
    assert lab.pinned is lab.plan and not lab.unpin_button.disabled
    lab.deny.value = (2,)
    assert lab.diff and lab.diff_html.value
    lab.unpin_button.click()
    assert lab.pinned is None and lab.diff_html.value == "" and lab.pinned_html.layout.display == "none"
    assert len(_svgs(lab.graph_html.value)) == 1


def test_choosing_another_model_lays_it_out_and_forgets_the_pin(effnet, digits):
    lab = PartitionLab(models={"effnet": effnet, "digits": digits}, target="tidl", strategy="tidl")
    assert lab.model_name.value == "effnet"
    lab.pin_button.click()
    lab.model_name.value = "digits"
    assert lab.pinned is None and lab.plan.model is digits
    assert len(lab.deny.options) == len(digits.subgraphs[0].operators)
    assert set(lab.op_toggles) <= {"CONV_2D", "MAX_POOL_2D", "MEAN", "FULLY_CONNECTED", "SOFTMAX"}
    lab.target.value = "edgetpu"
    assert lab.plan.target.name == "edgetpu"


def test_a_corpus_model_recuts_and_redraws_within_the_goal(corpus_paths):
    model = workbench.load(corpus_paths["face_landmark_with_attention"])
    lab = PartitionLab(model, "tidl", "tidl")
    lab.pin_button.click()
    times = []
    for node in (5, 100, 400):
        lab.deny.value = (node,)
        times.append(lab.timings["total_ms"])
    assert node in {m[0] for m in lab.diff.moved}
    assert min(times) < 250          # the benchmark holds the 100 ms goal; this only guards against regressions


def test_several_knobs_in_one_go_recut_once(effnet, monkeypatch):
    import workbench.viz.widgets.partition_lab as lab_module

    lab = PartitionLab(effnet, "tidl", "tflite")
    calls = []
    real = lab_module.partition
    monkeypatch.setattr(lab_module, "partition", lambda *a, **k: calls.append(k) or real(*a, **k))
    with lab.changes():
        lab.max_partitions.value = 2
        lab.min_nodes.value = 2
        lab.deny.value = (1, 7)
    assert len(calls) == 1 and calls[0]["deny"] == (1, 7) and calls[0]["max_partitions"] == 2
    assert [p.partition for p in lab.plan.placements] == \
           [p.partition for p in partition(effnet, "tidl", "tflite", deny=(1, 7), max_partitions=2,
                                           min_nodes=2).placements]


def test_cut_after_ends_the_device_part_at_the_named_tensor_and_says_so():
    from workbench import corpus

    deeplab = workbench.load(corpus.path("aitoolkit_deeplab_v3"))
    lab = PartitionLab(deeplab, target="tidl", strategy="tidl")
    name = "MobilenetV2/expanded_conv_16/project/BatchNorm/FusedBatchNorm"
    lab.cut_after.value = name
    want = partition(deeplab, "tidl", "tidl", cut_after=[name])
    assert [p.nodes for p in lab.plan.partitions] == [p.nodes for p in want.partitions] == [tuple(range(61))]
    assert "cut after " + name in lab.summary_html.value or "cut after" in lab.graph_html.value
    lab.cut_after.value = "MobilenetV2/no_such_tensor"
    import html

    assert lab.error and "no tensor named 'MobilenetV2/no_such_tensor'" in html.unescape(lab.summary_html.value)
    lab.cut_after.value = ""
    assert lab.error is None and len(lab.plan.partitions) > 1


def test_the_strategy_menu_says_which_cut_a_runtime_delegate_gets_and_which_is_an_offline_compile(digits):
    # a LiteRT runtime delegate only claims nodes; TFLite cuts them (tflite/delegates/utils.cc
    # GraphPartitionHelper): the walk and the Edge TPU cut are offline compiles
    lab = PartitionLab(digits, target="tidl", strategy="tidl")
    assert lab.strategy.label == "tidl (compiled offline)"
    note = lab.strategy_note.value
    assert "an offline compile" in note and "--strategy tidl -o OUT.tflite" in note
    lab.strategy.value = "tflite"
    assert lab.strategy.label == "tflite (runtime)"
    assert "runtime delegate" in lab.strategy_note.value and "offline" not in lab.strategy_note.value
    lab.strategy.value = "edgetpu"
    assert "--strategy edgetpu -o OUT.tflite" in lab.strategy_note.value
