"""Reading .tflite bytes into immutable schema objects, with every offset bounds-checked.

The ``flatbuffers`` Python runtime has no verifier: its ``Table`` trusts every offset, so a
truncated or hostile file surfaces as ``struct.error``, an ``IndexError`` or — through Python's
negative slicing — as silently wrong values.  This module walks the same vtables with the
runtime's own number types and checks each position before it is read, so malformed input
always becomes a :class:`~workbench.errors.ModelError` naming the FlatBuffer path and byte offset.

Every table, string and vector is decoded once per byte position (FlatBuffers may share them),
which keeps the work linear in the file size even for adversarial files.
"""

from __future__ import annotations

import errno
import mmap
import os
import struct
from dataclasses import dataclass

import flatbuffers.number_types as N
import numpy as np

from ..errors import ModelError
from .declare import (
    UINT8,
    UNIONS,
    Bytes,
    Enum,
    Origin,
    Scalar,
    String,
    TableRef,
    UnionRef,
    Vector,
    declaration,
    table_class,
)

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3

_U32 = N.UOffsetTFlags.packer_type
_S32 = N.SOffsetTFlags.packer_type
_U16 = N.VOffsetTFlags.packer_type

# field kinds of a decoding plan
(_SCALAR, _BOOL, _ENUM, _STRING, _BYTES, _VEC, _VEC_BOOL, _VEC_ENUM, _TABLE, _VEC_TABLE,
 _VEC_STRING, _UNION) = range(12)


@dataclass(frozen=True)
class UnknownTable:
    """A union member this reader does not know (written by a newer schema); kept, not decoded."""

    union: str
    tag: int
    offset: int

    def __repr__(self) -> str:
        return f"<unknown {self.union} member {self.tag} at byte {self.offset}>"


@dataclass(frozen=True)
class LoadNote:
    """Something a newer file contains that this reader kept but could not interpret."""

    path: str
    offset: int | None
    message: str

    def __str__(self) -> str:
        where = f" (byte {self.offset})" if self.offset is not None else ""
        return f"{self.path}{where}: {self.message}"


def _join(path: str, attr: str) -> str:
    return f"{path}.{attr}" if attr else path


def _plan_for(decl) -> list[tuple]:
    plan = []
    for f in decl.fields:
        t = f.type
        default = f.resolved_default()
        if isinstance(t, UnionRef):
            plan.append((f.name, f.id, _UNION, UNIONS[t.name], None, 1))
        elif isinstance(t, Scalar):
            if t.name == "bool":
                plan.append((f.name, f.id, _BOOL, None, default, 1))
            else:
                plan.append((f.name, f.id, _SCALAR, t.struct, default, t.size))
        elif isinstance(t, Enum):
            plan.append((f.name, f.id, _ENUM, (t.scalar.struct, t.enum._value2member_map_), default, t.size))
        elif isinstance(t, String):
            plan.append((f.name, f.id, _STRING, None, None, 4))
        elif isinstance(t, Bytes):
            plan.append((f.name, f.id, _BYTES, None, None, 4))
        elif isinstance(t, TableRef):
            plan.append((f.name, f.id, _TABLE, t.name, None, 4))
        elif isinstance(t, Vector):
            e = t.element
            if isinstance(e, Scalar):
                kind = _VEC_BOOL if e.name == "bool" else _VEC
                plan.append((f.name, f.id, kind, e, None, 4))
            elif isinstance(e, Enum):
                plan.append((f.name, f.id, _VEC_ENUM, e, None, 4))
            elif isinstance(e, String):
                plan.append((f.name, f.id, _VEC_STRING, None, None, 4))
            elif isinstance(e, TableRef):
                plan.append((f.name, f.id, _VEC_TABLE, e.name, None, 4))
            else:  # pragma: no cover - declaration error
                raise TypeError(f"{decl.name}.{f.name}: unsupported vector element {e!r}")
        else:  # pragma: no cover - declaration error
            raise TypeError(f"{decl.name}.{f.name}: unsupported type {t!r}")
    return plan


_DECODERS: dict[str, object] = {}


