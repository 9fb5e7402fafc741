"""The little language in which the workbench declares the TFLite schema.

The TFLite FlatBuffer schema is restated here as data: one :class:`Field` per schema field with its
slot id, type, default and — where the schema says so — the operator version that introduced it.
The same declarations drive the reader, the writer, the defaults, the X-ray view and the notes on
which version added which field.  Nothing is generated from upstream code.

A FlatBuffer table stores, per field, a 16-bit entry in a *vtable*; entry ``id`` lives at byte
``4 + 2 * id`` of the vtable and holds the field's offset inside the table (0 = absent, so the
schema default applies).  A union field takes two ids: a hidden ``<name>_type`` byte at ``id`` and
the value at ``id + 1``.
"""

from __future__ import annotations

import dataclasses
import enum
import struct
import threading
from dataclasses import dataclass
from typing import Any, NamedTuple

import flatbuffers.number_types as N
import numpy as np

# --------------------------------------------------------------------------------------------
# Types


@dataclass(frozen=True)
class Scalar:
    """A fixed-size number stored inline in a table or a vector."""

    name: str
    flags: Any  # flatbuffers.number_types.*Flags
    default: Any

    @property
    def size(self) -> int:
        return self.flags.bytewidth

    @property
    def struct(self) -> struct.Struct:
        return self.flags.packer_type

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(N.to_numpy_type(self.flags)).newbyteorder("<")

    def __repr__(self) -> str:
        return self.name


BOOL = Scalar("bool", N.BoolFlags, False)
INT8 = Scalar("byte", N.Int8Flags, 0)
UINT8 = Scalar("ubyte", N.Uint8Flags, 0)
INT16 = Scalar("short", N.Int16Flags, 0)
UINT16 = Scalar("ushort", N.Uint16Flags, 0)
INT32 = Scalar("int", N.Int32Flags, 0)
UINT32 = Scalar("uint", N.Uint32Flags, 0)
INT64 = Scalar("long", N.Int64Flags, 0)
UINT64 = Scalar("ulong", N.Uint64Flags, 0)
FLOAT32 = Scalar("float", N.Float32Flags, 0.0)
FLOAT64 = Scalar("double", N.Float64Flags, 0.0)


@dataclass(frozen=True)
class Enum:
    """A schema enum: an IntEnum stored as one of the scalar types.

    Values this reader does not know (written by a newer schema) are kept as plain ints.
    """

    enum: type[enum.IntEnum]
    scalar: Scalar

    @property
    def size(self) -> int:
        return self.scalar.size

    @property
    def default(self):
        return self.enum(0) if 0 in self.enum._value2member_map_ else 0

    def coerce(self, value: int):
        try:
            return self.enum(value)
        except ValueError:
            return int(value)

    def __repr__(self) -> str:
        return self.enum.__name__


@dataclass(frozen=True)
class String:
    def __repr__(self) -> str:
        return "string"


STRING = String()


@dataclass(frozen=True)
class Bytes:
    """A ``[ubyte]`` vector read as a zero-copy, read-only ``memoryview`` of the file."""

    alignment: int = 4

    def __repr__(self) -> str:
        return "[ubyte]"


@dataclass(frozen=True)
class TableRef:
    name: str

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Vector:
    """A vector of scalars, enums, strings or tables, read as a tuple."""

    element: Any

    def __repr__(self) -> str:
        return f"[{self.element!r}]"


@dataclass(frozen=True)
class UnionRef:
    name: str

    def __repr__(self) -> str:
        return f"union {self.name}"


# --------------------------------------------------------------------------------------------
# Declarations


@dataclass(frozen=True)
class Field:
    """One schema field.

    ``id`` is the vtable slot (a union takes ``id`` for its type byte and ``id + 1`` for the
    value).  ``since`` is the operator version that introduced the field, where the schema says
    so.  ``default`` is the value a reader must assume when the field is absent.
    """

    id: int
    name: str
    type: Any
    default: Any = None
    since: int | None = None
    deprecated: bool = False
    doc: str = ""

    @property
    def slots(self) -> tuple[int, ...]:
        return (self.id, self.id + 1) if isinstance(self.type, UnionRef) else (self.id,)

    @property
    def value_slot(self) -> int:
        return self.slots[-1]

    def resolved_default(self):
        if self.default is not None:
            if isinstance(self.type, Enum):
                return self.type.coerce(self.default)
            return self.default
        if isinstance(self.type, Scalar):
            return self.type.default
        if isinstance(self.type, Enum):
            return self.type.default
        return None


@dataclass(frozen=True)
class TableDecl:
    name: str
    fields: tuple[Field, ...]
    doc: str = ""

    def __post_init__(self):
        slots = [s for f in self.fields for s in f.slots]
        if sorted(slots) != list(range(len(slots))):
            raise ValueError(f"{self.name}: slot ids must be 0..n-1 without gaps, got {slots}")
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: duplicate field names")

    @property
    def num_slots(self) -> int:
        return sum(len(f.slots) for f in self.fields)

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name or (isinstance(f.type, UnionRef) and name == f.name + "_type"):
                return f
        raise KeyError(f"{self.name} has no field {name!r}")

    def python_fields(self) -> list[tuple[str, Field]]:
        """(attribute name, field) pairs: a union contributes ``<name>_type`` and ``<name>``."""
        out = []
        for f in self.fields:
            if isinstance(f.type, UnionRef):
                out.append((f.name + "_type", f))
            out.append((f.name, f))
        return out


