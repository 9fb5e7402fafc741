"""Model → the JSON documents of ``workbench inspect --json`` and ``workbench versions --json``.

Every value goes through :func:`_plain` (enums → names, bytes → lengths, non-finite floats → text),
so the documents are strict JSON.  docs/cli.md describes them field by field.
"""

from __future__ import annotations

import argparse
import enum
import json
import math
import re
from typing import Any

from ..options import parse as parse_options
from ..schema import buffer_bytes, builtin_code, op_name, stored_min_runtime
from ..schema.declare import FlatTable
from ..schema.enums import BuiltinOperator, TensorType
from ..schema.reader import UnknownTable
from ..versioning import (
    check,
    min_runtime,
    op_version,
    read_min_runtime_metadata,
)
from ..versioning.writers import legacy_quantizer_note

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
_RELEASE = re.compile(r"[0-9]+(\.[0-9]+)*")


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