def _outside(path: str, attr: str, pos: int, objlen: int):
    raise ModelError(f"field lies outside its {objlen}-byte table", f"{path}.{attr}", pos)


def _compile(name: str):
    """Write a straight-line decoder for one table from its declaration (no per-field dispatch).

    The generated function reads each declared slot of the vtable, checks that the field lies
    inside the table, and decodes it with the Reader's bounds-checked primitives.
    """
    decl = declaration(name)
    ns = decl.num_slots
    env = {"_outside": _outside, "UINT8": UINT8, "_U32": _U32, "_S32": _S32, "_unpack_from": struct.unpack_from,
           "_header": _header, "_unknown": _unknown, "_Origin": Origin, "_CLS": table_class(name),
           "_ZEROS": (0,) * ns, "_NAME": name}
    lines = [
        "def read(r, pos, path):",
        "    buf = r.buf",
        "    n = r.n",
        "    memo = r.memo",
        "    if pos < 0 or pos + 4 > n: _header(r, pos, path)",
        "    vt = pos - _S32.unpack_from(buf, pos)[0]",
        "    if vt < 0 or vt + 4 > n: _header(r, pos, path)",
        "    vtlen, objlen = _unpack_from('<HH', buf, vt)",
        "    if vtlen < 4 or vtlen & 1 or vt + vtlen > n or objlen < 4 or pos + objlen > n: _header(r, pos, path)",
        "    nslots = (vtlen - 4) >> 1",
        "    offs = _unpack_from(f'<{nslots}H', buf, vt + 4)",
        f"    padded = offs + _ZEROS[nslots:] if nslots < {ns} else offs",
        "    obj = _CLS.__new__(_CLS)",
        "    d = obj.__dict__",
    ]
    for k, (attr, slot, kind, arg, default, size) in enumerate(_plan_for(decl)):
        a = repr(attr)
        if kind == _UNION:
            # fast path inlined; anything unusual (bounds, unknown member) goes to r._union
            env[f"A{k}"] = arg
            env[f"T{k}"] = arg.tags._value2member_map_
            env[f"M{k}"] = arg.members
            ta = repr(attr + "_type")
            lines += [
                f"    to = padded[{slot}]",
                f"    vo = padded[{slot + 1}]",
                "    tag = buf[pos + to] if to and to < objlen else 0",
                f"    member = M{k}.get(tag) if vo else None",
                "    if (to and to >= objlen) or (tag and vo and (member is None or vo + 4 > objlen)):",
                f"        r._union(d, {a}, A{k}, padded, {slot}, {ns}, pos, objlen, path)",
                "    else:",
                f"        d[{ta}] = T{k}.get(tag, tag)",
                "        if member is None:",
                f"            d[{a}] = None",
                "        else:",
                f"            sub = path + '.' + {a}",
                f"            d[{a}] = r.table(member, r.uoffset_target(pos + vo, sub), sub)",
            ]
            continue
        env[f"A{k}"] = arg
        env[f"D{k}"] = default
        lines.append(f"    o = padded[{slot}]")
        lines.append("    if o:")
        lines.append(f"        if o + {size} > objlen: _outside(path, {a}, pos + o, objlen)")
        if kind == _SCALAR:
            expr = f"A{k}.unpack_from(buf, pos + o)[0]"
        elif kind == _ENUM:
            env[f"M{k}"] = arg[1]
            env[f"A{k}"] = arg[0]
            lines.append(f"        v = A{k}.unpack_from(buf, pos + o)[0]")
            expr = f"M{k}.get(v, v)"
        elif kind == _BOOL:
            expr = "buf[pos + o] != 0"
        elif kind == _VEC:
            # inlined for speed: the common case (shapes, inputs, outputs) of a scalar vector
            env[f"C{k}"] = arg.struct.format[-1]
            lines.append("        t = pos + o")
            lines.append("        u = t + _U32.unpack_from(buf, t)[0]")
            # keyed by element type and position: fields of different types may share bytes
            lines.append(f"        key = ('vec', C{k}, u)")
            lines.append("        v = memo.get(key)")
            lines.append("        if v is None:")
            lines.append("            if u + 4 > n: r.uoffset_target(t, path, " + a + ")")
            lines.append("            ln = _U32.unpack_from(buf, u)[0]")
            lines.append(f"            if u + 4 + ln * {arg.size} > n: r.vector_span(t, {arg.size}, path, {a})")
            lines.append(f"            v = memo[key] = _unpack_from(f'<{{ln}}{{C{k}}}', buf, u + 4) if ln < 64 "
                         f"else r.scalar_vector(t, A{k}, path, {a})")
            expr = "v"
        elif kind == _STRING:
            lines += [
                "        t = pos + o",
                "        u = t + _U32.unpack_from(buf, t)[0]",
                "        v = memo.get(('s', u))",
                "        if v is None:",
                f"            if u + 4 > n: r.uoffset_target(t, path, {a})",
                "            ln = _U32.unpack_from(buf, u)[0]",
                f"            if u + 4 + ln > n: r.vector_span(t, 1, path, {a})",
                "            # surrogateescape keeps undecodable bytes: writing back is lossless",
                "            v = memo[('s', u)] = str(buf[u + 4:u + 4 + ln], 'utf-8', 'surrogateescape')",
            ]
            expr = "v"
        elif kind == _BYTES:
            expr = f"r.raw_bytes(pos + o, path, {a})"
        elif kind == _TABLE:
            lines += [
                f"        sub = path + '.' + {a}",
                "        t = pos + o",
                "        u = t + _U32.unpack_from(buf, t)[0]",
                "        if u + 4 > n: r.uoffset_target(t, sub)",
                "        v = None if r.declarations else memo.get((A%d, u))" % k,
                "        if v is None:",
                f"            v = r.table(A{k}, u, sub)",
            ]
            expr = "v"
        elif kind == _VEC_TABLE:
            expr = f"r._table_vector(A{k}, pos + o, path + '.' + {a})"
        elif kind == _VEC_BOOL:
            expr = f"tuple(x != 0 for x in r.scalar_vector(pos + o, UINT8, path, {a}))"
        elif kind == _VEC_ENUM:
            env[f"M{k}"] = arg.enum._value2member_map_
            expr = f"tuple(M{k}.get(x, x) for x in r.scalar_vector(pos + o, A{k}.scalar, path, {a}))"
        elif kind == _VEC_STRING:
            expr = f"r.string_vector(pos + o, path, {a})"
        else:  # pragma: no cover
            raise TypeError(kind)
        lines.append(f"        d[{a}] = {expr}")
        lines.append("    else:")
        lines.append(f"        d[{a}] = D{k}")
    lines += [
        f"    unknown = _unknown(r, _NAME, offs, {ns}, pos, path) if nslots > {ns} else ()",
        "    d['_origin'] = (path, pos, vt, offs, unknown)",
        "    memo[(_NAME, pos)] = obj",
        "    return obj",
    ]
    exec(compile("\n".join(lines), f"<reader of {name}>", "exec"), env)
    return env["read"]


