"""Per-node data exported as Model Explorer node data, written with ai-edge-model-explorer's own classes;
every node id written is a node of the graph Model Explorer's own TFLite adapter builds for the model."""

from __future__ import annotations

import json

import pytest

import workbench
from helpers.viz_models import branchy_model
from workbench import viz
from workbench.partition import partition

ndb = pytest.importorskip("model_explorer.node_data_builder",
                          reason="ai-edge-model-explorer (a test extra) is not installed: no oracle for the export")
adapter_module = pytest.importorskip("model_explorer.builtin_tflite_flatbuffer_adapter",
                                     reason="ai-edge-model-explorer's TFLite adapter is not installed")


def adapter_graphs(path) -> dict:
    """graph id → node ids, as Model Explorer's own TFLite (flatbuffer) adapter builds them."""
    out = adapter_module.BuiltinTfliteFlatbufferAdapter().convert(str(path), {})
    return {g["id"]: {n["id"] for n in g["nodes"]} for c in out["graphCollections"] for g in c.graphs}


def _ids(data) -> dict:
    return {gid: set(g.results) for gid, g in data.graphsData.items()}


def test_plan_export_ids_are_nodes_of_model_explorers_graph(corpus_paths):
    path = corpus_paths["selfie_segmentation"]
    plan = partition(workbench.load(path), "tidl", "tidl")
    view = viz.op_graph(plan).with_overlay("int8 error", {i: i / 1000 for i in range(0, 246, 3)}, "{:.3f}", "max")
    data = view.explorer_node_data()
    assert set(data) == {"placement", "reason", "version", "modeled", "int8 error"}
    graphs = adapter_graphs(path)
    for name, d in data.items():
        assert isinstance(d, ndb.ModelNodeData)
        for gid, ids in _ids(d).items():
            assert gid in graphs, (name, gid, list(graphs))
            assert ids and ids <= graphs[gid], (name, sorted(ids - graphs[gid])[:5])
    placement = data["placement"].graphsData[next(iter(graphs))].results
    assert {placement[str(p.node)].value for p in plan.placements} == {"cpu"} | {f"P{k}" for k in range(16)}
    reasons = data["reason"].graphsData[next(iter(graphs))].results
    assert {k for k in reasons} == {str(p.node) for p in plan.placements if p.partition is None}
    assert reasons["3"].value == "[1] HARD_SWISH: not supported"   # 1: the code unsupported-op


def test_export_of_a_collapsed_view_writes_the_full_graph(corpus_paths):
    path = corpus_paths["selfie_segmentation"]
    plan = partition(workbench.load(path), "tidl", "tidl")
    full = viz.op_graph(plan).explorer_node_data(fields=["version"])
    small = viz.op_graph(plan).collapse(3).focus(100, 1).explorer_node_data(fields=["version"])
    assert _ids(full["version"]) == _ids(small["version"])


@pytest.mark.parametrize("name,subgraph", [("microwakeword_alexa", 1), ("openwakeword_hey_jarvis", 2)])
def test_other_subgraphs_export_under_model_explorers_graph_id(corpus_paths, name, subgraph):
    path = corpus_paths[name]
    view = viz.op_graph(workbench.load(path), subgraph)
    data = view.explorer_node_data()
    graphs = adapter_graphs(path)
    (gid, ids), = _ids(data["version"]).items()
    assert gid in graphs and ids and ids <= graphs[gid]


def test_unnamed_subgraphs_and_files_written(tmp_path):
    import dataclasses

    m = branchy_model()
    sg = dataclasses.replace(m.subgraphs[0], name=None)
    m = dataclasses.replace(m, subgraphs=(sg, sg))
    path = tmp_path / "two.tflite"
    path.write_bytes(workbench.dump(m))
    graphs = adapter_graphs(path)
    for s, want in ((0, "main"), (1, "subgraph_1")):
        data = viz.op_graph(m, s).explorer_node_data()
        (gid, ids), = _ids(data["version"]).items()
        assert gid == want and ids <= graphs[gid] and len(ids) == 9
    files = viz.op_graph(m).save_explorer_node_data(tmp_path / "nd")
    assert [p.name for p in files] == ["version.json"]
    doc = json.loads(files[0].read_text())
    assert doc["main"]["results"]["0"]["value"] == 1


def test_compiled_model_and_measured_time_export(corpus_paths, tmp_path):
    from workbench.partition import compile as compile_plan

    plan = partition(workbench.load(corpus_paths["selfie_segmentation"]), "tidl", "tidl")
    path = tmp_path / "compiled.tflite"
    path.write_bytes(workbench.dump(compile_plan(plan)))
    view = viz.op_graph(workbench.load(path), measured={0: 0.5, 3: 0.25})
    data = view.explorer_node_data()
    assert {"placement", "version", "measured"} <= set(data)
    graphs = adapter_graphs(path)
    for d in data.values():
        for gid, ids in _ids(d).items():
            assert ids <= graphs[gid]
    (results,) = [g.results for g in data["measured"].graphsData.values()]
    assert {k: r.value for k, r in results.items()} == {"0": 0.5, "3": 0.25}
    # the opened view writes only operators of the file (the offload ops), not the nodes inside them
    opened = viz.op_graph(workbench.load(path), expand=True).explorer_node_data(fields=["version"])
    (ids,) = _ids(opened["version"]).values()
    assert ids <= next(iter(graphs.values())) and len(ids) < len(plan.placements)
