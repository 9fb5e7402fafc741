"""The ``workbench`` command line: thin commands over the library's public functions.

    workbench inspect model.tflite                  # readable summary of the whole file
    workbench inspect model.tflite --json           # the same facts as one JSON document
    workbench inspect model.tflite --subgraph 1 --limit 20
    workbench versions model.tflite                 # stored vs computed op versions, minimum runtime
    workbench versions model.tflite --runtime 2.3.0 # would TFLite 2.3.0 run it? (exit 1 if not)

Every command is a function ``_cmd_<name>(args) -> int`` registered by ``_register_<name>``;
later commands (partition, run, bench, lab) plug in the same way.  A malformed or
missing file prints ``error: <message>`` on stderr and exits with status 2, never a traceback.

The JSON document is described field by field in the README ("``workbench inspect --json``
format"); :func:`describe` builds it and the text view is rendered from that same document, so
the two never disagree.
"""

from __future__ import annotations

import argparse
import enum
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__, config
from .errors import ModelError, UnsupportedOpError, WorkbenchError
from .options import parse as parse_options
from .schema import buffer_bytes, builtin_code, load, op_name, stored_min_runtime
from .schema.declare import FlatTable
from .schema.reader import UnknownTable
from .schema.enums import BuiltinOperator, TensorType
from .versioning import (
    check, compare_runtime_version, min_runtime, op_version, read_min_runtime_metadata,
)
from .versioning.writers import legacy_quantizer_note

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_ERROR = 2  # malformed or missing input, bad arguments (argparse uses 2 as well)

# ------------------------------------------------------------------------------------------------
# Plain values: everything in the JSON document goes through _plain


def _plain(value: Any) -> Any:
    """A JSON-ready copy: enums → names, bytes → length, tuples → lists, non-finite floats → text."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else _nonfinite(value)
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, memoryview):
        return value.nbytes
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, FlatTable):
        out = {}
        for name, f in value.__decl__.python_fields():
            v = getattr(value, name)
            if v is None or v == () or (name == f.name and v == f.resolved_default()):
                continue
            out[name] = _plain(v)
        return out
    if isinstance(value, UnknownTable):
        return repr(value)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        try:
            return _plain(item())
        except (TypeError, ValueError):
            pass
    return str(value)


def _nonfinite(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    return "Infinity" if x > 0 else "-Infinity"


def _printable(raw: bytes) -> str | None:
    """The text of a metadata entry when it is printable ASCII (NUL padding stripped), else None."""
    text = raw.rstrip(b"\0")
    if not text or any(b < 0x20 or b > 0x7E for b in text if b not in (0x09, 0x0A, 0x0D)):
        return None
    return text.decode("ascii")


# ------------------------------------------------------------------------------------------------
# describe: Model → the JSON document


def _quantization(q) -> dict | None:
    if q is None:
        return None
    scale, zp = q.scale or (), q.zero_point or ()
    qmin, qmax = q.min or (), q.max or ()
    if not (scale or zp or qmin or qmax or q.details is not None):
        return None  # an empty table: converters write one for every float tensor
    details = None
    if q.details is not None:
        details = q.details_type.name if isinstance(q.details_type, enum.Enum) else f"member {q.details_type}"
    return {
        "scale": _plain(scale),
        "zero_point": _plain(zp),
        "quantized_dimension": int(q.quantized_dimension),
        "min": _plain(qmin),
        "max": _plain(qmax),
        "details": details,
    }


def _tensor(model, index: int, t) -> dict:
    nbytes = len(buffer_bytes(model, t.buffer)) if t.buffer else 0
    return {
        "index": index,
        "name": t.name,
        "type": _plain(t.type),
        "shape": list(t.shape or ()),
        "shape_signature": None if t.shape_signature is None else list(t.shape_signature),
        "buffer": int(t.buffer),
        "bytes": nbytes,
        "quantization": _quantization(t.quantization),
        "is_variable": bool(t.is_variable),
        "sparse": t.sparsity is not None,
        "has_rank": bool(t.has_rank),
    }


def _operator(model, index: int, op) -> dict:
    opcode = model.operator_codes[op.opcode_index]
    opts = parse_options(model, op)
    custom = opts.custom
    decoded = custom is not None and custom.format in ("flexbuffers", "raw struct")
    raw = op.custom_options
    return {
        "index": index,
        "op": op_name(opcode),
        "opcode_index": int(op.opcode_index),
        "version": int(opcode.version),
        "inputs": list(op.inputs or ()),
        "outputs": list(op.outputs or ()),
        "intermediates": list(op.intermediates or ()),
        "options_table": opts.table,
        "options_table_present": bool(opts.table_present),
        "options": {k: _plain(v) for k, v in opts.non_default().items()},
        "custom_options": _plain(custom.value) if decoded else None,
        "custom_options_format": custom.format if custom is not None and custom.format != "none" else None,
        "custom_options_bytes": 0 if raw is None else len(raw),
    }


def describe(model, *, file: str | None = None, size: int | None = None,
             subgraphs: list[int] | None = None) -> dict:
    """The ``inspect --json`` document of a loaded model (``subgraphs``: which ones, default all)."""
    codes = model.operator_codes or ()
    all_subgraphs = model.subgraphs or ()
    use = [0] * len(codes)
    for sg in all_subgraphs:
        for op in sg.operators or ():
            if 0 <= op.opcode_index < len(use):
                use[op.opcode_index] += 1
    operator_codes = []
    for i, oc in enumerate(codes):
        operator_codes.append({
            "index": i,
            "op": op_name(oc),
            "builtin_code": int(builtin_code(oc)),
            "custom_code": oc.custom_code,
            "version": int(oc.version),
            "count": use[i],
        })
    chosen = range(len(all_subgraphs)) if subgraphs is None else subgraphs
    out_subgraphs = []
    for s in chosen:
        sg = all_subgraphs[s]
        out_subgraphs.append({
            "index": s,
            "name": sg.name,
            "inputs": list(sg.inputs or ()),
            "outputs": list(sg.outputs or ()),
            "tensors": [_tensor(model, i, t) for i, t in enumerate(sg.tensors or ())],
            "operators": [_operator(model, i, op) for i, op in enumerate(sg.operators or ())],
        })
    metadata = {}
    for m in model.metadata or ():
        raw = bytes(buffer_bytes(model, m.buffer))
        metadata[m.name] = {"buffer": int(m.buffer), "bytes": len(raw), "text": _printable(raw)}
    signatures = []
    for sd in model.signature_defs or ():
        signatures.append({
            "key": sd.signature_key,
            "subgraph_index": int(sd.subgraph_index),
            "inputs": {tm.name: int(tm.tensor_index) for tm in sd.inputs or ()},
            "outputs": {tm.name: int(tm.tensor_index) for tm in sd.outputs or ()},
        })
    return {
        "file": file,
        "size": size,
        "version": int(model.version),
        "description": model.description,
        "operator_codes": operator_codes,
        "subgraphs": out_subgraphs,
        "metadata": metadata,
        "min_runtime_version": stored_min_runtime(model),
        "signatures": signatures,
        "load_notes": [str(n) for n in getattr(model, "load_notes", ()) or ()],
    }


def to_json(doc: Any, indent: int = 2) -> str:
    """JSON text of a document: objects indented, lists of plain numbers/strings kept on one line.

    Strict JSON: a NaN or infinity that slipped past :func:`_plain` raises ``ValueError``.
    """
    def leaf(v):
        return json.dumps(v, allow_nan=False, ensure_ascii=False)

    def emit(v, depth: int) -> str:
        pad, inner = " " * (indent * depth), " " * (indent * (depth + 1))
        if isinstance(v, dict):
            if not v:
                return "{}"
            items = [f"{inner}{leaf(str(k))}: {emit(x, depth + 1)}" for k, x in v.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(v, (list, tuple)):
            if not any(isinstance(x, (dict, list, tuple)) for x in v):
                return "[" + ", ".join(leaf(x) for x in v) + "]"
            return "[\n" + ",\n".join(inner + emit(x, depth + 1) for x in v) + "\n" + pad + "]"
        return leaf(v)

    return emit(doc, 0)


# ------------------------------------------------------------------------------------------------
# Text rendering of the document

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


# ------------------------------------------------------------------------------------------------
# Commands


def _int_at_least(lowest: int, below: str):
    """An argparse type: an integer >= ``lowest``; ``below`` says what is wrong with a smaller one."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < lowest:
            raise argparse.ArgumentTypeError(f"{value} {below}")
        return value
    return parse


