"""X-ray views: where the things of a .tflite file live, byte by byte.

Three views for the anatomy notebook:

* :func:`file_header` — the first 8 bytes: the root offset and the ``TFL3`` identifier;
* :func:`byte_map` — one table: its position, the vtable it points back to, every vtable entry
  (slot → offset inside the table, or 0 = absent → schema default) and a hex dump in which each
  field's bytes carry the field's colour;
* :func:`file_offset` — where a numpy view of the file (``tensor_data``) starts in the file.

The numbers come from the file, not from the decoded values: the views read the vtable and the
table bytes themselves, so a test (or a curious learner) can check them with :mod:`struct`.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..schema.declare import UNIONS, Bytes, Enum, FlatTable, Scalar, String, TableRef, UnionRef, Vector
from . import _html as H

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_S32 = struct.Struct("<i")

MAX_DUMP = 512  # bytes of a table shown in the hex dump
TRIM_FOLD = 4  # longer runs of slots past the vtable's end are shown as one line


def source_bytes(model):
    """The bytes a model was read from (a ``bytes`` object or a read-only ``mmap``)."""
    source = model.__dict__.get("_source")
    if source is None:
        raise ValueError(
            "this model was built in code and has no bytes yet; X-ray the file it becomes: "
            "workbench.load(workbench.dump(model))")
    return source


# ---------------------------------------------------------------------------------------------
# The file header


@dataclass(frozen=True)
class FileHeader:
    """The first 8 bytes of a .tflite file."""

    size: int
    root_offset: int
    identifier: bytes
    head: bytes  # the first 16 bytes (or fewer)

    def __str__(self) -> str:
        h = " ".join(f"{b:02x}" for b in self.head[:4])
        i = " ".join(f"{b:02x}" for b in self.head[4:8])
        return "\n".join([
            f"file of {self.size:,} bytes",
            f"bytes 0-3  {h}  root offset (uint32, little-endian) = {self.root_offset}"
            f"  → the Model table starts at byte {self.root_offset}",
            f"bytes 4-7  {i}  file identifier = {self.identifier.decode('ascii', 'replace')!r}",
        ])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        cells = []
        for i, b in enumerate(self.head):
            if i < 4:
                cells.append(H.byte_cell(b, H.PALETTE[1], f"root offset byte {i}"))
            elif i < 8:
                cells.append(H.byte_cell(b, H.PALETTE[0], f"identifier: {chr(b)!r}"))
            else:
                cells.append(H.byte_cell(b, None, "the next bytes", dim=True))
        ident = H.esc(self.identifier.decode("ascii", "replace"))
        return (
            f"<div style='{H.BOX}'><div>file of {self.size:,} bytes</div>"
            f"<div style='margin:4px 0'>0000 &nbsp;{''.join(cells)}</div>"
            f"<div><span style='background:{H.PALETTE[1]};color:{H.INK};padding:0 3px'>bytes 0-3</span>"
            f" root offset (uint32, little-endian) = <b>{self.root_offset}</b> → the Model table starts"
            f" at byte {self.root_offset}</div>"
            f"<div><span style='background:{H.PALETTE[0]};color:{H.INK};padding:0 3px'>bytes 4-7</span>"
            f" file identifier = <b>{ident}</b></div></div>"
        )


def file_header(model) -> FileHeader:
    """Decode the 8-byte header of the file ``model`` was read from."""
    src = source_bytes(model)
    head = bytes(src[:16])
    return FileHeader(len(src), _U32.unpack_from(head, 0)[0], head[4:8], head)


# ---------------------------------------------------------------------------------------------
# One table, byte by byte


@dataclass(frozen=True)
class SlotEntry:
    """One vtable slot of one table, as stored in the file."""

    slot: int
    field: str  # attribute name (a union's tag is "<name>_type"); "?" for a slot unknown to the schema
    type: str
    entry_pos: int | None  # byte position of the 16-bit vtable entry; None when past the vtable's end
    offset: int  # the 16-bit entry: the field's offset inside the table, 0 = absent
    pos: int | None  # absolute byte position of the stored value (None: absent)
    size: int  # bytes the value takes inside the table
    value: Any
    default: Any
    since: int | None = None
    target: int | None = None  # for vectors, strings and sub-tables: where the stored offset points
    note: str = ""

    @property
    def present(self) -> bool:
        return self.offset != 0

    @property
    def state(self) -> str:
        if self.present:
            return "present"
        return "absent (past the vtable's end)" if self.entry_pos is None else "absent"


@dataclass(frozen=True)
class ByteMap:
    """Where one table lives in the file: see :func:`byte_map`."""

    table: str
    path: str
    pos: int
    vtable: int
    soffset: int  # int32 at ``pos``: vtable = pos - soffset
    vtable_size: int  # bytes of the vtable (uint16 at ``vtable``)
    object_size: int  # bytes of the table (uint16 at ``vtable + 2``)
    entries: tuple[SlotEntry, ...]
    table_bytes: bytes = field(repr=False)
    vtable_bytes: bytes = field(repr=False)

    @property
    def slots_in_vtable(self) -> int:
        return (self.vtable_size - 4) // 2

    def entry(self, name: str) -> SlotEntry:
        for e in self.entries:
            if e.field == name:
                return e
        raise KeyError(f"{self.table} has no field {name!r}")

    @property
    def present(self) -> tuple[str, ...]:
        return tuple(e.field for e in self.entries if e.present)

    @property
    def defaulted(self) -> tuple[str, ...]:
        return tuple(e.field for e in self.entries if not e.present)

    # -- colouring ----------------------------------------------------------------------------
    def _colours(self) -> dict[str, str]:
        out, i = {}, 0
        for e in self.entries:
            if e.present:
                out[e.field] = H.PALETTE[i % len(H.PALETTE)]
                i += 1
        return out

    def _table_owner(self) -> list[tuple[str | None, str]]:
        """For each shown table byte: (field or marker, tooltip)."""
        n = min(len(self.table_bytes), MAX_DUMP)
        owner: list[tuple[str | None, str]] = [(None, "padding / unused")] * n
        for i in range(min(4, n)):
            owner[i] = ("<soffset>", f"soffset to the vtable = {self.soffset} → vtable at byte {self.vtable}")
        for e in self.entries:
            if e.present and e.pos is not None:
                tip = f"slot {e.slot} {e.field} = {H.short(e.value)} ({e.type}, byte {e.pos})"
                for i in range(e.pos - self.pos, min(e.pos - self.pos + e.size, n)):
                    owner[i] = (e.field, tip)
        return owner

    def _vtable_owner(self) -> list[tuple[str | None, str]]:
        owner: list[tuple[str | None, str]] = []
        owner += [("<vt>", f"vtable size = {self.vtable_size} bytes")] * 2
        owner += [("<vt>", f"table size = {self.object_size} bytes")] * 2
        by_slot = {e.slot: e for e in self.entries}
        for s in range(self.slots_in_vtable):
            e = by_slot.get(s)
            name = e.field if e is not None else "?"
            off = _U16.unpack_from(self.vtable_bytes, 4 + 2 * s)[0]
            tip = f"slot {s} ({name}): " + (f"offset {off} in the table" if off else "0 = absent → default")
            owner += [(name if off else None, tip)] * 2
        return owner

    # -- text -----------------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = [
            f"{self.table} — {self.path}",
            f"  table  at byte {self.pos}, {self.object_size} bytes; {self._soffset_text()}",
            f"  vtable at byte {self.vtable}, {self.vtable_size} bytes = 2 (vtable size) + 2 (table size)"
            f" + {self.slots_in_vtable} slots x 2",
            "",
            f"  {'slot':>4}  {'field':<28} {'vtable entry':<20} {'stored at':<14} value",
        ]
        for e in self._rows():
            if isinstance(e, tuple):
                lines.append(f"  {e[0].slot:>4}… {self._trimmed_text(e)}")
                continue
            entry = f"@{e.entry_pos} = {e.offset}" if e.entry_pos is not None else "(past the end)"
            if e.present:
                where = f"byte {e.pos}"
                value = H.short(e.value)
                if e.note:
                    value += f"  {e.note}"
            else:
                where = "absent"
                value = f"→ default {H.short(e.default)}"
            since = f"  [added in v{e.since}]" if e.since else ""
            lines.append(f"  {e.slot:>4}  {e.field:<28} {entry:<20} {where:<14} {value}{since}")
        lines += ["", "  vtable bytes:"] + self._text_dump(self.vtable, self.vtable_bytes, self._vtable_owner())
        lines += ["", "  table bytes:"] + self._text_dump(self.pos, self.table_bytes[:MAX_DUMP], self._table_owner())
        if len(self.table_bytes) > MAX_DUMP:
            lines.append(f"  … {len(self.table_bytes) - MAX_DUMP} more bytes")
        keys = self._keys()
        legend = ", ".join(f"{k} = {name}" for name, k in keys.items() if not name.startswith("<"))
        lines.append("  key: ~~ soffset / vtable header, .. unused, " + legend)
        return "\n".join(lines)

    __repr__ = __str__

    def _soffset_text(self) -> str:
        if self.soffset >= 0:
            return (f"its first 4 bytes hold the soffset {self.soffset}: "
                    f"vtable = {self.pos} - {self.soffset} = {self.vtable}")
        return (f"its first 4 bytes hold the soffset {self.soffset}: vtable = {self.pos} + {-self.soffset} = "
                f"{self.vtable} (after the table: an identical vtable written earlier is reused)")

    def _rows(self) -> list:
        """Entries, with long runs of slots past the vtable's end folded into one tuple."""
        out, run = [], []
        for e in self.entries + (None,):
            if e is not None and e.entry_pos is None and e.field != "?":
                run.append(e)
                continue
            if len(run) > TRIM_FOLD:
                out.append(tuple(run))
            else:
                out.extend(run)
            run = []
            if e is not None:
                out.append(e)
        return out

    @staticmethod
    def _trimmed_text(run) -> str:
        names = ", ".join(f"{e.field}={H.short(e.default, 16)}" for e in run)
        return (f"slots {run[0].slot}-{run[-1].slot} lie past the vtable's end (the writer trims trailing "
                f"absent slots), so all take their defaults: {names}")

    def _keys(self) -> dict[str, str]:
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        keys = {"<soffset>": "~", "<vt>": "~"}
        for i, e in enumerate(e for e in self.entries if e.present):
            keys[e.field] = letters[i % 26]
        return keys

    def _text_dump(self, start: int, data: bytes, owner) -> list[str]:
        keys = self._keys()
        out = []
        for row in range(0, len(data), 16):
            chunk = data[row:row + 16]
            hexes = " ".join(f"{b:02x}" for b in chunk)
            marks = " ".join((keys.get(owner[row + i][0], "?") if owner[row + i][0] else ".") * 2
                             for i in range(len(chunk)))
            out.append(f"  {start + row:>10}  {hexes}")
            out.append(f"  {'':>10}  {marks}")
        return out

    # -- HTML -----------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        colours = self._colours()
        rows, styles = [], []
        for e in self._rows():
            if isinstance(e, tuple):
                rows.append([f"{e[0].slot}–{e[-1].slot}", "", "", "<i>past the vtable's end</i>", "<i>absent</i>",
                             H.esc(self._trimmed_text(e)), ""])
                styles.append(f"background:{H.ABSENT};color:#555")
                continue
            entry = (f"@{e.entry_pos} = <b>{e.offset}</b>" if e.entry_pos is not None
                     else "<i>past the vtable's end</i>")
            if e.present:
                where = f"byte {e.pos}"
                value = H.code(H.short(e.value)) + (f" <small>{H.esc(e.note)}</small>" if e.note else "")
                styles.append(f"background:{colours[e.field]};color:{H.INK}")
            else:
                where = "<i>absent</i>"
                value = f"<i>→ default</i> {H.code(H.short(e.default))}"
                styles.append(f"background:{H.ABSENT};color:#555")
            rows.append([str(e.slot), H.code(e.field), H.esc(e.type), entry, where, value,
                         f"v{e.since}" if e.since else ""])
        slots = H.table(["slot", "field", "type", "vtable entry", "stored at", "value", "added in"], rows, styles,
                        nowrap=(0, 1, 3, 4))
        vt = self._html_dump(self.vtable, self.vtable_bytes, self._vtable_owner(), colours)
        tb = self._html_dump(self.pos, self.table_bytes[:MAX_DUMP], self._table_owner(), colours)
        more = (f"<div>… {len(self.table_bytes) - MAX_DUMP} more bytes</div>"
                if len(self.table_bytes) > MAX_DUMP else "")
        return (
            f"<div style='{H.BOX}' class='wb-xray'>"
            f"<div><b>{H.esc(self.table)}</b> <small>{H.esc(self.path)}</small></div>"
            f"<div>table at byte <b>{self.pos}</b> ({self.object_size} bytes); {H.esc(self._soffset_text())}"
            f" <small>(vtable: {self.vtable_size} bytes = two sizes + {self.slots_in_vtable} slots)</small></div>"
            f"{slots}"
            f"<div style='margin-top:6px'><b>vtable bytes</b></div>{vt}"
            f"<div style='margin-top:6px'><b>table bytes</b></div>{tb}{more}"
            f"<div style='margin-top:4px;color:#666'><small>colours match the rows above; grey: the soffset and the"
            f" vtable's two sizes; faint: padding. Hover a byte to see its field.</small></div></div>"
        )

    def _html_dump(self, start: int, data: bytes, owner, colours) -> str:
        lines = []
        for row in range(0, len(data), 16):
            cells = []
            for i, b in enumerate(data[row:row + 16]):
                name, tip = owner[row + i]
                if name in ("<soffset>", "<vt>"):
                    cells.append(H.byte_cell(b, H.GREY, tip))
                elif name:
                    cells.append(H.byte_cell(b, colours.get(name), tip))
                else:
                    cells.append(H.byte_cell(b, None, tip, dim=True))
            lines.append(f"<div style='white-space:nowrap'><span style='color:#888'>{start + row:>10}</span>"
                         f" &nbsp;{''.join(cells)}</div>")
        return "".join(lines)