@dataclass(frozen=True)
class UnionDecl:
    name: str
    tags: type[enum.IntEnum]  # tag enum; value 0 is NONE
    members: dict  # tag value -> table name


class _Classes(dict):
    """The frozen dataclass of each schema table by name, each made the first time it is asked for:
    making all ~170 of them at import took 0.12-0.15 s of every start-up (``python -X importtime``),
    and loading a model needs a few dozen.  ``name in CLASSES`` is true for every declared table;
    iterating sees only the classes made so far (:func:`build_all` makes the rest)."""

    def __missing__(self, name: str) -> type:
        decl = TABLES.get(name)
        if decl is None:
            raise KeyError(name)
        with _BUILD_LOCK:               # one class per table, whichever thread asks first
            return dict.get(self, name) or build_class(decl)

    def __contains__(self, name: object) -> bool:
        return name in TABLES or dict.__contains__(self, name)


_BUILD_LOCK = threading.RLock()
TABLES: dict[str, TableDecl] = {}
UNIONS: dict[str, UnionDecl] = {}
CLASSES: dict[str, type] = _Classes()
VARIANTS: dict[str, TableDecl] = {}  # "Name@label" -> an older/alternative declaration of a table
VARIANT_CLASSES: dict[str, type] = {}


def table(name: str, *fields: Field, doc: str = "") -> TableDecl:
    if name in TABLES:
        raise ValueError(f"table {name} declared twice")
    decl = TableDecl(name, tuple(fields), doc)
    TABLES[name] = decl
    return decl


def union(name: str, tags: type[enum.IntEnum], members: dict[int, str]) -> UnionDecl:
    if name in UNIONS:
        raise ValueError(f"union {name} declared twice")
    decl = UnionDecl(name, tags, dict(members))
    UNIONS[name] = decl
    return decl


# --------------------------------------------------------------------------------------------
# Runtime objects


class Origin(NamedTuple):
    """Where a decoded table came from: its path, its byte position and its vtable entries."""

    path: str
    pos: int
    vtable: int
    slot_offsets: tuple
    unknown_slots: tuple = ()


@dataclass(frozen=True)
class FieldXRay:
    """Everything the file says about one field of one table."""

    table: str
    field: str
    path: str
    slot: int
    vtable_entry_offset: int | None  # byte offset of the 16-bit vtable entry (None: slot past vtable end)
    offset: int | None  # absolute byte offset of the stored value (None: absent)
    present: bool
    value: Any
    default: Any
    type: str
    since: int | None
    doc: str

    def __str__(self) -> str:
        if self.present:
            where = f"byte {self.offset}"
        else:
            where = f"absent → default {_short(self.default)}"
        since = f"  [field added in op version {self.since}]" if self.since else ""
        return f"{self.path} = {_short(self.value)}  ({self.type}, slot {self.slot}, {where}){since}"

    def _repr_html_(self) -> str:
        import html

        state = (
            f"<b>present</b> at byte {self.offset}"
            if self.present
            else f"<i>absent</i> → schema default <code>{html.escape(_short(self.default))}</code>"
        )
        since = f"; introduced in op version {self.since}" if self.since else ""
        return (
            f"<code>{html.escape(self.path)}</code> = <code>{html.escape(_short(self.value))}</code>"
            f" <small>({html.escape(self.type)}, vtable slot {self.slot}; {state}{since})</small>"
        )


