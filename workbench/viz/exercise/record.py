"""The learner's record: which exercises were answered, right at the first try, or revealed.

Every :class:`~workbench.viz.exercise.Exercise` made in this Python process writes to one record,
keyed by the exercise's key (its bank key, or its question).  Running a cell again makes a new widget
for the same key and keeps counting on the same line.  The record lives in the kernel only: nothing is
written to disk unless the learner saves ``summary().to_json()`` somewhere themselves::

    from workbench.viz import exercise
    exercise.summary()                 # a small table: one row per exercise, in the order they were asked
    exercise.summary().to_json()       # the same as a JSON string, to paste into a course form
    exercise.summary().counts          # {"right": 3, "wrong": 1, "revealed": 1, "not answered": 2}

A row's status is one of:

* ``right``: the first answer given was right;
* ``wrong``: the first answer was wrong (the row says whether a later one was right, and after how many);
* ``revealed``: the answer was shown before a right answer was given;
* ``not answered``: no answer checked yet.

Answers that cannot be read ("two-ish" for a number) and empty ones do not count as tries.
"""

from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass

__all__ = ["Attempts", "Summary", "summary", "attempts", "forget"]

RIGHT, WRONG, REVEALED, NOT_ANSWERED = "right", "wrong", "revealed", "not answered"
STATUSES = (RIGHT, WRONG, REVEALED, NOT_ANSWERED)
_STYLE = {RIGHT: "#1b5e20", WRONG: "#b71c1c", REVEALED: "#8d6e00", NOT_ANSWERED: "#555"}


@dataclass
class Attempts:
    """What the learner did with one exercise."""

    key: str
    question: str
    bank: str = ""              # the bank (notebook) the exercise came from, if any
    tries: int = 0              # answers that got a verdict (right or wrong)
    first: str = ""             # the first verdict: "right" or "wrong"
    solved_at: int = 0          # the try that was right (0: none yet)
    revealed: bool = False      # the answer was shown before a right answer

    def checked(self, right: bool) -> None:
        self.tries += 1
        if not self.first:
            self.first = RIGHT if right else WRONG
        if right and not self.solved_at:
            self.solved_at = self.tries

    def shown(self) -> None:
        """The reveal was opened without a right answer (the "Show the answer" button)."""
        if not self.solved_at:
            self.revealed = True

    @property
    def status(self) -> str:
        if self.first == RIGHT:
            return RIGHT
        if self.revealed:
            return REVEALED
        if self.first == WRONG:
            return WRONG
        return NOT_ANSWERED

    @property
    def note(self) -> str:
        if self.status == WRONG:
            return f"right at try {self.solved_at}" if self.solved_at else f"{self.tries} tries, not right yet"
        if self.status == REVEALED:
            return f"shown after {self.tries} wrong tries" if self.tries else "shown without an answer"
        return ""


_RECORD: dict[str, Attempts] = {}


def attempts(key: str, question: str, bank: str = "") -> Attempts:
    """The line of the record for ``key`` (made on first use; the question follows the latest wording)."""
    line = _RECORD.get(key)
    if line is None:
        line = _RECORD[key] = Attempts(key, question, bank)
    line.question = question
    return line


def forget() -> None:
    """Empty the record (a fresh start in the same kernel)."""
    _RECORD.clear()


class Summary:
    """The record as a table (HTML in Jupyter, text elsewhere) and as JSON."""

    def __init__(self, rows: list[Attempts]):
        self.rows = [Attempts(**asdict(r)) for r in rows]   # a snapshot: later answers do not change it

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.rows) for s in STATUSES}

    def to_dict(self) -> dict:
        return {"exercises": [{"key": r.key, "bank": r.bank, "question": r.question, "status": r.status,
                               "tries": r.tries, "right_at_try": r.solved_at or None, "revealed": r.revealed}
                              for r in self.rows],
                "counts": self.counts}

    def to_json(self, indent: int | None = None) -> str:
        """The record as a JSON string (nothing is written anywhere)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def _headline(self) -> str:
        c = self.counts
        n = len(self.rows)
        return (f"{n} exercise{'' if n == 1 else 's'}: {c[RIGHT]} right at the first try, "
                f"{c[WRONG]} wrong at first, "
                f"{c[REVEALED]} revealed, {c[NOT_ANSWERED]} not answered")

    def __repr__(self) -> str:
        lines = [self._headline()]
        width = max((len(r.key) for r in self.rows), default=0)
        for r in self.rows:
            note = f" ({r.note})" if r.note else ""
            lines.append(f"  {r.key:<{width}}  {r.status}{note}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from .checking import _inline  # the question's markdown (`code`, **bold**), as the widget shows it

        cell = "padding:2px 8px;text-align:left;vertical-align:top"
        head = "".join(f"<th style='{cell}'>{h}</th>" for h in ("exercise", "question", "result", "tries"))
        body = []
        for r in self.rows:
            note = f" <span style='color:#555'>({html.escape(r.note)})</span>" if r.note else ""
            body.append(f"<tr><td style='{cell}'><code>{html.escape(r.key)}</code></td>"
                        f"<td style='{cell}'>{_inline(r.question)}</td>"
                        f"<td style='{cell};color:{_STYLE[r.status]}'><b>{r.status}</b>{note}</td>"
                        f"<td style='{cell};text-align:right'>{r.tries}</td></tr>")
        return (f"<div class='wb-exercise-summary' style='font-size:13px'><p><b>Your record</b> · "
                f"{html.escape(self._headline())} (kept in this kernel only).</p>"
                f"<table style='border-collapse:collapse'><tr>{head}</tr>{''.join(body)}</table></div>")


def summary(bank: str | None = None) -> Summary:
    """The learner's record of every exercise asked in this kernel (or those of one ``bank``)."""
    return Summary([r for r in _RECORD.values() if bank is None or r.bank == bank])
