"""Writing schema objects back to .tflite bytes with ``flatbuffers.Builder``.

Driven by the same declarations as the reader.  A scalar field is written when it differs from
the schema default or when the file it came from stored it explicitly, so ``load → dump`` keeps
which fields were present (the X-ray of a re-written file shows the same "present / defaulted").
Buffers whose data lived after the FlatBuffer (``Buffer.offset``/``size``, models > 2 GB) and
large custom options are written after it again, with their offsets recomputed.
"""

from __future__ import annotations

import flatbuffers
import numpy as np

from ..errors import LossyWriteError, ModelError
from .declare import Bytes, Enum, FlatTable, Scalar, String, TableRef, UnionRef, Vector
from .reader import FILE_IDENTIFIER, UnknownTable


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


class _Writer:
    def __init__(self, drop_unknown: bool, overrides: dict[int, dict]):
        self.b = flatbuffers.Builder(1 << 16)
        self.drop_unknown = drop_unknown
        self.overrides = overrides  # id(table) -> {field: value}
        self.tables: dict[int, int] = {}
        self.keep: list = []
        self.blobs: dict[int, int] = {}

    # -- leaves --------------------------------------------------------------------------------
    def string(self, s: str) -> int:
        return self.b.CreateSharedString(s.encode("utf-8", "surrogateescape"))

    def raw(self, data, alignment: int) -> int:
        data = bytes(data) if not isinstance(data, bytes) else data
        b = self.b
        b.StartVector(1, len(data), alignment)
        b.head = b.head - len(data)
        b.Bytes[b.head:b.head + len(data)] = data
        b.vectorNumElems = len(data)
        return b.EndVector()

    def scalars(self, values, scalar: Scalar) -> int:
        arr = np.asarray(values, dtype=scalar.dtype) if len(values) else np.zeros(0, scalar.dtype)
        return self.b.CreateNumpyVector(arr)

    def offsets(self, offs: list[int]) -> int:
        b = self.b
        b.StartVector(4, len(offs), 4)
        for off in reversed(offs):
            b.PrependUOffsetTRelative(off)
        return b.EndVector()

    # -- tables --------------------------------------------------------------------------------
    def table(self, obj, path: str) -> int:
        key = id(obj)
        hit = self.tables.get(key)
        if hit is not None:
            return hit
        if not isinstance(obj, FlatTable):
            raise ModelError(f"expected a schema table, got {type(obj).__name__}", path)
        decl = obj.__decl__
        origin = obj.origin
        if origin is not None and origin.unknown_slots and not self.drop_unknown:
            raise LossyWriteError(
                f"{path}: {decl.name} has fields in slots {list(origin.unknown_slots)} that this schema "
                "does not know; writing would drop them (pass drop_unknown=True to accept)")
        override = self.overrides.get(key, {})
        children: dict[str, int] = {}
        # 1. everything stored out of line must exist before the table starts
        for f in decl.fields:
            t = f.type
            value = override.get(f.name, getattr(obj, f.name))
            fpath = f"{path}.{f.name}"
            if value is None:
                continue
            if isinstance(t, String):
                children[f.name] = self.string(value)
            elif isinstance(t, Bytes):
                children[f.name] = self.raw(value, t.alignment)
            elif isinstance(t, TableRef):
                children[f.name] = self.table(value, fpath)
            elif isinstance(t, UnionRef):
                if isinstance(value, UnknownTable):
                    if not self.drop_unknown:
                        raise LossyWriteError(f"{fpath}: {value!r} cannot be re-encoded "
                                              "(pass drop_unknown=True to drop it)")
                    continue
                children[f.name] = self.table(value, fpath)
            elif isinstance(t, Vector):
                e = t.element
                if isinstance(e, TableRef):
                    children[f.name] = self.offsets([self.table(v, f"{fpath}[{i}]") for i, v in enumerate(value)])
                elif isinstance(e, String):
                    children[f.name] = self.offsets([self.string(v) for v in value])
                elif isinstance(e, Enum):
                    children[f.name] = self.scalars([int(v) for v in value], e.scalar)
                else:
                    children[f.name] = self.scalars(value, e)
        # 2. the table itself
        b = self.b
        b.StartObject(decl.num_slots)
        for f in decl.fields:
            t = f.type
            if f.name in children:
                if isinstance(t, UnionRef):
                    tag = getattr(obj, f.name + "_type")
                    b.PrependUint8Slot(f.id, int(tag), None)  # None: always written
                    b.PrependUOffsetTRelativeSlot(f.id + 1, children[f.name], 0)
                else:
                    b.PrependUOffsetTRelativeSlot(f.id, children[f.name], 0)
                continue
            if isinstance(t, UnionRef):
                # no value: the type tag is a value of its own; keep it when set or stored
                # (but not the tag of an unknown member that drop_unknown dropped)
                tag = int(getattr(obj, f.name + "_type"))
                if isinstance(getattr(obj, f.name), UnknownTable):
                    continue
                if tag or (origin is not None and f.id < len(origin.slot_offsets) and origin.slot_offsets[f.id]):
                    b.PrependUint8Slot(f.id, tag, None)
                continue
            if not isinstance(t, (Scalar, Enum)):
                continue
            value = override.get(f.name, getattr(obj, f.name))
            default = f.resolved_default()
            stored = obj.present(f.name) if origin is not None else False
            if value == default and not stored:
                continue
            scalar = t.scalar if isinstance(t, Enum) else t
            v = int(value) if isinstance(t, Enum) else value
            if scalar.name == "bool":
                v = bool(v)
            elif scalar.name in ("float", "double"):
                v = float(v)
            else:
                v = int(v)
            try:
                b.PrependSlot(scalar.flags, f.id, v, None)
            except (TypeError, ValueError) as exc:
                raise ModelError(f"value {value!r} does not fit {scalar.name}: {exc}", f"{path}.{f.name}") from None
        off = b.EndObject()
        self.tables[key] = off
        self.keep.append(obj)
        return off