def _inline_size(f, union_tag: bool) -> int:
    if union_tag:
        return 1
    t = f.type
    if isinstance(t, (Scalar, Enum)):
        return t.size
    return 4  # strings, vectors, tables, union values: a 32-bit offset


def _type_name(f, union_tag: bool) -> str:
    if union_tag:
        return f"{f.type.name} tag (ubyte)"
    t = f.type
    if isinstance(t, Enum):
        return f"{t.enum.__name__} ({t.scalar.name})"
    return repr(t)


def _follow(src, f, pos: int, value) -> tuple[int | None, str]:
    """Where an offset field points, and a short note about what is there."""
    t = f.type
    if not isinstance(t, (String, Bytes, TableRef, Vector, UnionRef)):
        return None, ""
    target = pos + _U32.unpack_from(src, pos)[0]
    if isinstance(t, (TableRef, UnionRef)):
        return target, f"→ {type(value).__name__} table at byte {target}"
    length = _U32.unpack_from(src, target)[0]
    if isinstance(t, String):
        return target, f"→ string at byte {target} ({length} bytes)"
    elem = t.element if isinstance(t, Vector) else None
    what = "bytes" if elem is None else f"x {elem!r}"
    return target, f"→ vector at byte {target} ({length} {what})"


_STEP = re.compile(r"\.([A-Za-z_]\w*)|\[(-?\d+)\]")


