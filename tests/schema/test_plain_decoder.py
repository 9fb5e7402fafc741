"""load(..., plain=True): the readable field-by-field decoder gives what the generated decoders give —
the same model, the same byte positions behind every table, the same notes, the same errors."""

from __future__ import annotations

import pytest

from helpers import schema_fuzz
from workbench import ModelError
from workbench.schema.reader import load


def _origins(obj, out, seen):
    """Every table's (path, position, vtable, slot offsets) under ``obj``, depth first."""
    if id(obj) in seen:
        return out
    seen.add(id(obj))
    origin = getattr(obj, "__dict__", {}).get("_origin")
    if origin is not None:
        out.append(origin[:4])
    for v in getattr(obj, "__dict__", {}).values():
        if isinstance(v, tuple):
            for x in v:
                _origins(x, out, seen)
        elif hasattr(v, "__dict__") and not isinstance(v, type):
            _origins(v, out, seen)
    return out


def test_every_corpus_model_reads_the_same_with_the_plain_decoder(corpus_paths):
    for name, path in sorted(corpus_paths.items()):
        fast, plain = load(path), load(path, plain=True)
        assert fast == plain, name
        assert [str(n) for n in fast.load_notes] == [str(n) for n in plain.load_notes], name
        assert _origins(fast, [], set()) == _origins(plain, [], set()), name


@pytest.mark.parametrize("base", ["add_fc", "feature"])
def test_malformed_bytes_fail_the_same_way(base):
    """The schema fuzzer's mutations: both decoders accept the same files with the same notes, and refuse
    the others with the same error (message, FlatBuffer path, byte offset)."""
    for seed in range(300):
        data, how = schema_fuzz.mutate(base, seed)
        assert _outcome(data, False) == _outcome(data, True), (base, seed, how)


def _outcome(data: bytes, plain: bool):
    try:
        m = load(data, plain=plain)
    except ModelError as exc:
        return ("error", str(exc))
    return ("ok", m, tuple(str(n) for n in m.load_notes), tuple(_origins(m, [], set())))
