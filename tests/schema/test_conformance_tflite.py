"""Every value our reader returns equals what the flatc-generated readers return, on real models.

Two generated readers serve as references:

* ``tflite`` (PyPI ``tflite`` 2.18): one module per table.  Where it predates a table or field
  (``Tensor.external_buffer``, ``BlockwiseQuantization``, ``FullyConnectedOptions.quant_spec``...),
  that one field is read with the newer reader instead and the test records the fallback.
* ``ai_edge_litert.schema_py_generated``: the newest schema LiteRT ships.

The walk is generic and driven by our declarations: for each table we decoded, for each declared
field, it calls the generated accessor of the same name (CamelCase: ``dilation_w_factor`` →
``DilationWFactor()``, vectors via ``…IsNone/…Length/…AsNumpy/…(j)``, tables and unions by
re-initialising the generated class at the position the generated reader reached).  So every field
of every builtin options table is compared without listing it here, and a table that only one
model has (the sparse model's ``DimensionMetadata``) is still compared field by field.
Deprecated fields have no generated accessor; they are read with the ``flatbuffers`` runtime's
``Table``.  Field *presence* (the X-ray's present/defaulted) is compared with that ``Table``'s
vtable lookup as well.

The corpus is float-only (no quantization values) and no converter stores default values, so
two more sources feed the same walk: the tiny feature model of ``builders.py`` (quantization,
custom quantization, CSR index vectors of each kind, ``builtin_options_2``, a signature) and
corpus models re-packed by the generated object API with ForceDefaults.

Since the walk is driven by our declarations, ``test_schema_declarations.py`` is what guarantees
that no generated field is missing from them; here, ``REQUIRED`` pins the fields the walk must
have reached on every model.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass, field

import ai_edge_litert.schema_py_generated as litert_gen
import numpy as np
import pytest
import tflite
from flatbuffers.table import Table as FbTable

import workbench
from workbench.schema import TABLES, UNIONS, FlatTable, UnknownTable, builtin_code
from workbench.schema.declare import Bytes, Enum, Scalar, String, TableRef, UnionRef, Vector

READERS = {"tflite": (tflite, litert_gen), "litert": (litert_gen, None)}

# The ``tflite`` package hand-edits one generated accessor: its ``OperatorCode.BuiltinCode()``
# returns the *effective* code (the deprecated int8 field when the int32 field is below 127), not
# the stored field.  There it is compared with our effective code, ``schema.builtin_code``, and
# the stored field with a plain flatbuffers read.
EFFECTIVE_CODE = {("tflite", "OperatorCode", "builtin_code")}

# Tables every corpus model has; they must be reached.
ALWAYS = {"Model", "OperatorCode", "SubGraph", "Tensor", "Operator", "Buffer"}

# (table, attribute) pairs the walk must compare whenever the model has that table (``ALWAYS``
# lists the tables every model has); the sparse model must also reach the sparsity tables.
REQUIRED = {
    ("Model", a) for a in ("version", "operator_codes", "subgraphs", "description", "buffers",
                           "metadata", "signature_defs", "metadata_buffer")
} | {
    ("OperatorCode", a) for a in ("deprecated_builtin_code", "custom_code", "version", "builtin_code")
} | {
    ("SubGraph", a) for a in ("tensors", "inputs", "outputs", "operators", "name")
} | {
    ("Tensor", a) for a in ("shape", "type", "buffer", "name", "quantization", "is_variable",
                            "sparsity", "shape_signature", "has_rank", "variant_tensors")
} | {
    ("Operator", a) for a in ("opcode_index", "inputs", "outputs", "builtin_options_type",
                              "builtin_options", "custom_options", "custom_options_format",
                              "mutating_variable_inputs", "intermediates",
                              "large_custom_options_offset", "large_custom_options_size",
                              "builtin_options_2_type", "builtin_options_2")
} | {
    ("Buffer", a) for a in ("data", "offset", "size")
} | {
    ("Metadata", a) for a in ("name", "buffer")
}
REQUIRED_SPARSE = {
    ("SparsityParameters", a) for a in ("traversal_order", "block_map", "dim_metadata")
} | {
    ("DimensionMetadata", a) for a in ("format", "dense_size", "array_segments_type", "array_segments",
                                       "array_indices_type", "array_indices")
} | {("Uint8Vector", "values")}
REQUIRED_QUANT = {
    ("QuantizationParameters", a) for a in ("min", "max", "scale", "zero_point", "details_type",
                                            "details", "quantized_dimension")
}


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def _accessors(cls) -> dict[str, str]:
    """normalised field name → generated accessor name."""
    return {_norm(n): n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}


@dataclass
class Mismatch:
    path: str
    ours: object
    theirs: object
    reader: str

    def __str__(self) -> str:
        return f"{self.path}: ours={_short(self.ours)} {self.reader}={_short(self.theirs)}"


def _short(v, limit=120):
    text = repr(bytes(v) if isinstance(v, memoryview) else v)
    return text if len(text) <= limit else text[:limit] + "…"


def _same_float(a: float, b: float, fmt: str) -> bool:
    return struct.pack(fmt, a) == struct.pack(fmt, b)  # bitwise: NaN payloads and -0.0 count


def _same_array(ours: tuple, theirs, scalar: Scalar) -> bool:
    """Same dtype, same length, same bytes (bitwise for floats)."""
    mine = np.asarray(ours, dtype=scalar.dtype) if len(ours) else np.zeros(0, scalar.dtype)
    theirs = np.asarray(theirs)
    return theirs.dtype == mine.dtype and theirs.shape == mine.shape and theirs.tobytes() == mine.tobytes()


@dataclass
class Walker:
    """Compares one decoded Model against one generated reader (with an optional fallback)."""

    buf: bytes
    primary: object
    fallback: object | None
    label: str
    mismatches: list = field(default_factory=list)
    compared: Counter = field(default_factory=Counter)  # (table, attr) → values compared
    fallbacks: set = field(default_factory=set)  # (table, attr) read by the fallback reader
    raw: set = field(default_factory=set)  # (table, attr) read through the flatbuffers table
    tables_seen: set = field(default_factory=set)
    _acc_cache: dict = field(default_factory=dict)
    _seen: set = field(default_factory=set)

    # -- generated objects -----------------------------------------------------------------
    def _gen(self, module, table: str, pos: int):
        cls = getattr(module, table, None)
        if not isinstance(cls, type):
            return None
        obj = cls()
        obj.Init(self.buf, pos)
        return obj

    def _accessor(self, table: str, attr: str, pos: int):
        """(bound accessors by normalised name, reader label) for ``attr``, or None."""
        for module, label in ((self.primary, self.label), (self.fallback, "fallback")):
            if module is None:
                continue
            key = (id(module), table)
            if key not in self._acc_cache:
                cls = getattr(module, table, None)
                self._acc_cache[key] = _accessors(cls) if isinstance(cls, type) else None
            names = self._acc_cache[key]
            if names and _norm(attr) in names:
                return self._gen(module, table, pos), names, label
        return None

    # -- the walk ----------------------------------------------------------------------------
    def fail(self, path, ours, theirs, reader=None):
        self.mismatches.append(Mismatch(path, ours, theirs, reader or self.label))

    def walk(self, obj, table: str, pos: int, path: str) -> None:
        if not isinstance(obj, FlatTable) or type(obj).__name__ != table:
            self.fail(path, type(obj).__name__, table)
            return
        if obj.origin is None or obj.origin.pos != pos:
            self.fail(f"{path} (table position)", obj.origin and obj.origin.pos, pos)
            return
        if (table, pos) in self._seen:  # FlatBuffers may share a table; compare it once
            return
        self._seen.add((table, pos))
        self.tables_seen.add(table)
        tab = FbTable(self.buf, pos)
        for attr, f in TABLES[table].python_fields():
            fpath = f"{path}.{attr}"
            ours = getattr(obj, attr)
            slot = f.id if attr != f.name else f.value_slot
            # presence (X-ray) against the generated table's own vtable lookup
            if obj.xray(attr).present != (tab.Offset(4 + 2 * slot) != 0):
                self.fail(f"{fpath} (present)", obj.xray(attr).present, tab.Offset(4 + 2 * slot) != 0)
            found = self._accessor(table, attr, pos)
            if found is None:
                if not f.deprecated:
                    self.fail(f"{fpath} (no generated accessor)", ours, None)
                    continue
                self.raw.add((table, attr))
                self._compare_raw(ours, f, tab, fpath)
            else:
                gobj, names, label = found
                if label == "fallback":
                    self.fallbacks.add((table, attr))
                is_tag = attr != f.name
                if (label, table, attr) in EFFECTIVE_CODE:
                    self._compare_raw(ours, f, tab, fpath)
                    theirs = getattr(gobj, names[_norm(attr)])()
                    if int(builtin_code(obj)) != theirs:
                        self.fail(f"{fpath} (effective code)", builtin_code(obj), theirs, label)
                else:
                    self._compare(ours, f.type, is_tag, gobj, names, _norm(attr), fpath, label)
            self.compared[(table, attr)] += 1

    def _compare_raw(self, ours, f, tab: FbTable, fpath: str) -> None:
        o = tab.Offset(4 + 2 * f.id)
        if isinstance(f.type, String):
            theirs = tab.String(o + tab.Pos) if o else None
            if (ours.encode("utf-8", "surrogateescape") if ours is not None else None) != theirs:
                self.fail(fpath, ours, theirs, "flatbuffers")
        elif isinstance(f.type, (Scalar, Enum)):
            scalar = f.type.scalar if isinstance(f.type, Enum) else f.type
            theirs = tab.Get(scalar.flags, o + tab.Pos) if o else f.resolved_default()
            if ours != theirs:
                self.fail(fpath, ours, theirs, "flatbuffers")
        else:  # pragma: no cover - no such deprecated field in the schema
            raise AssertionError(f"{fpath}: raw comparison of {f.type!r} not written")

    def _compare(self, ours, t, is_tag, gobj, names, key, fpath, label) -> None:
        acc = getattr(gobj, names[key])
        if is_tag:  # a union's type byte
            theirs = acc()
            if int(ours) != theirs:
                self.fail(fpath, ours, theirs, label)
            return
        if isinstance(t, Scalar):
            theirs = acc()
            if t.name in ("float", "double"):
                ok = _same_float(ours, theirs, "<f" if t.name == "float" else "<d")
            elif t.name == "bool":
                ok = ours is bool(theirs) and isinstance(ours, bool)
            else:
                ok = ours == theirs and isinstance(ours, int)
            if not ok:
                self.fail(fpath, ours, theirs, label)
        elif isinstance(t, Enum):
            theirs = acc()
            if int(ours) != theirs:
                self.fail(fpath, ours, theirs, label)
        elif isinstance(t, String):
            theirs = acc()
            mine = None if ours is None else ours.encode("utf-8", "surrogateescape")
            if mine != theirs:
                self.fail(fpath, ours, theirs, label)
        elif isinstance(t, Bytes):
            absent = getattr(gobj, names[key + "isnone"])()
            if absent != (ours is None):
                self.fail(f"{fpath} (absent)", ours, None if absent else "present", label)
            elif not absent:
                theirs = getattr(gobj, names[key + "asnumpy"])()
                if not isinstance(ours, memoryview) or bytes(ours) != np.asarray(theirs).tobytes():
                    self.fail(fpath, ours, theirs, label)
        elif isinstance(t, TableRef):
            theirs = acc()
            if (theirs is None) != (ours is None):
                self.fail(fpath, ours, theirs, label)
            elif theirs is not None:
                self.walk(ours, t.name, theirs._tab.Pos, fpath)
        elif isinstance(t, UnionRef):
            theirs = acc()  # a flatbuffers Table positioned at the member, or None
            if (theirs is None) != (ours is None):
                self.fail(fpath, ours, theirs, label)
            elif theirs is not None:
                tag = int(getattr(gobj, names[key + "type"])())
                member = UNIONS[t.name].members.get(tag)
                if isinstance(ours, UnknownTable):
                    if member is not None or ours.offset != theirs.Pos:
                        self.fail(fpath, ours, (tag, theirs.Pos), label)
                else:
                    self.walk(ours, member, theirs.Pos, fpath)
        elif isinstance(t, Vector):
            self._compare_vector(ours, t.element, gobj, names, key, fpath, label)
        else:  # pragma: no cover
            raise AssertionError(f"{fpath}: unknown declared type {t!r}")

    def _compare_vector(self, ours, e, gobj, names, key, fpath, label) -> None:
        absent = getattr(gobj, names[key + "isnone"])()
        if absent != (ours is None):
            self.fail(f"{fpath} (absent)", ours, None if absent else "present", label)
            return
        if absent:
            return
        n = getattr(gobj, names[key + "length"])()
        if not isinstance(ours, tuple) or len(ours) != n:
            self.fail(f"{fpath} (length)", ours if not isinstance(ours, tuple) else len(ours), n, label)
            return
        item = getattr(gobj, names[key])
        if isinstance(e, (Scalar, Enum)):
            scalar = e.scalar if isinstance(e, Enum) else e
            theirs = getattr(gobj, names[key + "asnumpy"])() if n else np.zeros(0, scalar.dtype)
            if isinstance(e, Enum):
                ok = [int(v) for v in ours] == np.asarray(theirs).tolist()
            elif scalar.name == "bool":
                ok = all(isinstance(v, bool) for v in ours) and list(ours) == np.asarray(theirs).tolist()
            else:
                ok = _same_array(ours, theirs, scalar)
            if not ok:
                self.fail(fpath, ours, theirs, label)
            # the element accessor too (first and last), not only the numpy view
            for j in {0, n - 1} if n else ():
                if isinstance(e, Scalar) and scalar.name in ("float", "double"):
                    same = _same_float(ours[j], item(j), "<f" if scalar.name == "float" else "<d")
                else:
                    same = int(ours[j]) == int(item(j))
                if not same:
                    self.fail(f"{fpath}[{j}]", ours[j], item(j), label)
        elif isinstance(e, String):
            for j in range(n):
                if ours[j].encode("utf-8", "surrogateescape") != item(j):
                    self.fail(f"{fpath}[{j}]", ours[j], item(j), label)
        elif isinstance(e, TableRef):
            for j in range(n):
                self.walk(ours[j], e.name, item(j)._tab.Pos, f"{fpath}[{j}]")
        else:  # pragma: no cover
            raise AssertionError(f"{fpath}: unknown vector element {e!r}")


def compare_model(data: bytes, reader: str) -> Walker:
    primary, fallback = READERS[reader]
    model = workbench.load(data)
    gmodel = primary.Model.GetRootAs(data, 0)
    walker = Walker(data, primary, fallback, reader)
    walker.walk(model, "Model", gmodel._tab.Pos, "model")
    return walker


def _report(walker: Walker, limit: int = 25) -> str:
    lines = [str(m) for m in walker.mismatches[:limit]]
    more = len(walker.mismatches) - limit
    return "\n".join(lines + ([f"... and {more} more"] if more > 0 else []))


# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", sorted(READERS))
def test_reader_matches_generated_reader(corpus_model, model_bytes, reader):
    walker = compare_model(model_bytes, reader)
    assert not walker.mismatches, f"{len(walker.mismatches)} mismatches against {reader}:\n{_report(walker)}"
    assert ALWAYS <= walker.tables_seen
    missing = {(t, a) for t, a in REQUIRED if t in walker.tables_seen} - set(walker.compared)
    assert not missing, f"the walk never reached {sorted(missing)}"
    model = workbench.load(model_bytes)
    if model.metadata:
        assert "Metadata" in walker.tables_seen
    n_tensors = sum(len(sg.tensors) for sg in model.subgraphs)
    assert walker.compared[("Tensor", "shape")] == n_tensors
    assert sum(walker.compared.values()) > 11 * n_tensors
    if reader == "litert":
        # the newest reader has every field we declare except the deprecated ones
        assert not walker.fallbacks
        assert all(TABLES[t].field(a).deprecated for t, a in walker.raw)
    else:
        # tflite 2.18 itself read the core fields; only newer fields came from the fallback
        assert not walker.fallbacks & REQUIRED


def test_sparse_model_reaches_sparsity_tables(corpus_paths):
    walker = compare_model(corpus_paths["face_detection_full_range_sparse"].read_bytes(), "tflite")
    assert not walker.mismatches, _report(walker)
    missing = REQUIRED_SPARSE - set(walker.compared)
    assert not missing, f"the sparse model did not reach {sorted(missing)}"


def test_quantization_tables_are_compared(corpus_paths):
    """The corpus is float-only: its QuantizationParameters tables are empty (no scale, no min).
    Their (absent) fields are still compared here; the built feature model carries values."""
    walker = compare_model(corpus_paths["pose_detection"].read_bytes(), "tflite")
    assert not walker.mismatches, _report(walker)
    assert walker.compared[("QuantizationParameters", "scale")] == 442
    assert not REQUIRED_QUANT - set(walker.compared)


def test_built_feature_model_matches_generated_readers():
    """The tiny feature model reaches tables the corpus lacks (custom quantization, Int32Vector,
    builtin_options_2, signatures) — through our writer, so this checks the writer too."""
    from helpers import builders

    data = builders.feature_bytes()
    for reader in READERS:
        walker = compare_model(data, reader)
        assert not walker.mismatches, _report(walker)
        for needed in [("CustomQuantization", "custom"), ("Int32Vector", "values"), ("Uint8Vector", "values"),
                       ("Uint16Vector", "values"),
                       ("StablehloConcatenateOptions", "dimension"), ("SignatureDef", "signature_key"),
                       ("TensorMap", "tensor_index"), ("SignatureDef", "deprecated_tag"),
                       *REQUIRED_QUANT, *(REQUIRED_SPARSE - {("Uint8Vector", "values")})]:
            assert needed in walker.compared, needed


@pytest.mark.parametrize("name", ["sine_float", "hand_recrop", "face_detection_full_range_sparse"])
def test_model_with_stored_defaults_matches_generated_readers(corpus_paths, name):
    """Re-packed with ForceDefaults, every default is stored: presence (the X-ray) then differs
    from "value != default", and must still agree with the generated table's vtable."""
    from helpers import builders

    data = builders.repack(corpus_paths[name].read_bytes())
    for reader in READERS:
        walker = compare_model(data, reader)
        assert not walker.mismatches, _report(walker)


def test_walker_reports_a_wrong_value(corpus_paths):
    """The comparison can fail: a reader that returned a different value is caught, with its path."""
    data = corpus_paths["sine_float"].read_bytes()
    model = workbench.load(data)
    t = model.subgraphs[0].tensors[1]
    object.__setattr__(t, "shape", tuple(d + 1 for d in t.shape))  # pretend our reader got it wrong
    walker = Walker(data, tflite, litert_gen, "tflite")
    walker.walk(model, "Model", tflite.Model.GetRootAs(data, 0)._tab.Pos, "model")
    paths = [m.path for m in walker.mismatches]
    assert "model.subgraphs[0].tensors[1].shape" in paths
    assert all(p.startswith("model.subgraphs[0].tensors[1].shape") for p in paths), paths
