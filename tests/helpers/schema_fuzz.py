"""The schema fuzzer's byte-level mutations (tests/schema/test_fuzz.py).

Shared with tests/schema/test_plain_decoder.py and the interpreter fuzzer
(tests/interpreter/test_interpreter_fuzz.py).
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass
from functools import lru_cache

import workbench
from helpers import builders
from workbench import corpus
from workbench.schema import FlatTable
from workbench.schema.declare import INT32, Bytes, Enum, Scalar, String, TableRef, UnionRef, Vector

BUILT_BASES = {"feature": 1500, "add_fc": 500}

EXTREME_WORDS = (0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0x80000001, 0x7FFFFFFC, 0, 1, 2, 3, 4, 8,
                 12, 16, 0xFFFFFFFC, 0xFFFFFFF8, 0x0000FFFF, 0x00010000, 0x00100000)
EXTREME_SHORTS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 0xFFFF, 0x7FFF, 0x8000, 0xFFFE, 0xFFFC, 0x100)


@lru_cache(maxsize=None)
def base_bytes(name: str) -> bytes:
    if name in BUILT_BASES:
        return {"feature": builders.feature_bytes, "add_fc": builders.add_fc_bytes}[name]()
    return corpus.fetch([name])[name].read_bytes()


@dataclass(frozen=True)
class Hotspots:
    """Byte positions of the structure, by kind (all of them valid in the unmutated file)."""

    soffsets: tuple[int, ...]  # a table's int32 offset to its vtable
    vtables: tuple[int, ...]  # a vtable's start (its uint16 size, then the table size)
    entries: tuple[int, ...]  # a vtable's uint16 field entries
    uoffsets: tuple[int, ...]  # uint32 offset fields (strings, vectors, tables, union values)
    lengths: tuple[int, ...]  # uint32 vector / string lengths
    elements: tuple[int, ...]  # the first elements of scalar vectors (shapes, tensor indices, ...)
    vectors: tuple[tuple[int, int, int], ...]  # int32 vectors: (first element, count, 4)
    scalars: tuple[int, ...]  # inline scalar fields
    tables: tuple[int, ...]  # table positions (targets for offset redirection)


def _iter_tables(obj: FlatTable):
    yield obj
    for attr, f in obj.__decl__.python_fields():
        if attr != f.name:
            continue
        value = getattr(obj, attr)
        if isinstance(value, FlatTable):
            yield from _iter_tables(value)
        elif isinstance(value, tuple):
            for v in value:
                if isinstance(v, FlatTable):
                    yield from _iter_tables(v)


@lru_cache(maxsize=None)
def hotspots(name: str) -> Hotspots:
    data = base_bytes(name)
    model = workbench.load(data)
    kinds = {k: set() for k in Hotspots.__dataclass_fields__}
    kinds["uoffsets"].add(0)  # the root offset
    for t in _iter_tables(model):
        o = t.origin
        kinds["soffsets"].add(o.pos)
        kinds["tables"].add(o.pos)
        kinds["vtables"].add(o.vtable)
        kinds["entries"].update(o.vtable + 4 + 2 * i for i in range(len(o.slot_offsets)))
        for f in t.__decl__.fields:
            for slot in f.slots:
                if slot >= len(o.slot_offsets) or not o.slot_offsets[slot]:
                    continue
                pos = o.pos + o.slot_offsets[slot]
                is_offset = isinstance(f.type, (String, Bytes, TableRef, Vector)) or (
                    isinstance(f.type, UnionRef) and slot == f.value_slot)
                if is_offset:
                    kinds["uoffsets"].add(pos)
                    target = pos + struct.unpack_from("<I", data, pos)[0]
                    if not isinstance(f.type, (TableRef, UnionRef)):
                        kinds["lengths"].add(target)
                    if isinstance(f.type, Vector) and isinstance(f.type.element, (Scalar, Enum)):
                        n = struct.unpack_from("<I", data, target)[0]
                        size = (f.type.element.scalar if isinstance(f.type.element, Enum)
                                else f.type.element).size
                        kinds["elements"].update(target + 4 + size * i for i in range(min(n, 4)))
                        if f.type.element is INT32 and n:
                            kinds["vectors"].add((target + 4, n, 4))
                else:
                    kinds["scalars"].add(pos)
    return Hotspots(**{k: tuple(sorted(v)) for k, v in kinds.items()})


def _pos(rng: random.Random, data: bytearray, spots: Hotspots, width: int) -> int:
    """Half the time a structural position, else anywhere."""
    if rng.random() < 0.5:
        kind = rng.choice([k for k in ("soffsets", "vtables", "entries", "uoffsets", "lengths", "scalars",
                                        "elements")
                           if getattr(spots, k)])
        pos = rng.choice(getattr(spots, kind))
    else:
        pos = rng.randrange(len(data))
    return max(0, min(pos, len(data) - width))


def _put(data: bytearray, pos: int, fmt: str, value: int) -> None:
    size = struct.calcsize(fmt)
    if 0 <= pos and pos + size <= len(data):
        struct.pack_into(fmt, data, pos, value)


def m_bitflip(rng, data, spots):
    flips = []
    for _ in range(rng.randint(1, 8)):
        p = _pos(rng, data, spots, 1)
        bit = rng.randrange(8)
        data[p] ^= 1 << bit
        flips.append(f"{p}.{bit}")
    return "bitflip " + ",".join(flips)


def m_byteset(rng, data, spots):
    p = _pos(rng, data, spots, 1)
    v = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))
    data[p] = v
    return f"byte {p}={v:#x}"


def m_truncate(rng, data, spots):
    n = rng.choice((rng.randrange(len(data)), rng.randrange(min(64, len(data))),
                    len(data) - rng.randint(1, 16)))
    n = max(0, n)
    del data[n:]
    return f"truncate to {n}"


def m_word(rng, data, spots):
    p = _pos(rng, data, spots, 4)
    v = rng.choice(EXTREME_WORDS + (len(data), len(data) - 4, rng.getrandbits(32)))
    _put(data, p, "<I", v & 0xFFFFFFFF)
    return f"word {p}={v & 0xFFFFFFFF:#x}"


def m_short(rng, data, spots):
    p = rng.choice(spots.entries + spots.vtables) if rng.random() < 0.8 else _pos(rng, data, spots, 2)
    v = rng.choice(EXTREME_SHORTS + (rng.getrandbits(16),))
    _put(data, p, "<H", v)
    return f"short {p}={v:#x}"


def m_insert(rng, data, spots):
    p = _pos(rng, data, spots, 1)
    chunk = bytes(rng.getrandbits(8) for _ in range(rng.choice((1, 2, 3, 4, 8, 16))))
    data[p:p] = chunk
    return f"insert {len(chunk)} at {p}"


def m_delete(rng, data, spots):
    p = _pos(rng, data, spots, 1)
    n = rng.choice((1, 2, 3, 4, 8, 16, 64))
    del data[p:p + n]
    return f"delete {n} at {p}"


def m_splice(rng, data, spots):
    src, dst = rng.randrange(len(data)), _pos(rng, data, spots, 1)
    n = rng.choice((4, 8, 16, 32))
    chunk = bytes(data[src:src + n])
    data[dst:dst + len(chunk)] = chunk
    return f"copy {len(chunk)} from {src} to {dst}"


def m_self_vtable(rng, data, spots):
    """A table whose vtable is itself (soffset 0), or at the file start, or just before/after."""
    p = rng.choice(spots.soffsets)
    v = rng.choice((0, p, -p, 2, -2, 4, -4, p - len(data), -0x80000000, 0x7FFFFFFF))
    _put(data, p, "<i", max(-0x80000000, min(0x7FFFFFFF, v)))
    return f"soffset {p}={v}"


def m_offset_trick(rng, data, spots):
    """An offset pointing to itself, to its own table, to another table or vector (type
    confusion), to the root, or just past the end."""
    p = rng.choice(spots.uoffsets)
    choice = rng.randrange(6)
    if choice == 0:
        target = p  # uoffset 0: points at itself
    elif choice == 1:
        target = max(t for t in spots.tables if t <= p) if any(t <= p for t in spots.tables) else 0
    elif choice == 2:
        target = rng.choice(spots.tables)
    elif choice == 3:
        target = struct.unpack_from("<I", data, 0)[0] if len(data) >= 4 else 0
    elif choice == 4 and spots.lengths:
        target = rng.choice(spots.lengths)  # another vector or string: its bytes read as this type
    else:
        target = len(data) - rng.randint(0, 4)
    _put(data, p, "<I", (target - p) & 0xFFFFFFFF)
    return f"uoffset {p}→{target}"


def m_vtable(rng, data, spots):
    """A vtable whose size or table size is odd, tiny or huge."""
    p = rng.choice(spots.vtables)
    which = rng.choice((0, 2))
    v = rng.choice((0, 1, 2, 3, 5, 0xFFFF, 0xFFFE, 0x8000, 4 + 2 * rng.randrange(64)))
    _put(data, p + which, "<H", v)
    return f"vtable {p}+{which}={v:#x}"


def m_length(rng, data, spots):
    if not spots.lengths:
        return m_word(rng, data, spots)
    p = rng.choice(spots.lengths)
    v = rng.choice((0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x40000000, 0x3FFFFFFF, len(data), len(data) // 4,
                    len(data) // 4 + 1, 0))
    _put(data, p, "<I", v)
    return f"length {p}={v:#x}"


def m_element(rng, data, spots):
    """A vector element (a dimension, a tensor index, a zero point) or an inline scalar (a buffer
    index, an opcode index, an enum) set to an awkward signed value."""
    p = rng.choice(spots.elements if spots.elements and rng.random() < 0.6 else spots.scalars)
    v = rng.choice((-1, -2, -3, 0, 1, 2, 3, 127, 128, 255, 0x7FFFFFFF, -0x80000000, 1 << 20, 65536,
                    rng.randint(-10, 1000)))
    _put(data, p, "<i", v)
    return f"int {p}={v}"


def m_negate(rng, data, spots):
    """Negate elements of an int32 vector (two negated dimensions keep a shape's product)."""
    start, n, size = rng.choice(spots.vectors)
    which = sorted(rng.sample(range(min(n, 8)), rng.randint(1, min(n, 8))))
    for i in which:
        p = start + size * i
        if p + 4 <= len(data):
            v = struct.unpack_from("<i", data, p)[0]
            _put(data, p, "<i", -v if v != -0x80000000 else 0)
    return f"negate elements {which} of vector at {start}"


MUTATORS = (m_bitflip, m_byteset, m_truncate, m_word, m_short, m_insert, m_delete, m_splice, m_self_vtable,
            m_offset_trick, m_vtable, m_length, m_element, m_negate)
WEIGHTS = (3, 2, 1, 4, 3, 1, 1, 1, 2, 3, 2, 2, 4, 2)


def mutate(name: str, seed: int) -> tuple[bytes, str]:
    """The bytes of case ``seed`` for base model ``name``, and what was done to them."""
    rng = random.Random(f"{name}/{seed}")
    data = bytearray(base_bytes(name))
    spots = hotspots(name)
    steps = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        if len(data) < 8:
            break
        steps.append(rng.choices(MUTATORS, WEIGHTS)[0](rng, data, spots))
    return bytes(data), "; ".join(steps)
