"""Fuzzing the schema layer: malformed bytes may only ever raise ``ModelError``.

Each case mutates a small valid model (five corpus models and two models built in code) with a
seeded recipe, or takes hypothesis-made bytes behind a valid ``TFL3`` header, and then:

* ``workbench.load(data)``: only :class:`~workbench.ModelError` may escape;
* when it loads: ``tensor_data`` for every tensor, ``op_name`` for every operator code and
  ``metadata``: only ``ModelError``;
* ``workbench.dump(model)``: only ``ModelError`` or :class:`~workbench.LossyWriteError`;
* ``dump(model, drop_unknown=True)`` when the plain dump refused to drop unknown fields;
* when it dumps: the written bytes load again (what we write, we read) into the same values
  (NaN equal to NaN), and re-dump identically;
* when validation refuses the file but the structure decodes (``load(data, validate=False)``):
  the helpers again, which must cope with dangling indices by raising ``ModelError``.

Any other exception (IndexError, struct.error, RecursionError, MemoryError, UnicodeError,
ValueError, OverflowError, ...) fails the test, and so does a case taking longer than
``CASE_SECONDS`` (a hang).  The failure names the seed; reproduce one case with::

    python tests/schema/test_fuzz.py sine_float 1234

Mutations aim half of their hits at the file's structure (table soffsets, vtable entries, offset
fields, vector lengths — found through the X-ray of the unmutated model) rather than at weights.
"""

from __future__ import annotations

import math
import random
import signal
import struct
import sys
import time
import traceback
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

if __name__ == "__main__":  # run as a script: tests/ and every folder under it on sys.path, as under pytest
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import conftest  # noqa: F401  (puts the folders on sys.path)

import builders  # noqa: E402  tests/ is on sys.path (conftest.py, also when run as a script)
import workbench
from workbench import LossyWriteError, ModelError, corpus
from workbench.schema import FlatTable, metadata, op_name, tensor_data
from workbench.schema.declare import INT32, Bytes, Enum, Scalar, String, TableRef, UnionRef, Vector

CASE_SECONDS = 5.0  # generous: a case takes milliseconds; only a hang gets near this

# base model → number of seeded cases per run (small models get most): 4500 seeded cases, plus
# HYPOTHESIS_EXAMPLES below.  The wake-word models bring more than one subgraph (CALL_ONCE's init
# graph, IF's branches), int8 per-channel quantization, VAR_HANDLE's strings and an empty [0] tensor.
CORPUS_BASES = {"sine_float": 1500, "hand_recrop": 300, "face_detection_short_range": 200,
                "microwakeword_hey_jarvis": 300, "openwakeword_hey_jarvis": 200}
BUILT_BASES = {"feature": 1500, "add_fc": 500}
CHUNK = 500  # cases per test, so xdist can spread them

EXTREME_WORDS = (0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0x80000001, 0x7FFFFFFC, 0, 1, 2, 3, 4, 8,
                 12, 16, 0xFFFFFFFC, 0xFFFFFFF8, 0x0000FFFF, 0x00010000, 0x00100000)
EXTREME_SHORTS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 0xFFFF, 0x7FFF, 0x8000, 0xFFFE, 0xFFFC, 0x100)


