"""load → dump → load on every corpus model: same Model, stable bytes, same inference, same X-ray.

(a) ``load(dump(load(x))) == load(x)`` and the second generation is byte-identical to the first:
    ``dump(load(dump(m))) == dump(m)``.
(b) The re-written file runs in ai-edge-litert (in a child process, see ``litert_runner.py``) with
    bitwise-identical outputs to the original on the same seeded inputs.  Models LiteRT cannot run
    are listed in ``LITERT_CANNOT_RUN`` with the exact error; both files must fail with it.  A model
    whose stored input shape cannot run is resized first (``corpus.INPUT_SHAPES``) and a stateful one
    runs five invokes in a row (``litert_steps.py``).
(c) Field presence survives: for every table of the re-read model, every field (union type tags
    included) is stored exactly when it was stored in the original.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

import workbench
from helpers import builders, litert_runner, litert_steps
from workbench import corpus
from workbench.schema import BuiltinOptions, FlatTable, op_name, tensor_data
from workbench.schema.declare import UnionRef

# Models that ai-edge-litert (BUILTIN_WITHOUT_DEFAULT_DELEGATES resolver) cannot run, and why: each
# uses a MediaPipe custom op that only MediaPipe's own op resolver registers.  The exact error
# text LiteRT prints; both the original and the re-written file must fail with it.
LITERT_CANNOT_RUN = {
    "face_landmark_with_attention": (
        "Landmarks2TransformMatrix",
        "RuntimeError: Encountered unresolved custom op: Landmarks2TransformMatrix.",
    ),
    "selfie_segmentation": (
        "Convolution2DTransposeBias",
        "RuntimeError: Encountered unresolved custom op: Convolution2DTransposeBias.",
    ),
    "selfie_segmentation_landscape": (
        "Convolution2DTransposeBias",
        "RuntimeError: Encountered unresolved custom op: Convolution2DTransposeBias.",
    ),
}

BUILT = {"add_fc": builders.add_fc_bytes, "feature": builders.feature_bytes}


def iter_tables(obj: FlatTable, path: str = "model"):
    """(path, table) for ``obj`` and every table under it, in field order."""
    yield path, obj
    for attr, f in obj.__decl__.python_fields():
        if attr != f.name:  # a union's type tag; the value follows
            continue
        value = getattr(obj, attr)
        if isinstance(value, FlatTable):
            yield from iter_tables(value, f"{path}.{attr}")
        elif isinstance(value, tuple):
            for i, v in enumerate(value):
                if isinstance(v, FlatTable):
                    yield from iter_tables(v, f"{path}.{attr}[{i}]")


def presence(obj: FlatTable) -> dict[str, bool]:
    return {attr: obj.xray(attr).present for attr, _ in obj.__decl__.python_fields()}


# --------------------------------------------------------------------------------------------
# (a) equal models, stable bytes


def check_round_trip(data: bytes) -> tuple:
    original = workbench.load(data)
    first = workbench.dump(original)
    again = workbench.load(first)
    assert again == original, "load(dump(model)) differs from model"
    second = workbench.dump(again)
    assert second == first, f"second generation differs ({len(second)} vs {len(first)} bytes)"
    return original, again, first


def test_round_trip_keeps_the_model(corpus_model, model_bytes):
    original, again, first = check_round_trip(model_bytes)
    assert not again.load_notes
    # the re-written file is a FlatBuffer of about the same size (same data, alignment may differ)
    assert abs(len(first) - len(model_bytes)) < 0.01 * len(model_bytes) + 1024


@pytest.mark.parametrize("name", sorted(BUILT))
def test_round_trip_keeps_a_built_model(name):
    data = BUILT[name]()
    check_round_trip(data)
    assert workbench.dump(workbench.load(data)) == data  # our own output is already a fixed point


def test_round_trip_detects_a_changed_value(corpus_paths):
    """The equality the round trip relies on sees a single changed field deep in the model."""
    model = workbench.load(corpus_paths["sine_float"])
    again = workbench.load(workbench.dump(model))
    object.__setattr__(again.subgraphs[0].tensors[3], "name", "changed")
    assert again != model


# --------------------------------------------------------------------------------------------
# (c) field presence


def check_presence(data: bytes) -> int:
    original = workbench.load(data)
    again = workbench.load(workbench.dump(original))
    before, after = list(iter_tables(original)), list(iter_tables(again))
    assert [p for p, _ in before] == [p for p, _ in after]
    differences = []
    for (path, a), (_, b) in zip(before, after):
        pa, pb = presence(a), presence(b)
        differences += [f"{path}.{f}: present {pa[f]} → {pb[f]}" for f in pa if pa[f] != pb[f]]
    assert not differences, "\n".join(differences[:25])
    return len(before)


def test_round_trip_keeps_field_presence(corpus_model, model_bytes):
    assert check_presence(model_bytes) > 40


@pytest.mark.parametrize("name", sorted(BUILT))
def test_round_trip_keeps_field_presence_of_a_built_model(name):
    check_presence(BUILT[name]())


def _stored_defaults(model) -> int:
    """How many fields are stored in the file although they hold the schema default."""
    return sum(1 for _, table in iter_tables(model) for attr, f in table.__decl__.python_fields()
               if attr == f.name and not isinstance(f.type, UnionRef) and table.xray(attr).present
               and getattr(table, attr) == f.resolved_default())


def test_round_trip_keeps_stored_defaults(corpus_model, model_bytes):
    """Converters never store a default, so the corpus alone cannot show that a stored default
    survives.  Re-packed with ForceDefaults by the generated object API, every scalar and every
    union type tag (NONE included) is stored; dump must keep each of them."""
    data = builders.repack(model_bytes)
    assert _stored_defaults(workbench.load(data)) > 50
    check_round_trip(data)
    check_presence(data)


def test_union_type_tag_without_a_value_survives(corpus_paths):
    """An operator whose builtin_options_type is set but whose options table is absent (TFLite
    then uses zero-filled options): the tag is a stored value and must be written back."""
    def drop_options(model_t):
        model_t.subgraphs[0].operators[0].builtinOptions = None

    data = builders.repack(corpus_paths["sine_float"].read_bytes(), force_defaults=False, edit=drop_options)
    op = workbench.load(data).subgraphs[0].operators[0]
    assert op.builtin_options is None and op.builtin_options_type == BuiltinOptions.FullyConnectedOptions
    original, again, _ = check_round_trip(data)
    assert again.subgraphs[0].operators[0].builtin_options_type == BuiltinOptions.FullyConnectedOptions
    check_presence(data)


def test_presence_check_sees_a_defaulted_field(corpus_paths):
    """A field stored with its default value is 'present'; one left out is not — and they differ."""
    model = workbench.load(corpus_paths["sine_float"])
    stored = [(p, t) for p, t in iter_tables(model) if any(presence(t).values())]
    path, table = stored[0]
    field = next(f for f, present in presence(table).items() if present)
    rebuilt = type(table)(**{a: getattr(table, a) for a, _ in table.__decl__.python_fields()})
    assert rebuilt.present(field) is None  # built in code: no X-ray
    assert table.xray(field).present


# --------------------------------------------------------------------------------------------
# (b) inference in LiteRT


def _seed(name: str) -> int:
    return zlib.crc32(name.encode())


def compare_in_litert(original: Path, rewritten: Path, workdir: Path, name: str):
    inputs = workdir / "inputs.npz"
    a = litert_runner.run(original, inputs, workdir / "original_out.npz", seed=_seed(name))
    b = litert_runner.run(rewritten, inputs, workdir / "rewritten_out.npz") if a.ok else None
    return a, b


def assert_bitwise_equal(a: dict, b: dict) -> None:
    assert sorted(a) == sorted(b)
    for key in a:
        x, y = a[key], b[key]
        assert x.dtype == y.dtype and x.shape == y.shape, (key, x.dtype, x.shape, y.dtype, y.shape)
        assert np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"), f"{key} differs"
        assert x.tobytes() == y.tobytes(), f"{key} differs bitwise"


def _stepped_inputs(model_path: Path, name: str, count: int) -> list:
    """Seeded inputs for ``count`` invokes at the shapes ``corpus.INPUT_SHAPES`` gives (else stored)."""
    from workbench.interpreter import Interpreter

    it = Interpreter(model_path=str(model_path))
    shapes = corpus.INPUT_SHAPES.get(name) or [d["shape"] for d in it.get_input_details()]
    rng = np.random.default_rng(_seed(name))
    return [[litert_runner.make_input(rng, d["dtype"], shape) for d, shape in zip(it.get_input_details(), shapes)]
            for _ in range(count)]


@pytest.fixture(scope="module")
def litert_pairs(corpus_paths, tmp_path_factory) -> dict:
    """name → (original's result, re-written's result, inputs file) in LiteRT for every corpus model run on
    one input as stored (the others: ``_stepped_inputs``), all in one child process."""
    root = tmp_path_factory.mktemp("litert_pairs")
    names, items = [], []
    for name, path in sorted(corpus_paths.items()):
        if name in corpus.INPUT_SHAPES or name in corpus.STATEFUL:
            continue
        rewritten = root / f"{name}.rewritten.tflite"
        rewritten.write_bytes(workbench.dump(workbench.load(path)))
        inputs = root / f"{name}.inputs.npz"
        # a model LiteRT cannot run fails at allocation, before any input is made: the copy gets a seed too
        again = _seed(name) if name in LITERT_CANNOT_RUN else None
        items += [(path, inputs, root / f"{name}.original_out.npz", _seed(name)),
                  (rewritten, inputs, root / f"{name}.rewritten_out.npz", again)]
        names.append(name)
    results = litert_runner.run_batch(items)
    return {name: (results[2 * k], results[2 * k + 1], root / f"{name}.inputs.npz") for k, name in enumerate(names)}


def test_rewritten_model_runs_identically_in_litert(corpus_model, model_path, tmp_path, litert_pairs):
    rewritten = tmp_path / f"{corpus_model}.rewritten.tflite"
    rewritten.write_bytes(workbench.dump(workbench.load(model_path)))
    if corpus_model in corpus.INPUT_SHAPES or corpus_model in corpus.STATEFUL:
        # inputs resized before allocation / state carried over several invokes: both files run the
        # same steps on one interpreter each
        steps = _stepped_inputs(model_path, corpus_model, 5 if corpus_model in corpus.STATEFUL else 1)
        shapes = corpus.INPUT_SHAPES.get(corpus_model)
        a = litert_steps.run_steps(model_path.read_bytes(), steps, input_shapes=shapes)
        b = litert_steps.run_steps(rewritten.read_bytes(), steps, input_shapes=shapes)
        assert len(a) == len(b) == len(steps) and a[0]
        for x, y in zip(a, b):
            assert_bitwise_equal({f"output_{k}": v for k, v in enumerate(x)},
                                 {f"output_{k}": v for k, v in enumerate(y)})
        return
    a, b, inputs = litert_pairs[corpus_model]
    if corpus_model in LITERT_CANNOT_RUN:
        custom_op, message = LITERT_CANNOT_RUN[corpus_model]
        ops = {op_name(oc) for oc in workbench.load(model_path).operator_codes}
        assert custom_op in ops
        assert a.returncode == 1 and message in a.stderr, a.describe()
        # the re-written file fails the same way (inputs are never made: allocation fails first)
        assert b.returncode == 1 and message in b.stderr, b.describe()
        return
    assert a.ok, f"LiteRT could not run the original (add it to LITERT_CANNOT_RUN?):\n{a.describe()}"
    assert a.outputs
    with np.load(inputs) as z:
        assert z.files, "no inputs were made"
    assert b.ok, f"LiteRT could not run the re-written model:\n{b.describe()}"
    assert_bitwise_equal(a.outputs, b.outputs)


def test_built_model_runs_identically_in_litert(tmp_path):
    original = tmp_path / "add_fc.tflite"
    original.write_bytes(builders.add_fc_bytes())
    rewritten = tmp_path / "add_fc.rewritten.tflite"
    rewritten.write_bytes(workbench.dump(workbench.load(original)))
    a, b = compare_in_litert(original, rewritten, tmp_path, "add_fc")
    assert a.ok and b.ok, (a.describe(), b and b.describe())
    with np.load(tmp_path / "inputs.npz") as z:
        x = z["input_0"]
    model = builders.add_fc_model()
    c = np.frombuffer(bytes(model.buffers[1].data), "<f4")
    w = np.frombuffer(bytes(model.buffers[2].data), "<f4").reshape(3, 4)
    bias = np.frombuffer(bytes(model.buffers[3].data), "<f4")
    np.testing.assert_allclose(a.outputs["output_0"], (x + c) @ w.T + bias, rtol=1e-5)
    assert_bitwise_equal(a.outputs, b.outputs)


def test_litert_comparison_sees_a_changed_weight(corpus_paths, tmp_path):
    """The bitwise comparison can fail: change one weight and the outputs differ."""
    path = corpus_paths["sine_float"]
    data = bytearray(path.read_bytes())
    model = workbench.load(bytes(data))
    weights = next(tensor_data(model, 0, i) for i, t in enumerate(model.subgraphs[0].tensors)
                   if t.buffer and len(t.shape) == 2 and tensor_data(model, 0, i) is not None)
    offset = data.find(weights.tobytes())
    assert offset > 0
    data[offset:offset + 4] = np.float32(3.0).tobytes()
    changed = tmp_path / "changed.tflite"
    changed.write_bytes(bytes(data))
    a, b = compare_in_litert(path, changed, tmp_path, "sine_float")
    assert a.ok and b.ok
    with pytest.raises(AssertionError):
        assert_bitwise_equal(a.outputs, b.outputs)


def test_litert_runner_reports_an_abort_or_error(tmp_path):
    """A file LiteRT refuses gives a non-zero status and stderr, not an exception in the test."""
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x08\x00\x00\x00TFL3" + b"\x00" * 16)
    r = litert_runner.run(bad, tmp_path / "in.npz", tmp_path / "out.npz", seed=1)
    assert not r.ok and r.stderr
