"""Model-level views: a one-screen summary and a walk down the object tree.

* :func:`model_summary` — subgraphs, counts, the operator-code table, metadata, signatures;
* :func:`walk` — Model → SubGraph → Operator → Tensor → Buffer for the first few operators.

Both return small objects with a text ``repr`` and ``_repr_html_``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..schema import buffer_bytes, builtin_code, metadata, op_name, stored_min_runtime
from . import _html as H


def _ints(values, limit: int = 6) -> str:
    values = list(values or ())
    text = ", ".join(str(v) for v in values[:limit])
    if len(values) > limit:
        text += f", … {len(values)} in all"
    return f"[{text}]"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


# ---------------------------------------------------------------------------------------------
# model_summary


@dataclass(frozen=True)
class OpCodeRow:
    index: int
    op: str
    builtin_code: int
    deprecated_builtin_code: int
    effective_code: int
    version: int
    count: int


@dataclass(frozen=True)
class ModelSummary:
    description: str | None
    version: int
    file_size: int | None
    subgraphs: tuple[tuple, ...]  # (index, name, tensors, operators, inputs, outputs)
    buffers: int
    constant_bytes: int
    opcodes: tuple[OpCodeRow, ...]
    metadata: tuple[tuple[str, int, str], ...]  # (name, size, what it says)
    signatures: tuple[tuple, ...]  # (key, subgraph, inputs, outputs)

    def __str__(self) -> str:
        size = f", {self.file_size:,} bytes" if self.file_size is not None else ""
        lines = [
            f"Model {self.description!r} — schema version {self.version}{size}",
            f"  {_plural(len(self.subgraphs), 'subgraph')}, {_plural(self.buffers, 'buffer')} "
            f"({self.constant_bytes:,} bytes of constant data), {_plural(len(self.opcodes), 'operator code')}",
            "",
            f"  {'subgraph':<9} {'name':<32} {'tensors':>7} {'operators':>9}  inputs / outputs",
        ]
        for i, name, nt, no, ins, outs in self.subgraphs:
            lines.append(f"  {i:<9} {H.short(name or '', 32):<32} {nt:>7} {no:>9}  {_ints(ins)} / {_ints(outs)}")
        lines += ["", "  operator codes (index: op, version, used by N operators; stored builtin_code / "
                      "deprecated_builtin_code):"]
        for r in self.opcodes:
            lines.append(f"  {r.index:>5}: {r.op:<28} v{r.version:<3} x{r.count:<5} "
                         f"builtin_code={r.builtin_code}, deprecated_builtin_code={r.deprecated_builtin_code}")
        if self.metadata:
            lines += ["", "  metadata:"] + [f"    {n}: {what}" for n, _, what in self.metadata]
        if self.signatures:
            lines += ["", "  signatures:"]
            for key, sg, ins, outs in self.signatures:
                lines.append(f"    {key!r} → subgraph {sg}: inputs {', '.join(ins)}; outputs {', '.join(outs)}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        size = f", {self.file_size:,} bytes" if self.file_size is not None else ""
        sg = H.table(["subgraph", "name", "tensors", "operators", "inputs", "outputs"],
                     [[str(i), H.esc(H.short(n or "", 40)), str(nt), str(no), H.esc(_ints(a)), H.esc(_ints(b))]
                      for i, n, nt, no, a, b in self.subgraphs])
        ops = H.table(
            ["index", "op", "version", "used by", "builtin_code", "deprecated_builtin_code"],
            [[str(r.index), H.code(r.op), str(r.version), str(r.count), str(r.builtin_code),
              str(r.deprecated_builtin_code)] for r in self.opcodes])
        parts = [
            f"<div style='{H.BOX}'><div><b>Model</b> {H.esc(repr(self.description))} — schema version "
            f"{self.version}{size}</div>",
            f"<div>{_plural(len(self.subgraphs), 'subgraph')}, {_plural(self.buffers, 'buffer')} "
            f"({self.constant_bytes:,} bytes of constant data), {_plural(len(self.opcodes), 'operator code')}</div>",
            sg, "<div style='margin-top:6px'><b>operator codes</b></div>", ops,
        ]
        if self.metadata:
            parts.append("<div style='margin-top:6px'><b>metadata</b></div>")
            parts.append(H.table(["name", "bytes", "says"],
                                 [[H.code(n), str(size), H.esc(what)] for n, size, what in self.metadata]))
        if self.signatures:
            parts.append("<div style='margin-top:6px'><b>signatures</b></div>")
            parts.append(H.table(["key", "subgraph", "inputs", "outputs"],
                                 [[H.code(k), str(s), H.esc(", ".join(a)), H.esc(", ".join(b))]
                                  for k, s, a, b in self.signatures]))
        return "".join(parts) + "</div>"


def model_summary(model) -> ModelSummary:
    """Counts, subgraphs, the operator-code table, metadata and signatures of a model."""
    counts = Counter(op.opcode_index for sg in model.subgraphs or () for op in sg.operators or ())
    opcodes = []
    for i, oc in enumerate(model.operator_codes or ()):
        opcodes.append(OpCodeRow(i, op_name(oc), int(oc.builtin_code), int(oc.deprecated_builtin_code),
                                 int(builtin_code(oc)), oc.version, counts.get(i, 0)))
    subgraphs = tuple(
        (i, sg.name, len(sg.tensors or ()), len(sg.operators or ()), tuple(sg.inputs or ()), tuple(sg.outputs or ()))
        for i, sg in enumerate(model.subgraphs or ()))
    const = 0
    for i in range(len(model.buffers or ())):
        const += len(buffer_bytes(model, i))
    meta = []
    for name, raw in metadata(model).items():
        if name == "min_runtime_version":
            what = f"{stored_min_runtime(model)!r} (a zero-padded ASCII string)"
        else:
            text = raw[:40]
            printable = text and all(32 <= b < 127 for b in text.rstrip(b"\0"))
            what = f"{len(raw):,} bytes" + (f": {text.rstrip(bytes(1)).decode('ascii')!r}" if printable else "")
        meta.append((name, len(raw), what))
    sigs = []
    for s in model.signature_defs or ():
        sg = model.subgraphs[s.subgraph_index] if s.subgraph_index < len(model.subgraphs) else None

        def names(maps, sg=sg):
            return tuple(f"{m.name}=t{m.tensor_index}" for m in maps or ())

        sigs.append((s.signature_key, s.subgraph_index, names(s.inputs), names(s.outputs)))
    source = model.__dict__.get("_source")
    return ModelSummary(model.description, model.version, len(source) if source is not None else None,
                        subgraphs, len(model.buffers or ()), const, tuple(opcodes), tuple(meta), tuple(sigs))


# ---------------------------------------------------------------------------------------------
# walk


def _shape(t) -> str:
    return "[" + ", ".join(str(d) for d in t.shape or ()) + "]"


@dataclass(frozen=True)
class Walk:
    """A tree of (depth, kind, text) lines."""

    title: str
    lines: tuple[tuple[int, str, str], ...]

    def _prefixes(self) -> list[str]:
        """Box-drawing prefixes: '├── ' or '└── ' depending on whether a sibling follows."""
        out = []
        n = len(self.lines)
        for i, (depth, _, _) in enumerate(self.lines):
            if depth == 0:
                out.append("")
                continue
            parts = []
            for d in range(1, depth + 1):
                # is there a later line at depth d before the tree climbs above d?
                later = False
                for j in range(i + 1, n):
                    dj = self.lines[j][0]
                    if dj < d:
                        break
                    if dj == d:
                        later = True
                        break
                if d == depth:
                    parts.append("├── " if later else "└── ")
                else:
                    parts.append("│   " if later else "    ")
            out.append("".join(parts))
        return out

    def __str__(self) -> str:
        return "\n".join(p + text for p, (_, _, text) in zip(self._prefixes(), self.lines))

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colours = {"model": "#0d47a1", "subgraph": "#1b5e20", "operator": "#b71c1c", "tensor": "#4a148c",
                   "buffer": "#e65100", "more": "#777", "info": "#555"}
        rows = []
        for p, (_, kind, text) in zip(self._prefixes(), self.lines):
            style = f"color:{colours.get(kind, H.INK)}" + (";font-weight:600" if kind in ("model", "subgraph") else "")
            rows.append(f"<span style='color:#aaa'>{H.esc(p)}</span><span style='{style}'>{H.esc(text)}</span>")
        return (f"<pre style='{H.BOX};white-space:pre;line-height:1.35;margin:0'>" + "\n".join(rows) + "</pre>")


def walk(model, subgraph: int = 0, operators: int = 3) -> Walk:
    """Model → SubGraph → Operator → Tensor → Buffer, for the first ``operators`` operators."""
    sg = model.subgraphs[subgraph]
    codes = model.operator_codes or ()
    lines: list[tuple[int, str, str]] = []
    lines.append((0, "model", f"Model  version {model.version} · {_plural(len(model.subgraphs), 'subgraph')} · "
                               f"{_plural(len(codes), 'operator code')} · "
                               f"{_plural(len(model.buffers or ()), 'buffer')}"))
    for i in range(len(model.subgraphs)):
        if i != subgraph:
            continue
        lines.append((1, "subgraph", f"subgraphs[{i}]  SubGraph {sg.name!r} · "
                                     f"{_plural(len(sg.tensors or ()), 'tensor')} · "
                                     f"{_plural(len(sg.operators or ()), 'operator')}"))
        lines.append((2, "info", f"inputs {_ints(sg.inputs)}  outputs {_ints(sg.outputs)}"))
        ops = sg.operators or ()
        for k, op in enumerate(ops[:operators]):
            oc = codes[op.opcode_index]
            opts = type(op.builtin_options).__name__ if op.builtin_options is not None else (
                f"custom options {len(op.custom_options)} bytes" if op.custom_options is not None
                else "no options table")
            lines.append((2, "operator", f"operators[{k}]  {op_name(oc)} v{oc.version}  "
                                         f"(operator_codes[{op.opcode_index}]) · {opts}"))
            for role, ids in (("in ", op.inputs or ()), ("out", op.outputs or ())):
                for t_index in ids:
                    if t_index < 0:
                        lines.append((3, "tensor", f"{role} -1  (optional input left out)"))
                        continue
                    t = sg.tensors[t_index]
                    lines.append((3, "tensor", f"{role} tensors[{t_index}]  "
                                               f"{H.short(t.name, 40)} {_shape(t)} {t.type.name}"))
                    if t.buffer:
                        n = len(buffer_bytes(model, t.buffer))
                        what = f"{n:,} bytes of constant data" if n else "empty (filled at run time)"
                        lines.append((4, "buffer", f"buffers[{t.buffer}]  {what}"))
        if len(ops) > operators:
            lines.append((2, "more", f"… {len(ops) - operators} more operators"))
    others = len(model.subgraphs) - 1
    if others:
        lines.append((1, "more", f"… {_plural(others, 'other subgraph')}"))
    return Walk(f"walk of subgraph {subgraph}", tuple(lines))