_nonnegative = _int_at_least(0, "is negative")
_positive = _int_at_least(1, "is below 1 (as in litert, num_threads should be >= 1)")


def _register_inspect(sub) -> None:
    p = sub.add_parser("inspect", help="summarize a .tflite file (tensors, operators, options, metadata)",
                       description="Summarize a .tflite file: operator codes, tensors, operators with their "
                                   "non-default options, metadata and signatures.")
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.add_argument("--subgraph", type=_nonnegative, metavar="N", help="show only subgraph N")
    p.add_argument("--limit", type=_nonnegative, metavar="N",
                   help="text view: show at most N rows of each list (JSON output is always complete)")
    p.set_defaults(run=_cmd_inspect)


def _cmd_inspect(args) -> int:
    model = load(args.model)
    count = len(model.subgraphs or ())
    chosen = None
    if args.subgraph is not None:
        if args.subgraph >= count:
            raise WorkbenchError(f"subgraph {args.subgraph} does not exist (the model has {count})")
        chosen = [args.subgraph]
    doc = describe(model, file=str(args.model), size=os.path.getsize(args.model), subgraphs=chosen)
    if args.json:
        sys.stdout.write(to_json(doc) + "\n")
    else:
        sys.stdout.write(render_text(doc, args.limit) + "\n")
    sys.stdout.flush()
    return EXIT_OK


# ------------------------------------------------------------------------------------------------
# versions: stored vs computed operator versions, minimum runtime, and a runtime's verdict

EXIT_CANNOT_RUN = 1  # `versions --runtime X`: release X would refuse the model (see the README)
_RELEASE = re.compile(r"[0-9]+(\.[0-9]+)*")
_DRIVER_PLACES = 6  # text view: operator positions listed per driving (op, version)


def _release(text: str) -> str:
    if not _RELEASE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a release such as 2.3.0")
    return text


def full_release(text: str) -> str:
    """A release as MAJOR.MINOR.PATCH: ``1.14`` → ``1.14.0``, ``2`` → ``2.0.0`` (TFLite's releases all
    have three components; compared as written, ``1.14`` would be below ``1.14.0``)."""
    parts = text.split(".")
    return ".".join(parts + ["0"] * (3 - len(parts)))


def _version_note(stored: int, computed: int | None, shared_by: int, code_max: int | None, code: int,
                  op=None, quantized_model: bool = False) -> str | None:
    """Why a computed version differs from the stored one, when the file itself can say."""
    if computed is None or computed == stored:
        return None
    if computed < stored and shared_by > 1 and code_max == stored:
        return (f"OperatorCode {code} is shared by {shared_by} operators and stores their highest version, "
                f"v{stored}")
    if computed > stored:
        return "computed above stored: the file's writer did not apply this rule"
    return (legacy_quantizer_note(op, stored, computed, quantized_model)
            or "stored above computed: no rule of today's gives this version")


def _integer_quantized(model) -> bool:
    """Whether any tensor of the model is int8 / uint8 / int16 with quantization parameters."""
    return any(t.type in (TensorType.INT8, TensorType.UINT8, TensorType.INT16) and t.quantization is not None
               and t.quantization.scale is not None and len(t.quantization.scale) > 0
               for sg in model.subgraphs or () for t in sg.tensors or ())


def _drivers(mr) -> list[dict]:
    return [{"subgraph": e.subgraph, "index": e.op_index, "op": e.op, "version": e.version, "runtime": e.runtime}
            for e in mr.drivers]


def versions_report(model, *, file: str | None = None, runtime: str | None = None) -> dict:
    """The ``versions --json`` document: per-operator stored vs computed versions, the minimum runtime
    (computed, metadata, from stored versions) and, with ``runtime``, what that release would refuse.

    ``runtime`` with fewer than three components is read as a release (``1.14`` → ``1.14.0``);
    ``runtime_given`` keeps the text as given."""
    rows, users, code_max = [], {}, {}
    quantized = _integer_quantized(model)
    for s, sg in enumerate(model.subgraphs or ()):
        for i, op in enumerate(sg.operators or ()):
            v = op_version(model, s, i)
            custom = v.signature.op == BuiltinOperator.CUSTOM
            computed = None if custom else v.number
            rows.append((s, i, op.opcode_index, v, computed))
            users[op.opcode_index] = users.get(op.opcode_index, 0) + 1
            if computed is not None:
                code_max[op.opcode_index] = max(code_max.get(op.opcode_index, 0), computed)
    operators = []
    for s, i, code, v, computed in rows:
        operators.append({
            "subgraph": s, "index": i, "op": v.op, "opcode_index": int(code), "stored_version": int(v.stored),
            "computed_version": computed, "reason": v.reason,
            "note": _version_note(v.stored, computed, users[code], code_max.get(code), code, v.signature.op,
                                  quantized),
        })
    computed_mr, stored_mr = min_runtime(model, computed=True), min_runtime(model)
    doc = {
        "file": file,
        "operators": operators,
        "differences": sum(1 for o in operators if o["computed_version"] not in (None, o["stored_version"])),
        "min_runtime": {
            "computed": computed_mr.version or None,
            "stored": read_min_runtime_metadata(model),
            "drivers": _drivers(computed_mr),
            "from_stored_versions": stored_mr.version or None,
            "stored_version_drivers": _drivers(stored_mr),
        },
    }
    if runtime is not None:
        given, runtime = runtime, full_release(runtime)
        findings = check(model, runtime)
        doc["runtime"] = runtime
        doc["runtime_given"] = given
        doc["can_run"] = not any(f.is_error for f in findings)
        doc["findings"] = [{
            "kind": f.kind, "subgraph": f.subgraph, "index": f.op_index, "op": f.op, "version": f.version,
            "computed_version": f.computed, "error": f.message, "reason": f.reason, "refuses": f.is_error,
        } for f in findings]
        doc["finding_groups"] = [{k: g[k] for k in ("kind", "op", "version", "refuses", "count", "nodes")}
                                 for g in group_findings(doc["findings"])]
    return doc


