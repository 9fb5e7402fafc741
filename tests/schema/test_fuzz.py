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
import signal
import struct
import sys
import time
import traceback
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

if __name__ == "__main__":  # run as a script: tests/ on sys.path (for the package helpers), as under pytest
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import workbench
from helpers import builders  # noqa: E402  (tests/ is on sys.path: tests/conftest.py, or the lines above)
from helpers.schema_fuzz import BUILT_BASES, EXTREME_WORDS, _put, base_bytes, hotspots, mutate
from workbench import LossyWriteError, ModelError
from workbench.schema import FlatTable, metadata, op_name, tensor_data

CASE_SECONDS = 5.0  # generous: a case takes milliseconds; only a hang gets near this

# base model → number of seeded cases per run (small models get most): 4500 seeded cases, plus
# HYPOTHESIS_EXAMPLES below.  The wake-word models bring more than one subgraph (CALL_ONCE's init
# graph, IF's branches), int8 per-channel quantization, VAR_HANDLE's strings and an empty [0] tensor.
CORPUS_BASES = {"sine_float": 1500, "hand_recrop": 300, "face_detection_short_range": 200,
                "microwakeword_hey_jarvis": 300, "openwakeword_hey_jarvis": 200}
CHUNK = 500  # cases per test, so xdist can spread them


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
