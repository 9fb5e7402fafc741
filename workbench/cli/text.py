"""The text views of ``inspect``, ``versions`` and ``run --profile``, rendered from the same JSON
documents as ``--json`` (:mod:`.describe`), so the two never disagree.
"""

from __future__ import annotations

from typing import Any

from ..versioning import (
    compare_runtime_version,
)
from .describe import group_findings

# ------------------------------------------------------------------------------------------------
# Text rendering of the document

_DRIVER_PLACES = 6  # text view: operator positions listed per driving (op, version)

NAME_WIDTH = 48
VALUE_WIDTH = 80


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _num(n: int) -> str:
    return f"{n:,}"


def _dims(dims) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


def _idx(values) -> str:
    return ",".join("-" if v == -1 else str(v) for v in values) or "-"


def _short_value(v: Any) -> str:
    """A compact rendering of a plain (JSON) value for one line of text."""
    if isinstance(v, list):
        if len(v) > 8:
            return "[" + ",".join(_short_value(x) for x in v[:6]) + f",… {len(v)} items]"
        return "[" + ",".join(_short_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}={_short_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _quant_summary(tensor: dict) -> str:
    q = tensor["quantization"]
    if q is None:
        return ""
    scale, zp = q["scale"], q["zero_point"]
    if len(scale) > 1 or len(zp) > 1:
        return f"per-channel({max(len(scale), len(zp))}) axis {q['quantized_dimension']}"
    parts = [str(tensor["type"]).lower()]
    if scale:
        s = scale[0]
        parts.append(f"scale={s:.4g}" if isinstance(s, float) else f"scale={s}")
    if zp:
        parts.append(f"zp={zp[0]}")
    if not scale and (q["min"] or q["max"]):
        parts.append(f"min={_short_value(q['min'])} max={_short_value(q['max'])}")
    if q["details"]:
        parts.append(f"({q['details']})")
    return " ".join(parts)


def _table(headers: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    """Left-aligned columns; the last column is free text (not padded)."""
    widths = [len(h) for h in headers]
    for r in rows:
        for i, cell in enumerate(r[:-1]):
            widths[i] = max(widths[i], len(cell))

    def line(cells):
        padded = [c.ljust(widths[i]) for i, c in enumerate(cells[:-1])] + [cells[-1]]
        return (indent + "  ".join(padded)).rstrip()

    return [line(headers)] + [line(r) for r in rows]


def _capped(items: list, limit: int | None) -> tuple[list, int]:
    if limit is None or len(items) <= limit:
        return items, 0
    return items[:limit], len(items) - limit


def _more(count: int, indent: str = "  ") -> list[str]:
    return [f"{indent}… {count} more"] if count else []


def render_text(doc: dict, limit: int | None = None) -> str:
    """The human-readable view of a :func:`describe` document."""
    out = []
    size = f"{_num(doc['size'])} bytes, " if doc.get("size") is not None else ""
    out.append(f"{doc.get('file') or '<model>'}: {size}schema version {doc['version']}")
    if doc["description"]:
        out.append(f"description: {doc['description']}")
    if doc["min_runtime_version"] is not None:
        out.append(f"min_runtime_version: {doc['min_runtime_version']}")

    codes, more = _capped(doc["operator_codes"], limit)
    out += ["", f"operator codes ({len(doc['operator_codes'])})"]
    rows = [[str(c["index"]), c["op"] if c["custom_code"] is None else f"CUSTOM {c['op']}",
             str(c["version"]), str(c["count"])] for c in codes]
    out += _table(["#", "op", "version", "used by"], rows) + _more(more)

    for sg in doc["subgraphs"]:
        tensors = sg["tensors"]
        out += ["", f"subgraph {sg['index']}" + (f" \"{sg['name']}\"" if sg["name"] else "")
                + f": {len(tensors)} tensors, {len(sg['operators'])} operators"]
        for label, ids in (("inputs", sg["inputs"]), ("outputs", sg["outputs"])):
            described = []
            for i in ids:
                if 0 <= i < len(tensors):
                    t = tensors[i]
                    described.append(f"{i} {_clip(t['name'] or '', NAME_WIDTH)} {t['type']} {_dims(t['shape'])}")
                else:
                    described.append(str(i))
            out.append(f"  {label}: " + ("; ".join(described) if described else "none"))

        shown, more = _capped(tensors, limit)
        out += ["  tensors"]
        rows = []
        for t in shown:
            shape = _dims(t["shape"])
            sig = t["shape_signature"]
            if sig is not None and -1 in sig:
                shape += f" sig {_dims(sig)}"
            buf = f"{t['buffer']} ({_num(t['bytes'])} B)" if t["bytes"] else "-"
            flags = " ".join(f for f, on in (("sparse", t["sparse"]), ("variable", t["is_variable"])) if on)
            rows.append([str(t["index"]), _clip(t["name"] or "", NAME_WIDTH), str(t["type"]), shape, buf,
                         "  ".join(x for x in (_quant_summary(t), flags) if x)])
        out += _table(["#", "name", "type", "shape", "buffer", "quantization / flags"], rows, "    ")
        out += _more(more, "    ")

        shown, more = _capped(sg["operators"], limit)
        out += ["  operators"]
        rows = []
        for op in shown:
            options = [f"{k}={_short_value(v)}" for k, v in op["options"].items()]
            if op["custom_options"] is not None:
                options.append(f"custom={_clip(_short_value(op['custom_options']), VALUE_WIDTH)}")
            elif op["custom_options_format"] == "opaque":
                options.append(f"custom=<{op['custom_options_bytes']} opaque bytes>")
            details = f"{_idx(op['inputs'])} → {_idx(op['outputs'])}"
            if options:
                details += "  " + " ".join(options)
            rows.append([str(op["index"]), op["op"], f"v{op['version']}", details])
        out += _table(["#", "op", "ver", "inputs → outputs  options"], rows, "    ")
        out += _more(more, "    ")

    out += ["", f"metadata ({len(doc['metadata'])})"]
    entries, more = _capped(list(doc["metadata"].items()), limit)
    rows = []
    for name, m in entries:
        rows.append([name, f"buffer {m['buffer']}", f"{_num(m['bytes'])} B",
                     repr(m["text"]) if m["text"] is not None else ""])
    out += (_table(["name", "buffer", "size", "text"], rows) if rows else ["  none"]) + _more(more)

    out += ["", f"signatures ({len(doc['signatures'])})"]
    if not doc["signatures"]:
        out.append("  none")
    for sd in doc["signatures"]:
        out.append(f"  {sd['key']!r} → subgraph {sd['subgraph_index']}")
        for label, mapping in (("input", sd["inputs"]), ("output", sd["outputs"])):
            items, more = _capped(list(mapping.items()), limit)
            for name, tensor in items:
                out.append(f"    {label:6s} {name} → tensor {tensor}")
            out += _more(more, "    ")

    if doc["load_notes"]:
        out += ["", f"load notes ({len(doc['load_notes'])})"]
        notes, more = _capped(doc["load_notes"], limit)
        out += [f"  {n}" for n in notes] + _more(more)
    return "\n".join(out)


def _node_list(nodes, places: int = _DRIVER_PLACES) -> str:
    """'0:3, 0:7, … 12 more' for [[0, 3], [0, 7], ...]."""
    where = [f"{s}:{i}" for s, i in (n for n in nodes if n is not None)]
    return ", ".join(where[:places]) + (f", … {len(where) - places} more" if len(where) > places else "")


def _places(drivers: list[dict]) -> str:
    """'CONV_2D v8 at 0:1; FULLY_CONNECTED v11 at 0:4, 0:5' — drivers grouped by (op, version)."""
    groups: dict[tuple[str, int], list[str]] = {}
    for d in drivers:
        groups.setdefault((d["op"], d["version"]), []).append(f"{d['subgraph']}:{d['index']}")
    parts = []
    for (op, v), where in groups.items():
        shown = ", ".join(where[:_DRIVER_PLACES]) + (f", … {len(where) - _DRIVER_PLACES} more"
                                                      if len(where) > _DRIVER_PLACES else "")
        parts.append(f"{op} v{v} at {shown}")
    return "; ".join(parts)


def render_versions(doc: dict, limit: int | None = None) -> str:
    """The text view of a :func:`versions_report` document."""
    ops = doc["operators"]
    out = [f"{doc.get('file') or '<model>'}: {len(ops)} operators, {doc['differences']} with a computed version "
           "different from the stored one"]
    shown, more = _capped(ops, limit)
    rows = []
    for o in shown:
        computed = "-" if o["computed_version"] is None else f"v{o['computed_version']}"
        differs = o["computed_version"] is not None and o["computed_version"] != o["stored_version"]
        reason = o["reason"] + (f"  [{o['note']}]" if o["note"] else "")
        rows.append(["≠" if differs else "", str(o["subgraph"]), str(o["index"]), o["op"],
                     f"v{o['stored_version']}", computed, reason])
    out += ["", "operators (≠: computed differs from stored)"]
    out += _table(["", "sg", "#", "op", "stored", "computed", "reason"], rows) + _more(more)

    mr = doc["min_runtime"]
    out += ["", "minimum runtime"]
    computed = mr["computed"] or "(none: no operator in the runtime table)"
    line = [["computed (today's versions)", computed, _places(mr["drivers"])],
            ["from the stored versions", mr["from_stored_versions"] or "(none)", _places(mr["stored_version_drivers"])]]
    meta = mr["stored"]
    if meta is None:
        line.append(["min_runtime_version metadata", "(absent)", ""])
    else:
        agree = "agrees with computed" if meta == mr["computed"] else f"≠ computed {mr['computed']}"
        need = mr["from_stored_versions"]
        if need and compare_runtime_version(meta, need):
            agree += (f"; below the {need} the stored versions need, so TFLite {meta} would still refuse "
                      f"this file (a stale figure: a later step raised versions and kept the metadata)")
        line.append(["min_runtime_version metadata", meta, agree])
    out += _table(["", "release", "driven by"], line)

    if "findings" in doc:
        rt = doc["runtime"]
        errors = [f for f in doc["findings"] if f["refuses"]]
        unknown = [f for f in doc["findings"] if not f["refuses"]]
        out.append("")
        if doc["can_run"]:
            out.append(f"TFLite {rt}: can run this model (every operator's stored version is registered there)")
        else:
            out.append(f"TFLite {rt}: cannot run this model ({len(errors)} finding{'s' if len(errors) != 1 else ''})")
        given = doc.get("runtime_given")
        if given is not None and given != rt:
            out.append(f"  note: --runtime {given} read as release {rt}")
        for g in group_findings(errors + unknown):
            op = "" if g["op"] is None else f" {g['op']}" + ("" if g["version"] is None else f" v{g['version']}")
            if not g["nodes"]:
                where = "model" + (f" ({g['count']} findings)" if g["count"] > 1 else "")
            elif g["count"] == 1:
                where = f"[{_node_list(g['nodes'])}]{op}"
            else:
                where = f"[{_node_list(g['nodes'])}]{op} ({g['count']} nodes)"
            out.append(f"  {g['kind']}: {where}")
            for field, label in (("errors", "error: "), ("whys", "why:   ")):
                texts = g[field]
                for text, nodes in texts.items():
                    at = f"  [at {_node_list(nodes)}]" if len(texts) > 1 and any(n is not None for n in nodes) else ""
                    out.append(f"    {label}{text}{at}")
        raised = mr["from_stored_versions"] is not None and mr["computed"] is not None and \
            compare_runtime_version(mr["from_stored_versions"], mr["computed"])
        if (doc["can_run"] or raised) and mr["computed"] and compare_runtime_version(rt, mr["computed"]):
            out.append(f"  note: today's rules compute versions that first ran in TFLite {mr['computed']} "
                       f"({_places(mr['drivers'])}); TFLite looks up the stored versions only")
    return "\n".join(out)


def render_profile(profile, top: int = 10) -> str:
    """A :class:`~workbench.interpreter.trace.Profile` as text (benchmark_model's two tables), each
    column as wide as its longest cell, so a long op or kernel name never runs into the next column."""
    def columns(headers, rows, right):
        widths = [max(len(r[k]) for r in [headers] + rows) for k in range(len(headers))]
        fmt = lambda r: "  ".join(c.rjust(w) if k in right else c.ljust(w)  # noqa: E731
                                  for k, (c, w) in enumerate(zip(r, widths))).rstrip()
        return [fmt(headers)] + [fmt(r) for r in rows]

    out = [f"Profile over {profile.runs} runs: {profile.total_ms:.3f} ms per invoke, {len(profile.nodes)} nodes",
           "", "=" * 30 + " Summary by node type " + "=" * 30]
    rows = [[r.op, str(r.count), f"{r.avg_ms:.3f}", f"{r.percent:.2f}%", f"{r.cdf_percent:.2f}%"]
            for r in profile.by_op]
    out += columns(["node type", "count", "avg ms", "%", "cdf%"], rows, {1, 2, 3, 4})
    out += ["", "=" * 30 + " Top nodes by time " + "=" * 30]
    rows, running = [], 0.0
    for r in profile.top(top):
        running += r.percent
        rows.append([str(r.node), r.op, r.kernel, f"{r.avg_ms:.3f}", f"{r.percent:.2f}%", f"{running:.2f}%",
                     str(list(r.output_shape))])
    out += columns(["node", "op", "kernel", "avg ms", "%", "cdf%", "output"], rows, {0, 3, 4, 5})
    return "\n".join(out)