def _why(f: dict) -> str:
    """A finding's reason, with the computed version when it differs from the stored one."""
    why = f.get("reason") or ""
    if why and f.get("computed_version") is not None and f["computed_version"] != f.get("version"):
        why += f" (stored v{f['version']}, today's rules compute v{f['computed_version']})"
    return why


def group_findings(findings: list[dict]) -> list[dict]:
    """Findings of the same kind, op and stored version as one group, in order of first appearance:
    ``kind``, ``op``, ``version``, ``refuses``, ``count``, ``nodes`` ([[subgraph, index], ...]; empty
    for a model-level finding), ``findings`` (the members), ``errors`` and ``whys`` (their distinct
    texts, each with the nodes it belongs to). Generic over ``kind``: any finding with those fields
    groups the same way."""
    groups: dict[tuple, dict] = {}
    for f in findings:
        key = (f["kind"], f["op"], f["version"], bool(f["refuses"]))
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"kind": f["kind"], "op": f["op"], "version": f["version"], "refuses": bool(f["refuses"]),
                               "count": 0, "nodes": [], "findings": [], "errors": {}, "whys": {}}
        g["count"] += 1
        g["findings"].append(f)
        node = None if f["subgraph"] is None else [f["subgraph"], f["index"]]
        if node is not None:
            g["nodes"].append(node)
        for field, text in (("errors", f["error"] or ""), ("whys", _why(f))):
            if text:
                g[field].setdefault(text, []).append(node)
    return list(groups.values())


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


def _register_versions(sub) -> None:
    p = sub.add_parser("versions", help="operator versions (stored vs computed), minimum runtime, runtime check",
                       description="For every operator: the version stored in the file and the version today's "
                                   "rules compute, with the reason; the model's minimum TFLite runtime (computed, "
                                   "and the min_runtime_version metadata); with --runtime, what that release "
                                   "would refuse and the error it would print. Exit status 1 when --runtime is "
                                   "given and that release cannot run the model.")
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--runtime", type=_release, metavar="X.Y.Z",
                   help="check the model against TFLite release X.Y.Z (X.Y means X.Y.0; exit status 1 if it cannot "
                        "run it)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.add_argument("--limit", type=_nonnegative, metavar="N",
                   help="text view: show at most N operators (JSON output is always complete)")
    p.set_defaults(run=_cmd_versions)


def _cmd_versions(args) -> int:
    model = load(args.model)
    doc = versions_report(model, file=str(args.model), runtime=args.runtime)
    if args.json:
        sys.stdout.write(to_json(doc) + "\n")
    else:
        sys.stdout.write(render_versions(doc, args.limit) + "\n")
    sys.stdout.flush()
    if args.runtime is not None and not doc["can_run"]:
        return EXIT_CANNOT_RUN
    return EXIT_OK