def _short(value: Any, limit: int = 60) -> str:
    if isinstance(value, memoryview):
        return f"<{value.nbytes} bytes>"
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, tuple) and len(value) > 8:
        head = ", ".join(_short(v) for v in value[:6])
        return f"({head}, … {len(value)} items)"
    if isinstance(value, FlatTable):
        return type(value).__name__ + "(…)"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class FlatTable:
    """Base of every decoded schema table: a frozen dataclass that knows where it came from."""

    __decl__: TableDecl

    def __repr__(self) -> str:
        parts = []
        for name, f in self.__decl__.python_fields():
            value = getattr(self, name)
            if value is None or value == () or (name == f.name and value == f.resolved_default()):
                continue
            parts.append(f"{name}={_short(value)}")
        return f"{type(self).__name__}({', '.join(parts)})"

    @property
    def origin(self) -> Origin | None:
        """Where this table was read from (None for a table built in code)."""
        raw = self.__dict__.get("_origin")
        if raw is None or type(raw) is Origin:
            return raw
        origin = Origin(*raw)  # the reader stores a plain tuple (cheaper); name it on first use
        self.__dict__["_origin"] = origin
        return origin

    def present(self, name: str) -> bool | None:
        """Whether field ``name`` was stored in the file (None when the table was built in code)."""
        origin = self.origin
        if origin is None:
            return None
        slot = self.__decl__.field(name).value_slot
        return slot < len(origin.slot_offsets) and origin.slot_offsets[slot] != 0

    def xray(self, name: str | None = None):
        """X-ray of one field (``name``) or of all fields: path, byte offset, present or defaulted."""
        if name is None:
            return XRayTable(self, [self.xray(n) for n, _ in self.__decl__.python_fields()])
        f = self.__decl__.field(name)
        slot = f.id if name != f.name else f.value_slot  # a union's type tag sits in the first slot
        origin = self.origin
        base = origin.path if origin else f"<{type(self).__name__} built in code>"
        value = getattr(self, name)
        vt_entry = off = None
        present = False
        if origin is not None and slot < len(origin.slot_offsets):
            vt_entry = origin.vtable + 4 + 2 * slot
            if origin.slot_offsets[slot]:
                present = True
                off = origin.pos + origin.slot_offsets[slot]
        tname = f"{f.type.name} type tag (ubyte)" if name != f.name else repr(f.type)
        return FieldXRay(
            table=type(self).__name__,
            field=name,
            path=f"{base}.{name}",
            slot=slot,
            vtable_entry_offset=vt_entry,
            offset=off,
            present=present,
            value=value,
            default=f.resolved_default(),
            type=tname,
            since=f.since,
            doc=f.doc,
        )


@dataclass(frozen=True)
class XRayTable:
    table: FlatTable
    fields: list

    def __str__(self) -> str:
        origin = self.table.origin
        head = type(self.table).__name__
        if origin:
            head += f" at byte {origin.pos} (vtable at byte {origin.vtable}, {len(origin.slot_offsets)} slots)"
        return "\n".join([head] + ["  " + str(x) for x in self.fields])

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        origin = self.table.origin
        rows = []
        for x in self.fields:
            state = (
                f"byte {x.offset}" if x.present else f"<i>absent → {html.escape(_short(x.default))}</i>"
            )
            colour = "#e8f5e9" if x.present else "#fff8e1"
            rows.append(
                f"<tr style='background:{colour}'><td>{x.slot}</td><td><code>{html.escape(x.field)}</code></td>"
                f"<td>{html.escape(x.type)}</td><td><code>{html.escape(_short(x.value))}</code></td>"
                f"<td>{state}</td><td>{'v' + str(x.since) if x.since else ''}</td></tr>"
            )
        where = (
            f"{html.escape(origin.path)} — table at byte {origin.pos}, vtable at byte {origin.vtable}"
            if origin
            else "built in code (no bytes yet)"
        )
        return (
            f"<div><b>{type(self.table).__name__}</b> <small>{where}</small>"
            "<table><tr><th>slot</th><th>field</th><th>type</th><th>value</th><th>stored</th>"
            "<th>added in</th></tr>" + "".join(rows) + "</table></div>"
        )


def _annotation(f: Field) -> Any:
    return Any


def variant(name: str, label: str, *fields: Field, doc: str = "") -> str:
    """Declare another version of a table, e.g. ``DepthwiseConv2DOptions`` as of op version 1.

    The variant is not part of the schema; pass it to ``load(..., declarations={name: key})`` to
    read a file the way an older (or newer) reader would.  Returns the key ``"Name@label"``.
    """
    key = f"{name}@{label}"
    decl = TableDecl(key, tuple(fields), doc or f"{name} as declared in {label}")
    VARIANTS[key] = decl
    VARIANT_CLASSES[key] = build_class(decl, register=False, class_name=name)
    return key


def declaration(name: str) -> TableDecl:
    """The declaration of a schema table or of a variant ("Name@label")."""
    return TABLES[name] if name in TABLES else VARIANTS[name]


def table_class(name: str) -> type:
    return CLASSES[name] if name in CLASSES else VARIANT_CLASSES[name]


def build_class(decl: TableDecl, bases: tuple[type, ...] = (), register: bool = True,
                class_name: str | None = None) -> type:
    """Make the frozen dataclass for a table declaration (fields in schema spelling)."""
    specs = []
    for name, f in decl.python_fields():
        if name.endswith("_type") and isinstance(f.type, UnionRef) and name != f.name:
            default = 0
        else:
            default = f.resolved_default()
        specs.append((name, _annotation(f), dataclasses.field(default=default)))
    specs.append(("_origin", Any, dataclasses.field(default=None, init=False, repr=False, compare=False)))
    cls = dataclasses.make_dataclass(
        class_name or decl.name, specs, bases=bases + (FlatTable,), frozen=True, repr=False, eq=True,
        namespace={"__decl__": decl, "__doc__": decl.doc or f"The schema table {decl.name}."},
    )
    cls.__module__ = "workbench.schema"
    if register:
        CLASSES[decl.name] = cls
    return cls


def build_all() -> dict[str, type]:
    """Every schema table's class, made now where not made yet (``CLASSES`` makes them on demand)."""
    for name in TABLES:
        CLASSES[name]
    return CLASSES