def resolve(model, path: str):
    """The object at a FlatBuffer path such as ``model.subgraphs[0].operators[2].builtin_options``."""
    rest = path.strip()
    if rest.startswith("model"):
        rest = rest[len("model"):]
    if rest and rest[0] not in ".[":
        rest = "." + rest
    obj = model
    pos = 0
    while pos < len(rest):
        m = _STEP.match(rest, pos)
        if m is None:
            raise ValueError(f"cannot read the path {path!r} at {rest[pos:]!r}")
        obj = getattr(obj, m.group(1)) if m.group(1) else obj[int(m.group(2))]
        pos = m.end()
    return obj


def byte_map(model, table_or_path) -> ByteMap:
    """X-ray one table of ``model``: its vtable, every slot and its bytes in the file.

    ``table_or_path`` is a decoded table (``op``, ``op.builtin_options``, ``model.subgraphs[0]``,
    an :class:`~workbench.options.Options`) or a path string like
    ``"model.subgraphs[0].operators[2].builtin_options"``.
    """
    table = table_or_path
    if isinstance(table, str):
        table = resolve(model, table)
    if hasattr(table, "params") and hasattr(table, "table_present"):  # an Options
        if not table.table_present:
            raise ValueError(f"{table.op} has no {table.table} table in the file (TFLite zero-fills its params); "
                             "X-ray the Operator instead to see its empty builtin_options slots")
        table = table.params
    if table is None:
        raise ValueError("nothing to X-ray: that field is absent from the file")
    if not isinstance(table, FlatTable):
        raise TypeError(f"byte_map needs a schema table or a path, not {type(table).__name__}")
    origin = table.origin
    if origin is None:
        raise ValueError(f"this {type(table).__name__} was built in code and has no bytes; "
                         "X-ray a model read from a file")
    src = source_bytes(model)
    pos, vt = origin.pos, origin.vtable
    soffset = _S32.unpack_from(src, pos)[0]
    vtable_size, object_size = struct.unpack_from("<HH", src, vt)
    nslots = (vtable_size - 4) // 2
    decl = table.__decl__
    entries = []
    for name, f in decl.python_fields():
        union_tag = isinstance(f.type, UnionRef) and name != f.name
        slot = f.id if union_tag or not isinstance(f.type, UnionRef) else f.value_slot
        entry_pos = vt + 4 + 2 * slot if slot < nslots else None
        offset = _U16.unpack_from(src, entry_pos)[0] if entry_pos is not None else 0
        value = getattr(table, name)
        at = pos + offset if offset else None
        target, note = (None, "")
        if at is not None and not union_tag:
            target, note = _follow(src, f, at, value)
        default = UNIONS[f.type.name].tags(0) if union_tag else f.resolved_default()
        entries.append(SlotEntry(slot, name, _type_name(f, union_tag), entry_pos, offset, at,
                                 _inline_size(f, union_tag), value, default, f.since, target, note))
    known = decl.num_slots
    for slot in range(known, nslots):
        entry_pos = vt + 4 + 2 * slot
        offset = _U16.unpack_from(src, entry_pos)[0]
        entries.append(SlotEntry(slot, "?", "unknown to this schema", entry_pos, offset,
                                 pos + offset if offset else None, 0, None, None,
                                 note="a field from a newer schema" if offset else ""))
    entries.sort(key=lambda e: e.slot)
    return ByteMap(type(table).__name__, origin.path, pos, vt, soffset, vtable_size, object_size,
                   tuple(entries), bytes(src[pos:pos + object_size]), bytes(src[vt:vt + vtable_size]))


# ---------------------------------------------------------------------------------------------
# Zero-copy evidence


def file_offset(model, array: np.ndarray) -> int | None:
    """Byte position in the file where ``array``'s memory starts, or None if it is not a view of it.

    ``tensor_data`` returns views of the loaded file (memory-mapped for a path), so for constant
    tensors this is the position of the weights inside the .tflite file.
    """
    whole = np.frombuffer(source_bytes(model), np.uint8)
    if not np.shares_memory(array, whole):
        return None
    return array.__array_interface__["data"][0] - whole.__array_interface__["data"][0]
