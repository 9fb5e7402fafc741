"""The shipped notebooks' exercises: asked from the bank, never answered in a cell a learner can read.

Each notebook's questions, answers and reveals live in ``notebooks/solutions/<notebook>.md`` (its
bank, :class:`workbench.viz.exercise.Bank`); its cells only ``ask("key", ...)``.  Here:

* statically, for every notebook: no code cell holds ``answer=``, ``choices=``, ``Exercise(`` or the
  text of a literal answer from the bank; every exercise cell only asks and has its source hidden;
  every exercise of the bank is asked exactly once; the notebook ends with ``exercise.summary()``;
* in the notebook's own kernel: every exercise is answered with nothing, a wrong answer and its right
  answer (read from the bank), headless and through the widget, and the reveal opens only when it
  should; coding tasks are checked with the bank's solution and its wrong example; then the record
  (``exercise.summary()``) says right / wrong / revealed / not answered for exercises answered so.
"""

from __future__ import annotations

import ast
import json
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from helpers.notebook_runner import NOTEBOOKS, pin_python3_kernel, run_notebook
from workbench.viz.exercise import NONE, RIGHT, WRONG, Bank, Solutions

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


# ---------------------------------------------------------------------------------------------
# in the notebook's own kernel
# ---------------------------------------------------------------------------------------------
AUDIT = r'''
import enum, json
from workbench.viz import exercise as _exercise
from workbench.viz.exercise import Exercise, show

def _wrong(ex):
    e = ex.expected
    if ex.task is not None:
        return ex.wrong
    if ex.choices is not None:
        return next(label for label, value in ex.choices if not (value == e and type(value) is type(e)))
    if isinstance(e, (set, frozenset)):
        return "certainly not this"
    if isinstance(e, (list, tuple)):
        return ", ".join(_wrong_one(x) for x in e)
    return _wrong_one(e)

def _right(ex):
    e = ex.expected
    if ex.task is not None:
        return ex.solution
    if ex.choices is not None:
        return ex.shown
    if isinstance(e, (list, tuple)):
        return ", ".join(_right_one(x) for x in e)
    return _right_one(e)

def _right_one(e):
    if isinstance(e, (set, frozenset)):
        return sorted(map(show, e))[0]
    if isinstance(e, float):
        return repr(e)
    return show(e)

def _wrong_one(e):
    if isinstance(e, enum.Enum):
        return next(m for m in type(e) if m != e).name
    if isinstance(e, (int, float)) and not isinstance(e, bool):
        return str(e * 10 + 1000)
    return "certainly not this"

def _type(ex, answer):
    if ex.task is not None:       # the learner's function, as the notebook's namespace holds it
        if answer is None:
            globals().pop(ex.task, None)
        else:
            globals()[ex.task] = answer
    elif ex.choices is None:
        ex.input.value = "" if answer is None else answer
    else:
        ex.input.value = None if answer is None else [label for label, _ in ex.choices].index(answer)
    ex.check_button.click()
    return ex.feedback.value

_exercise.forget()
_seen, _asked, _report = set(), [], []
for _v in [*Out.values(), *globals().values()]:
    if isinstance(_v, Exercise) and id(_v) not in _seen:
        _seen.add(id(_v))
        _asked.append(_v)
_task_saved = {_v.task: globals().get(_v.task) for _v in _asked if _v.task}
for _v in _asked:
    _r = _right(_v)
    _report.append({
        "key": _v.key, "question": _v.question, "task": _v.task,
        "none": _v.check(None).status if _v.task is None else "none",
        "wrong": _v.check(_wrong(_v)).status, "right": _v.check(_r).status,
        "widget_none": _type(_v, None), "widget_wrong": _type(_v, _wrong(_v)),
        "hidden_after_wrong": not _v.revealed, "widget_right": _type(_v, _r),
        "revealed": _v.revealed,
        "reveal": "\n".join(str(d.get("text/plain", "")) for d, _ in _v.reveal().bundles()),
        "static": _v._repr_mimebundle_()["text/plain"],
    })
globals().update(_task_saved)
# the learner's record: fresh widgets, answered as a learner would
_exercise.forget()
_fresh = []
for _v in _asked[:4]:
    _fresh.append(type(_v)(_v.question, answer=_v.expected, choices=_v.choices, checker=_v.checker, key=_v.key,
                           task=_v.task, hint=_v.hint, solution=_v.solution))
    _fresh[-1].wrong = getattr(_v, "wrong", None)
_type(_fresh[0], _right(_fresh[0]))                                        # right
_type(_fresh[1], _wrong(_fresh[1])); _type(_fresh[1], _right(_fresh[1]))   # wrong, then right
if len(_fresh) > 2:
    _type(_fresh[2], _wrong(_fresh[2])); _fresh[2].show_button.click()     # wrong, then revealed
_record = _exercise.summary()
print("EXERCISE-AUDIT " + json.dumps({"report": _report, "record": json.loads(_record.to_json()),
                                      "html": _record._repr_html_()}))
'''


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_exercise_checks_its_bank_answer_reveals_and_lands_in_the_record(path, tmp_path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(new_code_cell(AUDIT))
    copy = tmp_path / path.name
    nbformat.write(nb, copy)
    done = run_notebook(copy, pin_python3_kernel(tmp_path / "jupyter", monkeypatch), tmp_path)
    text = "".join(o.get("text", "") for o in done.cells[-2].outputs if o.output_type == "stream")
    audit = json.loads(text.split("EXERCISE-AUDIT ", 1)[1])
    report = audit["report"]
    bank = bank_of(path)
    assert sorted(r["key"] for r in report) == sorted(bank.specs)
    for r in report:
        q = r["question"]
        assert (r["none"], r["wrong"], r["right"]) == (NONE, WRONG, RIGHT), q
        assert "✗" in r["widget_wrong"] and "✓" in r["widget_right"], q
        assert ("Answer first" in r["widget_none"]) if r["task"] is None else ("Write" in r["widget_none"]), q
        assert r["hidden_after_wrong"] and r["revealed"], q
        assert len(r["reveal"]) > 40, f"{q}: the reveal says next to nothing"
        assert "{{" not in r["reveal"], q
        assert q in r["static"] and r["reveal"][:40] not in r["static"], q
    # the record of the last notebook cell's kind: right, wrong (then right), revealed, not answered
    statuses = [row["status"] for row in audit["record"]["exercises"]]
    expected = ["right", "wrong", "revealed", "not answered"][:len(statuses)]
    assert statuses == expected, statuses
    counts = audit["record"]["counts"]
    assert counts["right"] == 1 and counts["wrong"] == 1
    assert audit["record"]["exercises"][1]["right_at_try"] == 2
    assert "wb-exercise-summary" in audit["html"] and "revealed" in audit["html"]
