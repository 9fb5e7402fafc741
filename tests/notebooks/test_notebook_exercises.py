"""The shipped notebooks' exercises: asked from the bank, never answered in a cell a learner can read.

Each notebook's questions, answers and reveals live in ``notebooks/solutions/<notebook>.md`` (its
bank, :class:`workbench.viz.exercise.Bank`); its cells only ``ask("key", ...)``.  Here:

* statically, for every notebook: no code cell holds ``answer=``, ``choices=``, ``Exercise(`` or the
  text of a literal answer from the bank; every exercise cell only asks and has its source hidden;
  every exercise of the bank is asked exactly once; the notebook ends with ``exercise.summary()``;
* in the notebook's own kernel (tests/notebooks/test_notebooks.py, on the same run as the headless
  test, with tests/helpers/exercise_audit.py): every exercise answered with nothing, a wrong answer and
  its right answer, and the learner's record.
"""

from __future__ import annotations

import ast
import re

import nbformat
import pytest

from helpers.notebook_runner import NOTEBOOKS
from workbench.viz.exercise import Bank, Solutions

IDS = [p.stem for p in NOTEBOOKS]


def bank_of(path) -> Bank:
    return Bank(path.parent / "solutions" / f"{path.stem}.md")


def code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def asked_keys(source: str) -> list[str]:
    return re.findall(r"""\bask\(\s*["']([\w-]+)["']""", source)


def literal_answers(bank: Bank) -> list[str]:
    """The texts a cell must not contain: each literal answer as it reads (a choice by its label)."""
    texts = []
    for spec in bank.specs.values():
        answer = spec.literal_answer
        if answer is None or isinstance(answer, bool):
            continue
        choices = spec.fields.get("choices")
        if isinstance(choices, (list, tuple)):
            for choice in choices:
                label, value = choice if isinstance(choice, tuple) else (choice, choice)
                if value == answer or label == answer:
                    texts.append(str(label))
        values = answer if isinstance(answer, (list, tuple, set, frozenset)) else [answer]
        texts += [str(v) for v in values if isinstance(v, str) and len(str(v)) >= 4]
        texts += [str(v) for v in values if isinstance(v, (int, float)) and len(str(v)) >= 3]
    return texts


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_code_cell_gives_an_answer_away(path):
    bank = bank_of(path)
    forbidden = literal_answers(bank)
    for k, cell in enumerate(code_cells(path)):
        src = cell.source
        for word in ("answer=", "choices=", "Exercise("):
            assert word not in src, f"{path.name} code cell {k}: contains {word!r}"
        for text in forbidden:
            pattern = r"(?<![\w.])" + re.escape(text) + r"(?![\w.])"
            assert not re.search(pattern, src, re.I), f"{path.name} code cell {k}: shows the answer {text!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_exercise_cell_only_asks_and_hides_its_source(path):
    cells = code_cells(path)
    asking = [c for c in cells if asked_keys(c.source)]
    assert asking, f"{path.name}: no exercise"
    for cell in asking:
        assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, \
            f"{path.name}: the cell {cell.source[:50]!r} does not hide its source"
        tree = ast.parse(cell.source)
        for node in tree.body:  # `ask(...)`, or `name = ask(...)` then `name`
            value = node.value if isinstance(node, (ast.Assign, ast.Expr)) else None
            call_ok = isinstance(value, ast.Call) and getattr(value.func, "id", "") == "ask"
            name_ok = isinstance(node, ast.Expr) and isinstance(value, ast.Name)
            assert call_ok or name_ok, f"{path.name}: the exercise cell {cell.source[:60]!r} does more than ask"
    hidden_elsewhere = [c.source[:40] for c in cells if c not in asking
                        and c.metadata.get("jupyter", {}).get("source_hidden")]
    assert not hidden_elsewhere, f"{path.name}: code a learner should read is hidden: {hidden_elsewhere}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_exercise_of_the_bank_is_asked_once_and_the_notebook_ends_with_the_record(path):
    bank = bank_of(path)
    cells = code_cells(path)
    asked = [key for c in cells for key in asked_keys(c.source)]
    assert sorted(asked) == sorted(bank.specs), f"{path.name}: asked {asked}, the bank has {list(bank.specs)}"
    assert cells[-1].source.strip() == "exercise.summary()", f"{path.name}: the last code cell is not the record"
    top = nbformat.read(path, as_version=4).cells[0].source
    assert "../docs/instructors.md" in top and "../docs/glossary.md" in top, \
        f"{path.name}: the top cell links neither the instructor pack nor the glossary"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_each_notebook_states_its_question_and_ends_with_what_you_learned(path):
    nb = nbformat.read(path, as_version=4)
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert re.search(r"\*\*The question( of this notebook)?:\*\*", markdown[0]), "the notebook's question, first"
    assert not [t[:60] for t in markdown if "**Reveal" in t], "a reveal in plain markdown, under its question"
    heads = [line for t in markdown for line in t.splitlines() if line.startswith("## ")]
    assert all(t.startswith(h) for h in heads for t in markdown if h in t.splitlines()), "a heading inside a cell"
    assert "## What you learned" in heads[-2:] and heads[-1] in ("## What you learned", "## Try next")
    closing = "\n".join(markdown[[i for i, t in enumerate(markdown) if t.startswith("## What you learned")][-1]:])
    assert "try next" in closing.lower(), "no 'Try next' after 'What you learned'"
    try_next = closing[closing.lower().index("try next"):]
    numbered = [int(h[3:].split(".")[0]) for h in heads if h[3:4].isdigit()]
    assert numbered == list(range(1, len(numbered) + 1)), f"sections numbered {numbered}"
    solutions = Solutions(path.parent / "solutions" / f"{path.stem}.md")
    assert "try-next" in solutions or "?" not in try_next, "'Try next' asks, and the solutions do not answer"