def _check_writable(path: str, flag: str) -> None:
    """Before any work: the file ``path`` (given with ``flag``) can be created, i.e. its directory exists."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise WorkbenchError(f"{flag} {path}: cannot write there: it is a directory")
    if not os.path.isdir(directory):
        raise WorkbenchError(f"{flag} {path}: cannot write there: directory {directory} does not exist")


def _write(path: str, flag: str, write) -> None:
    """``write(path)``, an OSError said as a write error that names the file."""
    try:
        write(path)
    except OSError as exc:
        raise WorkbenchError(f"{flag} {path}: cannot write: {exc.strerror or _one_line(exc)}") from None


def _write_bytes(data: bytes):
    def write(path):
        with open(path, "wb") as f:
            f.write(data)
    return write


def _register_partition(sub) -> None:
    p = sub.add_parser("partition", help="cut a model between a (simulated) accelerator and the CPU",
                       description="Partition MODEL for a target with a strategy: every node's placement and "
                                   "the exact constraint that kept it on the CPU; with -o, write the compiled "
                                   "model (one custom op per partition, runnable by workbench.Interpreter).")
    p.add_argument("model", nargs="?", help="path of a .tflite file")
    p.add_argument("--target", default="xnnpack",
                   help="a shipped target (see --list-targets) or the path of a .json/.toml target file")
    p.add_argument("--strategy", default="tflite", choices=("tflite", "edgetpu", "tidl"))
    p.add_argument("--max-partitions", type=_nonnegative, default=0, metavar="K", help="tflite / tidl: 0 = no limit; edgetpu: 0 = one region (the compiler's default), "
                        "K = up to K regions (the compiler's -a)")
    p.add_argument("--min-nodes", type=_nonnegative, default=0, metavar="N")
    p.add_argument("--deny", nargs="*", default=[], metavar="NODE|OP", help="node indices or op names kept on the CPU")
    p.add_argument("-o", "--output", metavar="OUT.tflite", help="write the compiled model here")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.add_argument("--list-targets", action="store_true", help="list the shipped targets and exit")
    p.set_defaults(run=_cmd_partition)


def _check_deny(model, deny: list[str]) -> list[str]:
    """``--deny`` items as given, each checked against subgraph 0 (the one partitioned): a node index
    in range, or an op name (builtin, or a custom op's code) that some operator of it has."""
    import difflib

    sg = (model.subgraphs or [None])[0]
    ops = [] if sg is None else [op_name(model.operator_codes[op.opcode_index]) for op in sg.operators or ()]
    for item in deny:
        if item.lstrip("-").isdigit():
            if not 0 <= int(item) < len(ops):
                raise WorkbenchError(f"--deny {item}: there is no node {item} (subgraph 0 has {len(ops)} operators, "
                                     f"nodes 0..{len(ops) - 1})" if ops else f"--deny {item}: subgraph 0 has no "
                                     f"operators")
        elif item not in ops:
            present = sorted(set(ops))
            if item in BuiltinOperator.__members__:
                what = f"the model has no {item} operator in subgraph 0"
            else:
                what = f"{item!r} is not an op name (a builtin such as CONV_2D, or a custom op's code)"
            close = difflib.get_close_matches(item, present, n=1) or \
                difflib.get_close_matches(item.upper(), present, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise WorkbenchError(f"--deny {item}: {what}{hint} (its ops: {', '.join(present) or 'none'})")
    return list(deny)


def _cmd_partition(args) -> int:
    from .partition import compile as compile_plan, list_targets, load_target, partition
    from .schema import dump

    if args.list_targets:
        for name in list_targets():
            t = load_target(name)
            sys.stdout.write(f"{name:<14} {len(t.ops):>3} ops  {t.description}\n")
        return EXIT_OK
    if not args.model:
        print("error: partition needs MODEL (or --list-targets)", file=sys.stderr)
        return EXIT_ERROR
    if args.output:
        _check_writable(args.output, "-o")
    model = load(args.model)
    deny = _check_deny(model, args.deny)
    plan = partition(model, args.target, args.strategy, deny=deny, max_partitions=args.max_partitions,
                     min_nodes=args.min_nodes)
    doc = plan.to_dict()
    doc["file"] = str(args.model)
    if args.output:
        compiled = compile_plan(plan)
        _write(args.output, "-o", _write_bytes(dump(compiled)))
        doc["output"] = {"path": str(args.output), "tensors": len(compiled.subgraphs[0].tensors),
                         "operators": len(compiled.subgraphs[0].operators)}
    if args.json:
        sys.stdout.write(to_json(doc) + "\n")
    else:
        text = repr(plan)
        est = doc["estimate_us"]
        text += (f"\n  estimate: {est['plan_us']:.1f} µs with the target vs {est['cpu_only_us']:.1f} µs on the CPU "
                 f"alone (simulated)")
        if args.output:
            o = doc["output"]
            text += f"\n  wrote {o['path']}: {o['operators']} operators, {o['tensors']} tensors"
        sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return EXIT_OK


# (name, registration) in the order `workbench --help` lists them; later commands append here

# --------------------------------------------------------------------------------------------
# run / bench


def _register_run(sub) -> None:
    p = sub.add_parser("run", help="run a model with workbench.Interpreter (seeded or given inputs)",
                       description="Run MODEL once with workbench.Interpreter and summarize its outputs. "
                                   "Inputs are seeded random values unless given as NAME=FILE.npy. An input "
                                   "stored with -1 dimensions in its shape signature (e.g. audio of any "
                                   "length) runs at its stored shape unless resized, like litert's "
                                   "resize_tensor_input: by a given array's shape or by --shape. A model "
                                   "compiled by `workbench partition -o` runs as it is (the offload op is "
                                   "known to the default resolver). With --delegate TARGET the model runs with "
                                   "a simulated accelerator for that target applied as litert applies a "
                                   "delegate: the summary gives nodes per lane, partitions, bytes copied, the "
                                   "device's modeled time and the host's measured time.")
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy | FILE.npz",
                   help="an input array (by tensor name or input position); repeatable; or one .npz holding "
                        "every input (by tensor name, or by position arr_0, arr_1, ...). An input whose shape "
                        "signature has -1 dimensions is resized to the array's shape first")
    p.add_argument("--delegate", metavar="TARGET",
                   help="apply a simulated accelerator for TARGET (a name from `workbench partition "
                        "--list-targets` or a target file)")
    p.add_argument("--strategy", choices=["tflite", "tidl", "edgetpu"], default=None,
                   help="with --delegate: how the graph is cut (default tflite, TFLite's own partitioning)")
    p.add_argument("--precision", choices=["float", "int8"], default=None,
                   help="with --delegate: float (the device runs the model's own kernels) or int8 (each partition "
                        "is calibrated into an int8 copy, the TIDL way; needs --calibration)")
    p.add_argument("--calibration", metavar="SAMPLES.npz[:KEY]",
                   help="with --precision int8: calibration frames from the training data, one array per model "
                        "input (by tensor name or arr_0, arr_1, ...) with the frames stacked on a first axis; "
                        ":KEY picks one array for a one-input model (e.g. digits_split.npz:x_train)")
    p.add_argument("--calibration-frames", type=_positive, default=64, metavar="N",
                   help="use the first N calibration frames (default 64)")
    p.add_argument("--trace", metavar="TRACE.json",
                   help="write the run as Chrome trace / Perfetto JSON (a host lane and, with --delegate, a "
                        "device lane)")
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help=SHAPE_HELP)
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--steps", action="store_true", help="print one line per executed node")
    p.add_argument("--profile", type=_nonnegative, default=0, metavar="RUNS",
                   help="also time RUNS invokes per node (benchmark_model-like tables)")
    p.add_argument("--save", metavar="OUT.npz", help="write the outputs (by output name) to an .npz")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.set_defaults(run=_cmd_run)


SHAPE_HELP = ("resize an input before allocating (by tensor name or input position), e.g. --shape x=1,1280; "
              "only the -1 dimensions of its shape signature may change; a seeded input gets this shape; "
              "repeatable")


def _input_position(details, key: str, flag: str) -> int:
    pos = next((i for i, d in enumerate(details) if d["name"] == key), None)
    if pos is None and key.isdigit() and int(key) < len(details):
        pos = int(key)
    if pos is None:
        names = ", ".join(d["name"] for d in details)
        raise WorkbenchError(f"{flag} {key!r}: the model has no such input (inputs: {names})")
    return pos


def _parse_shape(spec: str) -> tuple[str, tuple]:
    key, sep, dims = spec.partition("=")
    try:
        shape = tuple(int(v) for v in dims.replace("x", ",").split(",") if v.strip() != "") if sep else None
    except ValueError:
        shape = None
    if not sep or shape is None or any(d < 0 for d in shape):
        raise WorkbenchError(f"--shape {spec!r}: expected NAME=D0,D1,... with dimensions >= 0 (e.g. x=1,1280)")
    return key, shape


def _unknown_rank(it, d) -> bool:
    """Whether input ``d`` is stored with an unknown rank (``has_rank`` false, no shape): any shape fits it,
    as litert's resize_tensor_input (not strict) allows."""
    t = it.model.subgraphs[0].tensors[d["index"]]
    return not t.has_rank and not t.shape and not t.shape_signature


def _resize(it, d, shape: tuple, why: str) -> None:
    """Resize input ``d`` to ``shape`` if it differs, as litert's resize_tensor_input(strict=True) allows
    (an input of unknown rank takes any shape, as litert's resize_tensor_input does)."""
    current = tuple(int(v) for v in d["shape"])
    if shape == current:
        return
    if _unknown_rank(it, d):
        it.resize_tensor_input(d["index"], list(shape))
        return
    sig = tuple(int(v) for v in d["shape_signature"])
    if len(shape) != len(sig):
        raise WorkbenchError(f"{why}: input '{d['name']}' has rank {len(sig)} (shape {list(current)}, shape "
                             f"signature {list(sig)}); {list(shape)} has rank {len(shape)}")
    fixed = [k for k, (s, v) in enumerate(zip(sig, shape)) if s != -1 and s != v]
    if fixed:
        k = fixed[0]
        raise WorkbenchError(f"{why}: input '{d['name']}' has shape {list(current)} and shape signature {list(sig)}: "
                             f"dimension {k} is fixed at {sig[k]} and cannot become {shape[k]} (only -1 dimensions "
                             f"can be resized)")
    it.resize_tensor_input(d["index"], list(shape), strict=True)