def _external_parts(model) -> list[tuple[object, str, bytes]]:
    """(table, field, data) for every buffer / custom-options blob stored after the FlatBuffer."""
    from .types import buffer_bytes

    parts = []
    for i, buf in enumerate(model.buffers or ()):
        if buf.offset > 1:
            parts.append((buf, "offset", bytes(buffer_bytes(model, i))))
    source = model.__dict__.get("_source")
    for sg in model.subgraphs or ():
        for op in sg.operators or ():
            if op.large_custom_options_offset > 1:
                if source is None:
                    raise ModelError("large custom options need the original file")
                start = op.large_custom_options_offset
                parts.append((op, "large_custom_options_offset",
                              bytes(memoryview(source)[start:start + op.large_custom_options_size])))
    return parts


def dump(model, *, drop_unknown: bool = False) -> bytes:
    """Serialize a :class:`Model` to .tflite bytes (identifier ``TFL3``).

    Raises :class:`LossyWriteError` if the model holds fields or union members this schema does
    not know (read from a newer file) unless ``drop_unknown=True``.
    """
    parts = _external_parts(model)

    def build(offsets: dict[int, dict]) -> bytes:
        w = _Writer(drop_unknown, offsets)
        root = w.table(model, "model")
        w.b.Finish(root, file_identifier=FILE_IDENTIFIER)
        return bytes(w.b.Output())

    if not parts:
        return build({})
    # pass 1 measures the FlatBuffer with placeholder offsets (fixed-size fields, forced present)
    placeholder = {id(t): {field: 2} for t, field, _ in parts}
    first = build(placeholder)
    pos = _align(len(first), 16)
    final: dict[int, dict] = {}
    layout = []
    for t, field, data in parts:
        final.setdefault(id(t), {})[field] = pos
        layout.append((pos, data))
        pos = _align(pos + len(data), 16)
    body = build(final)
    if len(body) != len(first):  # pragma: no cover - guarded by design
        raise ModelError("internal error: FlatBuffer size changed between passes")
    out = bytearray(body)
    for start, data in layout:
        out.extend(b"\0" * (start - len(out)))
        out.extend(data)
    return bytes(out)