def _header(r, pos: int, path: str) -> tuple[int, int, int]:
    """Check a table's start and vtable (raises the precise error; the fast path is inlined)."""
    n = r.n
    if pos < 0 or pos + 4 > n:
        raise ModelError(f"table at byte {pos} lies outside the {n}-byte file", path, pos)
    vt = pos - _S32.unpack_from(r.buf, pos)[0]
    if vt < 0 or vt + 4 > n:
        raise ModelError(f"vtable position {vt} lies outside the {n}-byte file", path, pos)
    vtlen, objlen = struct.unpack_from("<HH", r.buf, vt)
    if vtlen < 4 or vtlen % 2 or vt + vtlen > n:
        raise ModelError(f"vtable of {vtlen} bytes is malformed or runs past the end", path, vt)
    if objlen < 4 or pos + objlen > n:
        raise ModelError(f"table of {objlen} bytes runs past the end of the file", path, pos)
    return vt, (vtlen - 4) // 2, objlen


def _unknown(r, name: str, offs: tuple, known: int, pos: int, path: str) -> tuple[int, ...]:
    """Slots past the declaration that the file fills (a newer schema): kept as notes."""
    unknown = tuple(i for i in range(known, len(offs)) if offs[i])
    for i in unknown:
        r.notes.append(LoadNote(path, pos + offs[i], f"{name} has a field in slot {i}, unknown to this schema"))
    return unknown


