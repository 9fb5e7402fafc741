"""workbench.viz.exercise: a bank read from markdown, coding tasks, and the learner's record."""

from __future__ import annotations

import json

import pytest

from workbench.viz import exercise
from workbench.viz.exercise import NONE, RIGHT, WRONG, Bank, BankError, Exercise

BANK = '''# 99 · A test notebook — solutions

The key.

```python
import numpy as np
```

## where — Where are the weights?

```python
question = "Where are the weights?"
choices = ["in the operator", "in a buffer"]
answer = "in a buffer"
hint = "Operators hold indices."
```

**In a buffer.** Reached through indices.

## count — How many fields?

```python
def question(table):
    return f"How many of the {len(table)} fields are stored?"
def answer(table):
    return int(np.count_nonzero(table))
hint = "Zeros are left out."
def values(table):
    return {"zeros": len(table) - int(np.count_nonzero(table))}
def views(table):
    return [f"a view of {len(table)} slots"]
```

**{{answer}}**, and {{zeros}} left out.

## double — Write `double(x)`

```python
question = "Write `double(x)`, which returns twice x."
task = "double"
def checker(fn, xs):
    got = [fn(x) for x in xs]
    return got == [2 * x for x in xs], f"double({xs[0]}) gave {got[0]}"
def solution(x):
    return 2 * x
def wrong(x):
    return x + 2
hint = "Multiply."
```

Twice x is `2 * x`.

## try-next — Answers to "Try next"

Plain reveal, no exercise.
'''


@pytest.fixture
def bank(tmp_path):
    path = tmp_path / "99_test.md"
    path.write_text(BANK, encoding="utf-8")
    exercise.forget()
    yield Bank(path)
    exercise.forget()


def test_a_bank_reads_exercises_from_python_blocks_and_keeps_plain_sections_as_reveals(bank):
    assert list(bank.specs) == ["where", "count", "double"]
    assert "try-next" in bank and "try-next" not in bank.specs
    assert bank.specs["where"].literal_answer == "in a buffer"
    assert bank.specs["count"].literal_answer is None and bank.specs["count"].needs == ("table",)
    assert bank["where"].startswith("```python")          # the section is the whole key, block included


def test_ask_binds_the_names_the_cell_passes_and_computes_question_answer_values_and_views(bank):
    ex = bank.ask("count", table=[3, 0, 1, 0])
    assert ex.question == "How many of the 4 fields are stored?" and ex.expected == 2
    assert ex.check("2").ok and not ex.check("3").ok
    text = ex.reveal().text
    assert "**2**, and 2 left out." in text and "a view of 4 slots" in text
    assert "```python" not in text                         # the block is the key, not part of the reveal


def test_ask_names_what_is_missing_and_which_keys_exist(bank):
    with pytest.raises(BankError, match=r"ask\('count'\) needs table="):
        bank.ask("count")
    with pytest.raises(BankError, match="no exercise 'nope'.*where, count, double"):
        bank.ask("nope")


def test_a_block_that_does_not_run_or_sets_no_question_is_named_with_its_line(tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_text("# t\n\n## k — t\n\n```python\nquestion = (\n```\n\nreveal\n", encoding="utf-8")
    with pytest.raises(BankError, match=r"exercise 'k' \(line 3\) does not run: SyntaxError"):
        Bank(bad)
    bad.write_text("# t\n\n## k — t\n\n```python\nanswer = 1\n```\n\nreveal\n", encoding="utf-8")
    with pytest.raises(BankError, match="sets no `question`"):
        Bank(bad)


def test_a_coding_task_checks_the_learners_function_and_shows_a_solution_after(bank):
    ex = bank.ask("double", xs=[1, 5, -3])
    assert ex.check(None).status == NONE and "Write the function `double`" in ex.check(None).text
    assert ex.check(ex.solution).status == RIGHT
    wrong = ex.check(ex.wrong)
    assert wrong.status == WRONG and "double(1) gave 3" in wrong.text and "Multiply." in wrong.text

    def raises(x):
        raise ZeroDivisionError("oops")

    def stub(x):
        raise NotImplementedError

    assert "raised ZeroDivisionError: oops" in ex.check(raises).text
    assert ex.check(stub).status == NONE and "not implemented" in ex.check(stub).text
    assert ex.check(3).status == "invalid"
    assert "def double(x):\n    return 2 * x" in ex.reveal().text     # the solution, under the task's name


def test_a_coding_task_reads_the_function_from_the_notebook_namespace(bank, monkeypatch):
    shell = pytest.importorskip("IPython.testing.globalipapp").get_ipython()
    ex = bank.ask("double", xs=[2])
    monkeypatch.setitem(shell.user_ns, "double", lambda x: x * 2)
    ex.check_button.click()
    assert "✓" in ex.feedback.value and ex.revealed
    monkeypatch.setitem(shell.user_ns, "double", lambda x: x)
    assert ex.check().status == WRONG


def test_the_record_says_right_wrong_revealed_and_not_answered(bank):
    where, count = bank.ask("where"), bank.ask("count", table=[1, 0])
    task, other = bank.ask("double", xs=[1]), Exercise("Zero point?", answer=-128, key="zp")
    where.check("in a buffer")                                  # right at the first try
    count.check("5")
    count.check("1")                                            # wrong, then right
    task.check(task.wrong)
    task.input and task.show_button.click()                     # wrong, then "show the answer"
    record = exercise.summary()
    assert [(r.key, r.status) for r in record.rows] == [("where", "right"), ("count", "wrong"),
                                                        ("double", "revealed"), ("zp", "not answered")]
    assert record.counts == {"right": 1, "wrong": 1, "revealed": 1, "not answered": 1}
    data = json.loads(record.to_json())
    assert data["exercises"][1] == {"key": "count", "bank": "99_test", "question": "How many of the 2 fields are "
                                    "stored?", "status": "wrong", "tries": 2, "right_at_try": 2, "revealed": False}
    assert "right at try 2" in repr(record) and "shown after 1 wrong tries" in repr(record)
    html = record._repr_html_()
    assert html.count("<tr>") == 5 and "not answered" in html
    # unreadable and empty answers are not tries; the record is a snapshot
    other.check("minus a lot")
    other.check("")
    assert exercise.summary().rows[3].tries == 0
    other.check("-128")
    assert record.rows[3].status == "not answered" and exercise.summary().rows[3].status == "right"


def test_running_a_cell_again_keeps_counting_on_the_same_line_and_summary_filters_by_bank(bank):
    bank.ask("where").check("in the operator")
    bank.ask("where").check("in a buffer")
    Exercise("Other?", answer=1).check("1")
    rows = exercise.summary(bank="99_test").rows
    assert [(r.key, r.tries, r.status) for r in rows] == [("where", 2, "wrong")]
    assert len(exercise.summary().rows) == 2
