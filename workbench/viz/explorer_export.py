"""Per-node data of a view as Model Explorer node data (``ai-edge-model-explorer``'s own classes).

    files = viz.op_graph(plan).save_explorer_node_data("out/")   # placement.json, reason.json, ...
    # model-explorer model.tflite --node_data_paths=out/placement.json,out/reason.json

One ``ModelNodeData`` per field: ``placement`` ("cpu" or the partition, coloured as in the workbench's
graph), ``reason`` (why a node stays on the CPU, with its badge number), ``version`` (the stored op
version) and every overlay of the view (modeled and measured time, int8 error, ...).  Keys are what
Model Explorer's TFLite adapter calls the nodes: the operator index as a string, in the graph named
after the subgraph ("main" for an unnamed subgraph 0, "subgraph_N" for another unnamed one).  Only
operators of the model file are written (not the inside of an opened offload op, nor chains).

``model_explorer`` is imported here, when an export is asked for: the rest of ``viz`` works without it.
"""

from __future__ import annotations

import re
from pathlib import Path

from .render import PALETTE

__all__ = ["node_data", "save_node_data", "graph_id"]

GRADIENT = (("#ffffff", 0.0), ("#E69F00", 1.0))


def _ndb():
    try:
        from model_explorer import node_data_builder
    except ImportError as exc:     # pragma: no cover - depends on the environment
        raise ImportError("exporting Model Explorer node data needs the ai-edge-model-explorer package "
                          "(pip install ai-edge-model-explorer)") from exc
    return node_data_builder


def graph_id(model, subgraph: int) -> str:
    """The id Model Explorer's TFLite adapter gives ``model.subgraphs[subgraph]``."""
    name = model.subgraphs[subgraph].name
    if name:
        return str(name)
    return "main" if subgraph == 0 else f"subgraph_{subgraph}"


def _fields(view) -> dict:
    """field name → ({node key: value}, {node key: bgColor} or None, numeric?)"""
    rows = [n for n in view.nodes if n.index is not None and n.kind in ("op", "offload")]
    out: dict = {}
    if any(n.lane for n in rows):
        vals, colours = {}, {}
        for n in rows:
            key = str(n.index)
            if n.lane == "device":
                vals[key] = n.group or f"P{n.partition}"
                colours[key] = PALETTE[(n.partition or 0) % len(PALETTE)][1]
            else:
                vals[key] = n.lane or ""
                colours[key] = "#ffffff"
        out["placement"] = (vals, colours, False)
    reasons = {str(n.index): f"[{n.badges[0]}] {n.reason}" if n.badges else n.reason
               for n in rows if n.lane == "cpu" and n.reason}
    if reasons:
        out["reason"] = (reasons, None, False)
    out["version"] = ({str(n.index): int(n.version) for n in rows}, None, True)
    for name, ov in view.overlays.items():
        vals = {}
        for n in rows:
            v = ov.values.get(n.id)
            if v is not None:
                vals[str(n.index)] = v
        if vals:
            numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals.values())
            out[name] = (vals, None, numeric)
    return out


def node_data(view, fields=None) -> dict:
    """field name → ``model_explorer.node_data_builder.ModelNodeData`` for ``view``'s model file.

    ``fields``: the names wanted (default every one: placement, reason, version, the overlays)."""
    ndb = _ndb()
    full = view.base or view
    gid = graph_id(full.model, full.subgraph)
    out = {}
    for name, (vals, colours, numeric) in _fields(full).items():
        if fields is not None and name not in fields:
            continue
        results = {k: ndb.NodeDataResult(value=v, bgColor=(colours or {}).get(k)) for k, v in vals.items()}
        gradient = [ndb.GradientItem(stop=s, bgColor=c) for c, s in GRADIENT] if numeric and colours is None else []
        graph = ndb.GraphNodeData(results=results, name=name, gradient=gradient)
        out[name] = ndb.ModelNodeData(graphsData={gid: graph})
    return out


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "data"


def save_node_data(view, directory, fields=None) -> list:
    """Write one JSON file per field into ``directory`` (made if missing); returns the paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in node_data(view, fields).items():
        p = d / f"{_slug(name)}.json"
        data.save_to_file(str(p))
        paths.append(p)
    return paths