def _reader(name: str):
    fn = _DECODERS.get(name)
    if fn is None:
        fn = _DECODERS[name] = _compile(name)
    return fn


def plain_read(r: "Reader", name: str, pos: int, path: str):
    """Decode table ``name`` at ``pos`` field by field — the same steps the generated decoders take,
    written as one readable loop (``load(..., plain=True)``; step through it in a debugger).

    1. The table starts with a signed offset back to its *vtable*: a list of 16-bit offsets, one per
       field slot, 0 for a field the writer left out.
    2. For each declared field: if its slot is 0 (or past the vtable's end), the field takes the
       schema's default; otherwise its bytes start that many bytes into the table, and must lie inside
       the table's size as the vtable states it.
    3. Scalars and enums are read in place; strings, vectors and sub-tables are reached through a
       32-bit forward offset, every one bounds-checked by the :class:`Reader`'s primitives.
    """
    decl = declaration(name)
    buf = r.buf
    vt, nslots, objlen = _header(r, pos, path)                       # step 1: the vtable
    offs = struct.unpack_from(f"<{nslots}H", buf, vt + 4)
    padded = offs + (0,) * max(decl.num_slots - nslots, 0)
    cls = table_class(name)
    obj = cls.__new__(cls)
    d = obj.__dict__
    for attr, slot, kind, arg, default, size in _plan_for(decl):    # step 2: field by field
        if kind == _UNION:
            r._union(d, attr, arg, padded, slot, decl.num_slots, pos, objlen, path)
            continue
        o = padded[slot]
        if not o:
            d[attr] = default
            continue
        if o + size > objlen:
            _outside(path, attr, pos + o, objlen)
        at = pos + o                                                 # step 3: read it
        if kind == _SCALAR:
            d[attr] = arg.unpack_from(buf, at)[0]
        elif kind == _BOOL:
            d[attr] = buf[at] != 0
        elif kind == _ENUM:
            fmt, members = arg
            v = fmt.unpack_from(buf, at)[0]
            d[attr] = members.get(v, v)
        elif kind == _STRING:
            d[attr] = r.string(at, path, attr)
        elif kind == _BYTES:
            d[attr] = r.raw_bytes(at, path, attr)
        elif kind == _TABLE:
            sub = f"{path}.{attr}"
            d[attr] = r.table(arg, r.uoffset_target(at, sub), sub)
        elif kind == _VEC:
            d[attr] = r.scalar_vector(at, arg, path, attr)
        elif kind == _VEC_BOOL:
            d[attr] = tuple(x != 0 for x in r.scalar_vector(at, UINT8, path, attr))
        elif kind == _VEC_ENUM:
            members = arg.enum._value2member_map_
            d[attr] = tuple(members.get(x, x) for x in r.scalar_vector(at, arg.scalar, path, attr))
        elif kind == _VEC_STRING:
            d[attr] = r.string_vector(at, path, attr)
        elif kind == _VEC_TABLE:
            d[attr] = r._table_vector(arg, at, f"{path}.{attr}")
        else:  # pragma: no cover - declaration error
            raise TypeError(kind)
    unknown = _unknown(r, name, offs, decl.num_slots, pos, path) if nslots > decl.num_slots else ()
    d["_origin"] = (path, pos, vt, offs, unknown)
    r.memo[(name, pos)] = obj
    return obj