_NPY_MAGIC = b"\x93NUMPY"


def _load_input(key: str, path: str, d) -> np.ndarray:
    """The array of ``--input NAME=FILE.npy`` for input ``d``; a file that is not a .npy array of the
    input's kind is a usage error that names the file and says what is wrong with it."""
    where = f"--input {key}"
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_NPY_MAGIC))
    except OSError as exc:
        raise WorkbenchError(f"{where}: cannot read {path}: {exc.strerror or _one_line(exc)}") from None
    if head[:4] == b"PK\x03\x04":
        raise WorkbenchError(f"{where}: {path} is an .npz archive (np.savez); give one array saved with np.save")
    if head != _NPY_MAGIC:
        what = "an empty file" if not head else "not a .npy file (it does not start with numpy's \\x93NUMPY magic)"
        raise WorkbenchError(f"{where}: {path} is {what}; save the array with np.save")
    try:
        a = np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "Object arrays" in str(exc):
            raise WorkbenchError(f"{where}: {path} holds an object array (pickled Python objects), not "
                                 f"numbers") from None
        raise WorkbenchError(f"{where}: {path} is a truncated or corrupt .npy file ({_one_line(exc)})") from None
    except EOFError as exc:
        raise WorkbenchError(f"{where}: {path} is a truncated .npy file ({_one_line(exc)})") from None
    return _check_input_array(where, path, a, d)


def _check_input_array(where: str, source: str, a, d) -> np.ndarray:
    """An input array given on the command line, checked against input ``d``'s kind."""
    want = np.dtype(d["dtype"])
    if want.kind == "S":                    # a STRING input: set_tensor takes bytes and str
        if a.dtype.kind not in "SU":
            raise WorkbenchError(f"{where}: {source} holds a {a.dtype} array; input '{d['name']}' is a STRING "
                                 f"tensor (give an array of bytes or str)")
        return a
    if a.dtype.kind not in "biufc":
        raise WorkbenchError(f"{where}: {source} holds a {a.dtype} array, not numbers; input '{d['name']}' is "
                             f"{want}")
    if a.dtype != want:
        raise WorkbenchError(f"{where}: {source} holds a {a.dtype} array; input '{d['name']}' is {want} "
                             f"(save it with .astype(np.{want.name}))")
    return a


def _load_npz_inputs(path: str, details) -> dict:
    """``--input FILE.npz``: input position → array, the archive's keys being input names or arr_0, arr_1 …
    (np.savez's names for arrays given by position); every input must be there."""
    where = f"--input {path}"
    try:
        archive = np.load(path, allow_pickle=False)
    except OSError as exc:
        raise WorkbenchError(f"{where}: cannot read {path}: {exc.strerror or _one_line(exc)}") from None
    except (ValueError, EOFError) as exc:
        raise WorkbenchError(f"{where}: {path} is not a readable .npz archive ({_one_line(exc)})") from None
    if not hasattr(archive, "files"):
        raise WorkbenchError(f"{where}: {path} is a single .npy array; give it as NAME={path}")
    names = [d["name"] for d in details]
    out: dict = {}
    with archive:
        for key in archive.files:
            if key in names:
                pos = names.index(key)
            elif re.fullmatch(r"arr_\d+", key) and int(key[4:]) < len(details):
                pos = int(key[4:])
            else:
                raise WorkbenchError(f"{where}: {path} holds '{key}', which names no input (inputs: "
                                     f"{', '.join(names)}, or arr_0 … arr_{len(names) - 1} by position)")
            if pos in out:
                raise WorkbenchError(f"{where}: {path} gives input '{names[pos]}' twice")
            try:
                a = archive[key]
            except ValueError as exc:
                raise WorkbenchError(f"{where}: {path}['{key}'] cannot be read without pickle "
                                     f"({_one_line(exc)})") from None
            out[pos] = _check_input_array(where, f"{path}['{key}']", a, details[pos])
    missing = [names[k] for k in range(len(names)) if k not in out]
    if missing:
        raise WorkbenchError(f"{where}: {path} has no array for input{'s' if len(missing) > 1 else ''} "
                             f"{', '.join(missing)} (it holds {', '.join(archive.files) or 'nothing'})")
    return out


def _kernel_missing(it) -> bool:
    """Whether some operator of the model has no kernel in the interpreter's resolver (allocate_tensors
    then fails on that, whatever the input shapes)."""
    for sg in it.model.subgraphs or ():
        for op in sg.operators or ():
            oc = it.model.operator_codes[op.opcode_index]
            try:
                code = builtin_code(oc)
                op = oc.custom_code if code == BuiltinOperator.CUSTOM else BuiltinOperator(code)
                it.resolver.find(op, int(oc.version))
            except (UnsupportedOpError, ValueError):
                return True
    return False


def _shape_hint(it, details, given) -> str:
    """For an allocation that failed while preparing a node: the inputs that run at a stored shape
    which --shape or an --input array could change."""
    hints = []
    for k, d in enumerate(details):
        if k in given:
            continue
        shape, sig = [int(v) for v in d["shape"]], [int(v) for v in d["shape_signature"]]
        if _unknown_rank(it, d):
            hints.append(f"input '{d['name']}' has unknown rank and runs as a scalar unless given a shape with "
                         f"--shape {d['name']}=... or an --input array")
        elif -1 in sig:
            hints.append(f"input '{d['name']}' has shape signature {sig} and runs at its stored shape {shape} "
                         f"unless resized with --shape {d['name']}=... or an --input array")
    return "; ".join(hints)


def _allocate_and_feed(it, input_specs: list[str], shape_specs: list[str], seed: int) -> list:
    """Resize the inputs asked for (``--shape``, or a given array's shape), allocate, then set every input:
    the given arrays, seeded random values for the others."""
    from .bench import random_inputs

    details = it.get_input_details()
    arrays, shapes = {}, {}
    for spec in shape_specs:
        key, shape = _parse_shape(spec)
        shapes[_input_position(details, key, "--shape")] = (shape, f"--shape {spec}")
    given = []
    for spec in input_specs:
        key, sep, path = spec.partition("=")
        if not sep:
            if not spec.lower().endswith(".npz"):
                raise WorkbenchError(f"--input {spec!r}: expected NAME=FILE.npy, or one FILE.npz holding every input")
            given += [(k, spec, a) for k, a in _load_npz_inputs(spec, details).items()]
            continue
        pos = _input_position(details, key, "--input")
        given.append((pos, spec, _load_input(key, path, details[pos])))
    for pos, spec, array in given:
        key = details[pos]["name"]
        if pos in arrays:
            raise WorkbenchError(f"--input {spec!r}: input '{key}' is given twice")
        arrays[pos] = array
        shape = tuple(arrays[pos].shape)
        if pos in shapes and shapes[pos][0] != shape:
            raise WorkbenchError(f"--input {spec!r}: the array has shape {list(shape)}, but {shapes[pos][1]} asks "
                                 f"for {list(shapes[pos][0])}")
        shapes[pos] = (shape, f"--input {key} (an array of shape {list(shape)})")
    for pos, (shape, why) in shapes.items():
        _resize(it, details[pos], shape, why)
    try:
        it.allocate_tensors()
    except WorkbenchError as exc:
        # the hint is about shapes: not for a malformed file or an op without a kernel
        hint = "" if isinstance(exc, ModelError) or _kernel_missing(it) else _shape_hint(it, details, shapes)
        if not hint:
            raise
        raise WorkbenchError(f"{exc} (hint: {hint})") from None
    details = it.get_input_details()
    values = random_inputs(details, seed) if len(arrays) < len(details) else [None] * len(details)
    for k, a in arrays.items():
        values[k] = a
    for d, v in zip(details, values):
        it.set_tensor(d["index"], v)
    return values