# --------------------------------------------------------------------------------------------
# The property


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` can swallow it."""


def _on_alarm(signum, frame):
    raise CaseTimeout(f"case took longer than {CASE_SECONDS} s")


def exercise(data: bytes) -> str:
    """Run one case; return 'rejected', 'loaded' or 'written'.  Anything not allowed propagates."""
    try:
        model = workbench.load(data)
    except ModelError:
        try:  # the structure may still decode; the helpers must cope with what validation refused
            model = workbench.load(data, validate=False)
        except ModelError:
            return "rejected"
        use_helpers(model)
        return "rejected"
    use_helpers(model)
    repr(model)
    dropped = False
    try:
        out = workbench.dump(model)
    except LossyWriteError:
        try:
            out = workbench.dump(model, drop_unknown=True)
            dropped = True
        except ModelError:
            return "loaded"
    except ModelError:
        return "loaded"
    again = workbench.load(out)  # what we write, we must be able to read
    if not dropped:
        difference = first_difference(model, again, "model")
        if difference:
            raise AssertionError(f"load(dump(model)) differs from model at {difference}")
    if workbench.dump(again) != out:
        raise AssertionError("dump(load(dump(model))) differs from dump(model)")
    return "written"


def first_difference(a, b, path: str) -> str | None:
    """Path of the first value that differs (NaN equals NaN: Python floats cannot carry a float32
    signalling NaN's payload), or None."""
    if isinstance(a, FlatTable):
        if type(a) is not type(b):
            return path
        for attr, _ in a.__decl__.python_fields():
            d = first_difference(getattr(a, attr), getattr(b, attr), f"{path}.{attr}")
            if d:
                return d
        return None
    if isinstance(a, tuple):
        if not isinstance(b, tuple) or len(a) != len(b):
            return path
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return None
    if isinstance(a, memoryview) or isinstance(b, memoryview):
        return None if a is not None and b is not None and bytes(a) == bytes(b) else path
    return None if (a == b and type(a) is type(b)) else path


def use_helpers(model) -> None:
    """The schema helpers on every tensor and operator code; each may only raise ModelError."""
    for s, sg in enumerate(model.subgraphs or ()):
        for t in range(len(sg.tensors or ())):
            try:
                tensor_data(model, s, t)
            except ModelError:
                pass
    for oc in model.operator_codes or ():
        op_name(oc)
    try:
        metadata(model)
    except ModelError:
        pass


def run_case(data: bytes) -> tuple[str, BaseException | None, str]:
    """(outcome, unexpected exception or None, traceback text), with a time limit."""
    use_alarm = hasattr(signal, "setitimer")
    if use_alarm:
        try:
            old = signal.signal(signal.SIGALRM, _on_alarm)
        except ValueError:  # not the main thread: fall back to measuring
            use_alarm = False
    start = time.perf_counter()
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
        outcome = exercise(data)
        if time.perf_counter() - start > CASE_SECONDS:
            raise CaseTimeout(f"case took {time.perf_counter() - start:.1f} s")
        return outcome, None, ""
    except BaseException as exc:  # noqa: BLE001 - everything not allowed is a finding
        if isinstance(exc, KeyboardInterrupt):
            raise
        return "failed", exc, traceback.format_exc()
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


# --------------------------------------------------------------------------------------------
# Base models and where their structure is


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


# --------------------------------------------------------------------------------------------
# Mutations: each edits ``data`` in place and returns a short description


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


# --------------------------------------------------------------------------------------------
# Tests


def _chunks():
    for name, count in {**CORPUS_BASES, **BUILT_BASES}.items():
        for start in range(0, count, CHUNK):
            yield pytest.param(name, start, min(count, start + CHUNK), id=f"{name}-{start}")


def _format(failures, name) -> str:
    lines = [f"{len(failures)} fuzz case(s) raised something other than ModelError:"]
    for seed, how, exc, tb in failures[:10]:
        lines.append(f"  seed {seed} ({how}): {type(exc).__name__}: {exc}"[:300])
    seed, how, exc, tb = failures[0]
    lines.append(f"reproduce: python tests/schema/test_fuzz.py {name} {seed}\n\nfirst traceback:\n{tb}")
    return "\n".join(lines)


@pytest.mark.parametrize("name, start, stop", list(_chunks()))
def test_mutated_model_raises_only_model_error(name, start, stop):
    outcomes = {"rejected": 0, "loaded": 0, "written": 0}
    failures = []
    for seed in range(start, stop):
        data, how = mutate(name, seed)
        outcome, exc, tb = run_case(data)
        if exc is not None:
            failures.append((seed, how, exc, tb))
        else:
            outcomes[outcome] += 1
    assert not failures, _format(failures, name)
    # the mix must include both rejected and accepted files, or the fuzzer is not reaching in
    assert outcomes["rejected"] and outcomes["written"], outcomes


def test_case_count():
    """The run makes at least 2000 cases: the seeded ones plus the hypothesis examples."""
    assert sum(CORPUS_BASES.values()) + sum(BUILT_BASES.values()) + HYPOTHESIS_EXAMPLES >= 2000


def test_mutations_are_reproducible():
    assert mutate("feature", 7) == mutate("feature", 7)
    assert mutate("feature", 7)[0] != mutate("feature", 8)[0]


def test_run_case_reports_unexpected_errors_and_hangs(monkeypatch):
    """The harness itself can fail: a foreign exception and a hang are both findings."""
    def raises(data):
        raise IndexError("boom")

    monkeypatch.setattr(sys.modules[__name__], "exercise", raises)
    outcome, exc, _ = run_case(b"")
    assert outcome == "failed" and isinstance(exc, IndexError)

    def hangs(data):
        while True:
            pass

    monkeypatch.setattr(sys.modules[__name__], "CASE_SECONDS", 0.2)
    monkeypatch.setattr(sys.modules[__name__], "exercise", hangs)
    outcome, exc, _ = run_case(b"")
    assert outcome == "failed" and isinstance(exc, CaseTimeout)


# -- hypothesis ---------------------------------------------------------------------------------

HYPOTHESIS_EXAMPLES = 400 + 400
_SETTINGS = dict(deadline=None, derandomize=True, database=None, print_blob=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check(data: bytes) -> None:
    outcome, exc, tb = run_case(data)
    if exc is not None:
        raise AssertionError(f"{type(exc).__name__}: {exc}\n{tb}\ndata={data!r}")


@settings(max_examples=400, **_SETTINGS)
@given(root=st.one_of(st.integers(0, 96), st.integers(0, 2**32 - 1)), body=st.binary(max_size=400))
def test_random_bytes_behind_a_tflite_header(root, body):
    _check(struct.pack("<I", root) + b"TFL3" + body)


@settings(max_examples=400, **_SETTINGS)
@given(edits=st.lists(st.tuples(st.sampled_from(("soffsets", "vtables", "entries", "uoffsets", "lengths",
                                                  "scalars", "elements")),
                                st.integers(0, 10_000),
                                st.one_of(st.sampled_from(EXTREME_WORDS), st.integers(0, 2**32 - 1))),
                      min_size=1, max_size=4))
def test_structured_edits_of_the_feature_model(edits):
    data = bytearray(base_bytes("feature"))
    spots = hotspots("feature")
    for kind, index, value in edits:
        positions = getattr(spots, kind)
        p = positions[index % len(positions)]
        if kind in ("vtables", "entries"):
            _put(data, p, "<H", value & 0xFFFF)
        else:
            _put(data, p, "<I", value)
    _check(bytes(data))


# -- regressions: bugs this fuzzer found ---------------------------------------------------------


def _with_shape(shape) -> bytes:
    """add_fc with the constant ``c`` (16 bytes of float32) given another shape."""
    from dataclasses import replace

    model = builders.add_fc_model()
    sg = model.subgraphs[0]
    tensors = list(sg.tensors)
    tensors[1] = replace(tensors[1], shape=tuple(shape))
    return workbench.dump(replace(model, subgraphs=(replace(sg, tensors=tuple(tensors)),)))


@pytest.mark.parametrize("shape", [(-1, -4), (-2, -2), (-4, -1, 1)])
def test_tensor_data_refuses_negative_dimensions(shape):
    """Two negative dimensions multiply to the right element count; numpy's reshape then raised
    ValueError (found by the fuzzer: 'negate elements [0, 1] of vector at 692', add_fc seed 1)."""
    model = workbench.load(_with_shape(shape))  # loads: a negative dimension is only a note
    assert any("negative dimension" in n.message for n in model.load_notes)
    with pytest.raises(ModelError, match="negative dimension") as info:
        tensor_data(model, 0, 1)
    assert info.value.path == "model.subgraphs[0].tensors[1].shape"


def test_tensor_data_shape_product_does_not_wrap():
    """4 * 5 * 5581 * 8681 * 49477 * 384773 = 2**64 + 4, which int64 arithmetic wraps to 4 —
    the element count of the 16-byte buffer.  Validation refuses the shape; unvalidated, the
    helper must too (it used np.prod with int64 and then failed in reshape with ValueError)."""
    data = _with_shape((4, 5, 5581, 8681, 49477, 384773))
    with pytest.raises(ModelError, match="would need"):
        workbench.load(data)
    model = workbench.load(data, validate=False)
    with pytest.raises(ModelError, match="needs"):
        tensor_data(model, 0, 1)


def _aliased_index_vectors() -> tuple[bytes, int]:
    """The feature model's sparse tensor with an Int32Vector of segments and a Uint16Vector of
    indices whose ``values`` offset is redirected to the Int32Vector's vector (a legal FlatBuffer:
    the bytes are simply read twice, as int32 and as uint16)."""
    from dataclasses import replace

    from workbench.schema import Int32Vector, SparseIndexVector, Uint16Vector

    model = builders.feature_model()
    sg = model.subgraphs[0]
    tensors = list(sg.tensors)
    i = next(k for k, t in enumerate(tensors) if t.sparsity is not None)
    sp = tensors[i].sparsity
    dm = replace(sp.dim_metadata[1], array_segments=Int32Vector(values=(0, 70000, -1)),
                 array_indices_type=SparseIndexVector.Uint16Vector, array_indices=Uint16Vector(values=(1, 2, 3)))
    tensors[i] = replace(tensors[i], sparsity=replace(sp, dim_metadata=(sp.dim_metadata[0], dm)))
    data = bytearray(workbench.dump(replace(model, subgraphs=(replace(sg, tensors=tuple(tensors)),))))
    dm = workbench.load(bytes(data)).subgraphs[0].tensors[i].sparsity.dim_metadata[1]
    seg, idx = dm.array_segments.xray("values").offset, dm.array_indices.xray("values").offset
    target = seg + struct.unpack_from("<I", data, seg)[0]
    struct.pack_into("<I", data, idx, target - idx)
    return bytes(data), i


def test_vectors_sharing_bytes_are_read_with_their_own_element_type():
    """The reader memoised scalar vectors by (field name, position): Int32Vector.values and
    Uint16Vector.values share the name, so the uint16 vector came back as the int32 values
    (0, 70000, -1) and dump then failed with OverflowError."""
    import tflite

    data, i = _aliased_index_vectors()
    model = workbench.load(data)
    dm = model.subgraphs[0].tensors[i].sparsity.dim_metadata[1]
    assert dm.array_segments.values == (0, 70000, -1)
    generated = tflite.Model.GetRootAs(data, 0).Subgraphs(0).Tensors(i).Sparsity().DimMetadata(1)
    indices = tflite.Uint16Vector()
    indices.Init(data, generated.ArrayIndices().Pos)
    assert dm.array_indices.values == tuple(indices.ValuesAsNumpy().tolist()) == (0, 0, 4464)
    assert exercise(data) == "written"


if __name__ == "__main__":  # python tests/schema/test_fuzz.py BASE SEED: run one case, full traceback
    base, case = sys.argv[1], int(sys.argv[2])
    blob, recipe = mutate(base, case)
    print(f"{base} seed {case}: {recipe} ({len(blob)} bytes)")
    print(exercise(blob))