class Reader:
    """Decodes one buffer.  Use :func:`load`; this class is public for the X-ray notebooks."""

    def __init__(self, buf, declarations: dict[str, str] | None = None, plain: bool = False):
        self.plain = bool(plain)                      # decode with plain_read instead of the generated code
        self.declarations = dict(declarations or {})  # table name -> variant key to read it with
        for key in self.declarations.values():
            declaration(key)  # unknown variant: KeyError now, not mid-read
        self.buf = buf
        self.n = len(buf)
        self.view = memoryview(buf)
        if not self.view.readonly:
            self.view = self.view.toreadonly()
        self.memo: dict = {}
        self.notes: list[LoadNote] = []

    # -- primitive reads, each bounds-checked -------------------------------------------------
    def uoffset_target(self, pos: int, path: str, attr: str = "") -> int:
        """Follow the 32-bit forward offset stored at ``pos`` (``path.attr`` names it in errors)."""
        if pos < 0 or pos + 4 > self.n:
            raise ModelError(f"offset at byte {pos} lies outside the {self.n}-byte file", _join(path, attr), pos)
        target = pos + _U32.unpack_from(self.buf, pos)[0]
        if target + 4 > self.n:
            raise ModelError(f"offset points to byte {target}, past the end of the {self.n}-byte file",
                             _join(path, attr), pos)
        return target

    def vector_span(self, pos: int, elem_size: int, path: str, attr: str = "") -> tuple[int, int]:
        """(first element position, length) of the vector referenced at ``pos``."""
        target = self.uoffset_target(pos, path, attr)
        length = _U32.unpack_from(self.buf, target)[0]
        if target + 4 + length * elem_size > self.n:
            raise ModelError(
                f"vector of {length} elements x {elem_size} bytes runs past the end of the file",
                _join(path, attr), target,
            )
        return target + 4, length

    def string(self, pos: int, path: str, attr: str = "") -> str:
        start, length = self.vector_span(pos, 1, path, attr)
        key = ("s", start - 4)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        # surrogateescape keeps undecodable bytes, so writing the string back is lossless
        value = bytes(self.view[start:start + length]).decode("utf-8", "surrogateescape")
        self.memo[key] = value
        return value

    def raw_bytes(self, pos: int, path: str, attr: str = "") -> memoryview:
        start, length = self.vector_span(pos, 1, path, attr)
        return self.view[start:start + length]

    def string_vector(self, pos: int, path: str, attr: str) -> tuple:
        start, length = self.vector_span(pos, 4, path, attr)
        return tuple(self.string(start + 4 * i, path, f"{attr}[{i}]") for i in range(length))

    def scalar_vector(self, pos: int, scalar: Scalar, path: str, attr: str = "") -> tuple:
        key = ("v", scalar.name, pos)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        start, length = self.vector_span(pos, scalar.size, path, attr)
        if length < 16:
            value = struct.unpack_from(f"<{length}{scalar.struct.format[-1]}", self.buf, start)
        else:
            value = tuple(np.frombuffer(self.buf, scalar.dtype, length, start).tolist())
        self.memo[key] = value
        return value

    # -- tables --------------------------------------------------------------------------------
    def table(self, name: str, pos: int, path: str):
        """Decode the table ``name`` at ``pos`` (once per position: FlatBuffers may share tables)."""
        if self.declarations:
            name = self.declarations.get(name, name)
        hit = self.memo.get((name, pos))
        if hit is not None:
            return hit
        if self.plain:
            return plain_read(self, name, pos, path)
        return _reader(name)(self, pos, path)

    def _table_vector(self, name: str, pos: int, path: str) -> tuple:
        key = ("t", name, pos)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        start, length = self.vector_span(pos, 4, path)
        rel = struct.unpack_from(f"<{length}I", self.buf, start) if length else ()
        if self.declarations:
            name = self.declarations.get(name, name)
        if self.plain:
            def read(r, at, p, _name=name):
                return plain_read(r, _name, at, p)
        else:
            read = _reader(name)
        memo, n = self.memo, self.n
        out = []
        for i, r in enumerate(rel):
            elem = start + 4 * i
            target = elem + r
            if target + 4 > n:
                raise ModelError("element offset points past the end of the file", f"{path}[{i}]", elem)
            obj = memo.get((name, target))
            out.append(obj if obj is not None else read(self, target, f"{path}[{i}]"))
        value = tuple(out)
        self.memo[key] = value
        return value

    def _union(self, values, attr, udecl, offs, slot, nslots, pos, objlen, path) -> None:
        tslot, vslot = slot, slot + 1
        to = offs[tslot] if tslot < nslots else 0
        vo = offs[vslot] if vslot < nslots else 0
        tag = 0
        if to:
            if to + 1 > objlen:
                raise ModelError("union type lies outside its table", f"{path}.{attr}_type", pos + to)
            tag = self.buf[pos + to]
        values[attr + "_type"] = udecl.tags._value2member_map_.get(tag, tag)
        if not vo or tag == 0:
            values[attr] = None
            return
        if vo + 4 > objlen:
            raise ModelError("union value lies outside its table", f"{path}.{attr}", pos + vo)
        target = self.uoffset_target(pos + vo, f"{path}.{attr}")
        member = udecl.members.get(tag)
        if member is None:
            values[attr] = UnknownTable(udecl.name, tag, target)
            self.notes.append(LoadNote(f"{path}.{attr}", target,
                                       f"{udecl.name} member {tag} is unknown to this schema; kept undecoded"))
            return
        values[attr] = self.table(member, target, f"{path}.{attr}")