def _array_summary(name: str, a) -> dict:
    flat = np.asarray(a).reshape(-1)
    numeric = flat.dtype.kind in "biuf" and flat.size
    f = flat.astype(np.float64) if numeric else None
    return {"name": name, "dtype": str(flat.dtype), "shape": list(np.shape(a)),
            "min": _finite(float(f.min())) if numeric else None, "max": _finite(float(f.max())) if numeric else None,
            "mean": _finite(float(f.mean())) if numeric else None,
            "first": [_finite(float(x)) if numeric else str(x) for x in flat[:6]]}


def _finite(x: float):
    return x if np.isfinite(x) else repr(x)


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


def _run_delegate(args):
    """The delegate of ``run --delegate`` (bad target or options: a usage error)."""
    from .delegate import load_delegate

    if args.delegate is None:
        for flag, value in (("--strategy", args.strategy), ("--precision", args.precision),
                            ("--calibration", args.calibration)):
            if value is not None:
                raise WorkbenchError(f"{flag} needs --delegate TARGET")
        return None
    if args.precision == "int8" and args.calibration is None:
        raise WorkbenchError("--precision int8 needs --calibration SAMPLES.npz (frames from the training data)")
    if args.calibration is not None and args.precision != "int8":
        raise WorkbenchError("--calibration is for --precision int8")
    options = {"strategy": args.strategy} if args.strategy else {}
    try:
        d = load_delegate(args.delegate, options)
    except ValueError as exc:
        raise WorkbenchError(f"--delegate {args.delegate}: " + "; ".join(str(exc).splitlines())) from None
    if args.precision == "int8":
        from .delegate import SimulatedAccelerator

        frames = _calibration_frames(args.calibration, args.model, args.calibration_frames)
        d = SimulatedAccelerator(d.target, strategy=d.strategy, precision="int8", calibration=frames,
                                 progress=not args.json and sys.stderr.isatty())
    return d


def _calibration_frames(spec: str, model_path: str, limit: int) -> list:
    """``--calibration FILE.npz[:KEY]`` → a list of frames (one array per model input each)."""
    from .interpreter import Interpreter

    path, _, key = spec.partition(":") if not Path(spec).exists() else (spec, "", "")
    where = f"--calibration {spec}"
    details = Interpreter(model_path=model_path).get_input_details()
    try:
        archive = np.load(path, allow_pickle=False)
    except OSError as exc:
        raise WorkbenchError(f"{where}: cannot read {path}: {exc.strerror or _one_line(exc)}") from None
    except (ValueError, EOFError) as exc:
        raise WorkbenchError(f"{where}: {path} is not a readable .npz archive ({_one_line(exc)})") from None
    if not hasattr(archive, "files"):
        raise WorkbenchError(f"{where}: {path} is one .npy array; give an .npz (np.savez) of the frames")
    with archive:
        if key:
            if key not in archive.files:
                raise WorkbenchError(f"{where}: {path} has no array '{key}' (it holds {', '.join(archive.files)})")
            if len(details) != 1:
                raise WorkbenchError(f"{where}: :KEY picks one array, but the model has {len(details)} inputs")
            stacks = {0: archive[key]}
        else:
            names = [d["name"] for d in details]
            stacks = {}
            for k in archive.files:
                pos = names.index(k) if k in names else (int(k[4:]) if re.fullmatch(r"arr_\d+", k) else None)
                if pos is None or pos >= len(details):
                    raise WorkbenchError(f"{where}: {path} holds '{k}', which names no input (inputs: "
                                         f"{', '.join(names)}; or pick one array with {path}:KEY)")
                stacks[pos] = archive[k]
            missing = [names[k] for k in range(len(names)) if k not in stacks]
            if missing:
                raise WorkbenchError(f"{where}: {path} has no frames for input {', '.join(missing)}")
    counts = set()
    for pos, a in stacks.items():
        d = details[pos]
        shape = tuple(int(v) for v in d["shape"])
        if a.dtype.kind not in "biuf" or a.ndim != len(shape) or tuple(a.shape[1:]) != shape[1:]:
            raise WorkbenchError(f"{where}: frames for input '{d['name']}' should be an array of numbers of shape "
                                 f"[N, {', '.join(map(str, shape[1:]))}] (frames stacked on the first axis), "
                                 f"got {a.dtype} {list(a.shape)}")
        counts.add(a.shape[0] // max(shape[0], 1))
    if len(counts) != 1 or not min(counts):
        raise WorkbenchError(f"{where}: the inputs have different numbers of frames, or none ({sorted(counts)})")
    n = min(min(counts), limit)
    frames = []
    for i in range(n):
        frame = []
        for pos in range(len(details)):
            b = max(int(details[pos]["shape"][0]), 1)
            frame.append(stacks[pos][i * b:(i + 1) * b].astype(details[pos]["dtype"]))
        frames.append(frame)
    return frames


def _delegation_summary(it, delegate, events, host_ms: float) -> dict:
    """What ``run --delegate`` reports: nodes per lane, partitions, bytes copied, modeled and measured time."""
    plans = it.delegations[0][1].plans if it.delegations and it.delegations[0][1] is not None else {}
    places = it.placements()
    lanes = {"device": sum(p.lane == "device" for p in places), "cpu": sum(p.lane == "cpu" for p in places)}
    reasons: dict = {}
    for p in places:
        if p.lane == "cpu":
            reasons[p.code] = reasons.get(p.code, 0) + 1
    parts = [{"subgraph": s, "partition": p.index, "nodes": list(p.nodes), "est_us": round(p.est_us, 3)}
             for s, plan in sorted(plans.items()) for p in plan.partitions]
    copies = [e for e in events if e.kind in ("copy in", "copy out")]
    device_ms = sum(e.modeled_ms or 0.0 for e in events if e.kind == "delegate")
    return {"delegate": delegate.name, "target": delegate.target.name, "strategy": delegate.strategy,
            "precision": getattr(delegate, "precision", "float"),
            "nodes": lanes, "cpu_reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
            "partitions": parts, "bytes_copied": {"in": sum(e.bytes for e in copies if e.kind == "copy in"),
                                                  "out": sum(e.bytes for e in copies if e.kind == "copy out")},
            "device_ms_modeled": round(device_ms, 6), "host_ms_measured": round(host_ms, 6),
            "log": list(it.delegate_log)}


def _cmd_run(args) -> int:
    from .interpreter import Interpreter

    if args.save:
        _check_writable(args.save, "--save")
    if args.trace:
        _check_writable(args.trace, "--trace")
    delegate = _run_delegate(args)
    it = Interpreter(model_path=args.model, experimental_delegates=[delegate] if delegate else None)
    if delegate is not None and not any(p.lane == "device" for p in it.placements()):
        counts: dict = {}
        for p in it.placements():
            counts[str(p.reason)] = counts.get(str(p.reason), 0) + 1
        top = "; ".join(f"{n} × {r}" for r, n in sorted(counts.items(), key=lambda kv: -kv[1])[:3])
        raise WorkbenchError(f"--delegate {args.delegate}: the target takes none of the model's "
                             f"{len(it.placements())} nodes ({top})")
    _allocate_and_feed(it, args.input, args.shape, args.seed)
    steps = []
    events = []
    if args.steps or args.trace or delegate is not None:
        events = list(it.steps())
        for e in events if args.steps else ():
            steps.append({"subgraph": e.subgraph, "node": e.node, "op": e.op, "version": e.version,
                          "kernel": e.kernel, "lane": e.lane, "kind": e.kind, "ms": round(e.elapsed_ms, 4),
                          "modeled_ms": None if e.modeled_ms is None else round(e.modeled_ms, 6),
                          "bytes": e.bytes,
                          "outputs": [None if o is None else list(o.shape) for o in e.outputs]})
    else:
        it.invoke()
    outputs = {d["name"]: it.get_tensor(d["index"]) for d in it.get_output_details()}
    if args.save:
        _write(args.save, "--save", lambda path: np.savez(path, **outputs))
    if args.trace:
        from .delegate.trace import chrome_trace

        doc_trace = json.dumps(chrome_trace(events, name=Path(args.model).name))
        _write(args.trace, "--trace", lambda path: Path(path).write_text(doc_trace, encoding="utf-8"))
    doc = {"file": args.model, "outputs": [_array_summary(n, a) for n, a in outputs.items()]}
    if delegate is not None:
        host_ms = sum(e.elapsed_ms for e in events if e.lane == "host" and e.kind == "node" and not e.callers)
        doc["delegation"] = _delegation_summary(it, delegate, events, host_ms)
    if args.steps:
        doc["steps"] = steps
    profile = it.profile(runs=args.profile) if args.profile else None
    if args.json:
        json.dump(doc, sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
        return EXIT_OK
    out = []
    for st in steps:
        if st["kind"] in ("copy in", "copy out", "stream"):
            out.append(f"{st['subgraph']}:{st['node']:<4} {'  [device] ' + st['kind']:<28}      {st['kernel'][:30]:<30} "
                       f"{st['modeled_ms']:>9.3f} ms modeled, {st['bytes']:,} bytes")
            continue
        lane = "  [device] " if st["lane"] == "device" else ""
        modeled = "" if st["modeled_ms"] is None else f" ({st['modeled_ms']:.3f} ms modeled)"
        out.append(f"{st['subgraph']}:{st['node']:<4} {lane + st['op']:<28} v{st['version']:<3} {st['kernel']:<30} "
                   f"{st['ms']:>9.3f} ms{modeled} -> {st['outputs']}")
    if "delegation" in doc:
        s = doc["delegation"]
        out += s["log"]
        out.append(f"{s['delegate']} ({s['target']}/{s['strategy']}, {s['precision']}): {s['nodes']['device']} node(s) "
                   f"on the device in "
                   f"{len(s['partitions'])} partition(s), {s['nodes']['cpu']} on the CPU")
        for r, n in s["cpu_reasons"].items():
            out.append(f"  cpu: {n} × {r}")
        out.append(f"  copied: {s['bytes_copied']['in']:,} bytes in, {s['bytes_copied']['out']:,} bytes out")
        out.append(f"  device: {s['device_ms_modeled']:.3f} ms (modeled from {s['target']}'s cost figures); "
                   f"host: {s['host_ms_measured']:.3f} ms (measured)")
    for o in doc["outputs"]:
        out.append(f"output {o['name']}: {o['dtype']}{o['shape']} min {o['min']} max {o['max']} "
                   f"mean {o['mean']} first {o['first']}")
    if profile is not None:
        out.append(render_profile(profile))
    sys.stdout.write("\n".join(out) + "\n")
    return EXIT_OK


def _register_bench(sub) -> None:
    p = sub.add_parser("bench", help="median invoke latency (optionally side by side with ai-edge-litert)",
                       description="Time workbench.Interpreter on MODEL; with --vs-litert also ai-edge-litert's "
                                   "builtin kernels (no XNNPACK) and its default (XNNPACK) path, on the same "
                                   "seeded inputs in the same run, and print the ratios. --shape resizes "
                                   "the input for every runtime measured (litert's resize_tensor_input).")
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--threads", type=_positive, default=1, metavar="N", help="threads, 1 or more (default 1)")
    p.add_argument("--runs", type=_nonnegative, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...", help=SHAPE_HELP)
    p.add_argument("--vs-litert", action="store_true", help="measure ai-edge-litert too (needs it installed)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.set_defaults(run=_cmd_bench)


def _cmd_bench(args) -> int:
    from .bench import litert_median, median_ms
    from .interpreter import Interpreter

    it = Interpreter(model_path=args.model, num_threads=args.threads)
    _allocate_and_feed(it, [], args.shape, args.seed)
    details = it.get_input_details()
    # the inputs --shape resized, by the same name/position mapping, for litert to resize the same way
    given = sorted({_input_position(details, _parse_shape(spec)[0], "--shape") for spec in args.shape})
    resized = [(pos, details[pos]["name"], [int(v) for v in details[pos]["shape"]]) for pos in given]
    rows = {"workbench": median_ms(it.invoke, args.runs)}
    rows["workbench"]["inputs"] = {d["name"]: [int(v) for v in d["shape"]] for d in details}
    rows["workbench"]["outputs"] = {d["name"]: [int(v) for v in it.get_tensor(d["index"]).shape]
                                    for d in it.get_output_details()}
    if args.vs_litert:
        rows["litert builtin (no XNNPACK)"] = litert_median(args.model, args.threads, args.runs, False, args.seed,
                                                            resized)
        rows["litert default (XNNPACK)"] = litert_median(args.model, args.threads, args.runs, True, args.seed,
                                                         resized)
    ours = rows["workbench"]["median_ms"]
    for r in rows.values():
        r["ours_over_this"] = ours / r["median_ms"] if r["median_ms"] else None
    inputs = {d["name"]: [int(v) for v in d["shape"]] for d in it.get_input_details()}
    doc = {"file": args.model, "threads": args.threads, "runs": args.runs, "inputs": inputs, "results": rows}
    if args.json:
        json.dump(doc, sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
        return EXIT_OK
    shapes = f", inputs {', '.join(f'{k} {v}' for k, v in inputs.items())}" if args.shape else ""
    out = [f"{args.model}: {args.threads} thread(s), median of {args.runs} invokes{shapes}",
           f"{'':32}{'median ms':>11}{'min ms':>10}{'ours / this':>13}"]
    for name, r in rows.items():
        out.append(f"{name:32}{r['median_ms']:>11.2f}{r['min_ms']:>10.2f}{r['ours_over_this']:>13.2f}")
    sys.stdout.write("\n".join(out) + "\n")
    return EXIT_OK


def _register_precompile(sub) -> None:
    p = sub.add_parser("precompile", help="build the precompiled kernel library (no numba at run time)",
                       description="Run a workload of models with the numba kernels, then compile every kernel "
                                   "specialisation it called into one native library that the interpreter "
                                   "calls without importing numba (see workbench.perf.precompiled). "
                                   "Default workload: sample_models, ../shared/models and the cached corpus; "
                                   "models given are added to it.")
    p.add_argument("models", nargs="*", help="more .tflite files for the workload")
    p.add_argument("--only", action="store_true", help="run only the models given")
    p.add_argument("--status", action="store_true", help="say what the library holds; build nothing")
    p.add_argument("--if-needed", action="store_true",
                   help="build only when there is no library for these sources and this CPU yet")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.set_defaults(run=_cmd_precompile)


def precompile_notes(manifest: dict) -> str:
    """What a build left out, worded as the notes they are: the build succeeded either way."""
    out = []
    skipped_models, kept = manifest.get("workload_failures") or [], manifest.get("skipped") or []
    if skipped_models:
        out.append(f"note: {len(skipped_models)} workload model(s) skipped (expected, not a failure: they cannot "
                   f"run on seeded random inputs as they are, so they add no kernels; the library is built from "
                   f"the others):")
        out += [f"  skipped {line}" for line in skipped_models]
    if kept:
        out.append(f"note: {len(kept)} kernel specialisation(s) stay with numba (compiled when first used):")
        out += [f"  {line}" for line in kept]
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# the precompile workload (workbench.perf knows no models: the command line hands it this one)


def precompile_models() -> list:
    """The models the kernel library is built from: the repository's sample models and, when present,
    ../shared/models and the corpus models already in the cache (``make corpus``; nothing is
    downloaded here)."""
    from .corpus import MODELS, cache_dir

    root = Path(__file__).resolve().parents[1]
    models = sorted((root / "sample_models").glob("*.tflite"))
    shared = root.parent / "shared" / "models"
    if shared.is_dir():
        models += sorted(shared.glob("*.tflite"))
    models += [p for p in (cache_dir() / f"{name}.tflite" for name in sorted(MODELS)) if p.exists()]
    return models


def precompile_workload(models, log=print) -> list[str]:
    """Run each model once on seeded inputs with the fast kernels; the models that failed, and why."""
    from .bench import random_inputs
    from .corpus import INPUT_SHAPES
    from .interpreter import Interpreter

    log(f"workload: {len(models)} model(s)")
    failed = []
    for path in models:
        try:
            it = Interpreter(model_path=str(path))
            for d, shape in zip(it.get_input_details(), INPUT_SHAPES.get(Path(path).stem, ())):
                it.resize_tensor_input(d["index"], list(shape))
            it.allocate_tensors()
            details = it.get_input_details()
            if any(np.dtype(d["dtype"]).kind not in "fiub" for d in details):
                raise ValueError("it has an input that is not numeric, e.g. STRING (the workload feeds random numbers)")
            for d, x in zip(details, random_inputs(details, seed=0)):
                it.set_tensor(d["index"], x)
            it.invoke()
        except Exception as exc:       # a model the workload cannot run teaches nothing; say which
            failed.append(f"{Path(path).name}: {type(exc).__name__}: {str(exc)[:200]}")
    return failed


def _cmd_precompile(args) -> int:
    from .perf import precompiled

    if args.if_needed and precompiled.status()["built"]:
        args.status = True
    if not args.status:
        models = list(args.models) if args.only else precompile_models() + list(args.models)
        log = (lambda *_: None) if args.json else print
        manifest = precompiled.build(lambda log: precompile_workload(models, log), log=log)
        notes = precompile_notes(manifest)
        if notes and not args.json:
            print(notes)
    doc = precompiled.status()
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.status:
        state = (f"{doc['entries']} specialisation(s) of {doc['functions']} kernel function(s)" if doc["built"]
                 else "not built for these sources and this CPU (run: workbench precompile)")
        print(f"precompiled kernels in {doc['directory']} (fingerprint {doc['fingerprint']}): {state}; "
              f"{'enabled' if doc['enabled'] else 'disabled (WORKBENCH_PRECOMPILED=0 or WORKBENCH_JIT=0)'}")
    return EXIT_OK


COMMANDS = [("inspect", _register_inspect), ("versions", _register_versions), ("partition", _register_partition),
            ("run", _register_run), ("bench", _register_bench), ("precompile", _register_precompile)]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description="TFLite Workbench command line.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for _, register in COMMANDS:
        register(sub)
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _model_path(text: str) -> str:
    """MODEL as given, or the cached file of the corpus model of that name when no such file exists
    (``workbench inspect face_landmark``). A bare name that is neither: a one-line error naming both."""
    if os.path.exists(text):
        return text
    from . import corpus

    if text in corpus.MODELS:
        return str(corpus.cached_path(text))
    if os.sep in text or (os.altsep and os.altsep in text) or text.endswith(".tflite"):
        return text                                     # a path: the command says "cannot read"
    try:
        corpus.cached_path(text)
    except corpus.CorpusError as exc:
        raise WorkbenchError(f"cannot read {text}: no such file, and {exc}") from None
    return text


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input or arguments, 1 internal)."""
    for stream in (sys.stdout, sys.stderr):  # never die on a name the terminal cannot encode
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or an argparse error (status 2)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    where = getattr(args, "model", None)
    try:
        if where:
            where = args.model = _model_path(where)
    except WorkbenchError as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    prefix = f"{where}: " if where else ""
    try:
        return args.run(args)
    except BrokenPipeError:  # `workbench inspect big.tflite | head`: stop quietly
        try:  # the recipe of the Python docs: point stdout at devnull so the exit flush stays quiet
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_OK
    except WorkbenchError as exc:
        print(f"error: {prefix}{_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        reason = exc.strerror or _one_line(exc)
        print(f"error: cannot read {exc.filename or where}: {reason}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug: say so in one line; WORKBENCH_DEBUG=1 shows the traceback
        if config.debug_level() > 0:
            raise
        print(f"error: internal error while running {args.command}: {type(exc).__name__}: {_one_line(exc)} "
              "(set WORKBENCH_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