class ModelFileNotFoundError(ModelError, FileNotFoundError):
    """``load`` of a path where no file is: a ModelError, and still the builtin FileNotFoundError."""

    def __init__(self, message: str, filename: str):
        ModelError.__init__(self, message)
        self.errno, self.strerror, self.filename = errno.ENOENT, message, filename

    def __str__(self) -> str:
        return self.message


class ModelIsADirectoryError(ModelError, IsADirectoryError):
    """``load`` of a directory: a ModelError, and still the builtin IsADirectoryError."""

    def __init__(self, message: str, filename: str):
        ModelError.__init__(self, message)
        self.errno, self.strerror, self.filename = errno.EISDIR, message, filename

    def __str__(self) -> str:
        return self.message


def _read_source(source) -> bytes | mmap.mmap | memoryview:
    if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap)):
        return bytes(source) if isinstance(source, bytearray) else source
    path = os.fspath(source)
    if os.path.isdir(path):
        raise ModelIsADirectoryError(f"cannot read {path}: Is a directory (a .tflite file was expected)", path)
    if not os.path.exists(path):
        raise ModelFileNotFoundError(f"cannot read {path}: No such file or directory", path)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            return b""
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def load(source, *, validate: bool = True, declarations: dict[str, str] | None = None, plain: bool = False):
    """Read a .tflite file (path, bytes or memoryview) into a :class:`Model`.

    Large buffers stay in the file: ``Buffer.data`` is a read-only ``memoryview`` into it (a
    path is memory-mapped), so loading a big model costs only its structure.  Unknown fields,
    union members and operator codes of newer files are kept and listed in ``model.load_notes``.
    ``declarations`` reads some tables with another declaration (see ``declare.variant``), e.g.
    ``{"DepthwiseConv2DOptions": "DepthwiseConv2DOptions@v1"}`` to read like a version-1 reader.
    ``plain=True`` decodes every table with :func:`plain_read`, a readable loop over the declared fields,
    instead of the straight-line decoders generated for speed: the same model, the same notes and errors,
    slower — for stepping through ``load`` in a debugger.
    """
    buf = _read_source(source)
    if isinstance(buf, memoryview) and (buf.ndim != 1 or buf.itemsize != 1):
        buf = buf.cast("B")
    n = len(buf)
    if n < 8:
        raise ModelError(f"a .tflite file needs at least 8 bytes (root offset + identifier); got {n}",
                         "<file>", 0)
    ident = bytes(buf[4:8])
    if ident != FILE_IDENTIFIER:
        raise ModelError(f"file identifier is {ident!r}, expected {FILE_IDENTIFIER!r}: not a TFLite model",
                         "<file identifier>", 4)
    reader = Reader(buf, declarations, plain)
    root = reader.uoffset_target(0, "<root offset>")
    model = reader.table("Model", root, "model")
    if model.version != SCHEMA_VERSION:
        raise ModelError(f"schema version {model.version}; this reader (like TFLite) only reads version "
                         f"{SCHEMA_VERSION}", "model.version", root)
    object.__setattr__(model, "_source", buf)
    object.__setattr__(model, "load_notes", tuple(reader.notes))
    if validate:
        from .validate import validate_model

        notes = validate_model(model)
        object.__setattr__(model, "load_notes", tuple(reader.notes) + tuple(notes))
    return model
