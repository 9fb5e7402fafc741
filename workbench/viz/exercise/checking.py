"""One exercise: ask, take the learner's answer, say right or wrong, then reveal why.

The reveal — the explanation, and a view if one is given — stays hidden until an answer is given::

    Exercise("How many of the 7 fields does the file store?",
             answer=lambda: len(viz.byte_map(model, conv.builtin_options).present),   # from the data
             hint="A field that equals its default is usually left out.",
             reveal="**{{answer}}**: the strides; every other field equals its default.")

(The shipped notebooks do not write this call in a cell, where a learner would read the answer
before predicting: they ``ask("key", ...)`` a :class:`~workbench.viz.exercise.bank.Bank`.)

The kind of answer follows from ``answer`` and ``choices``:

* ``choices=[...]`` (labels, or ``(label, value)`` pairs): multiple choice (radio buttons, or a menu);
* a bool: yes / no;
* a number: typed; right within ``tolerance`` (absolute) or ``rel`` (relative); "1,234", "2%", "−3",
  "2^31" are read as numbers;
* an enum member (``BuiltinOperator.ADD``): its name or its number;
* a list or tuple: several answers in order, separated by commas (or semicolons);
* a string: compared after normalising case, whitespace, quotes, ``_`` and ``-``;
* a set: any one of its members;
* ``checker=f``: ``f(answer)`` returns a bool or ``(bool, message)`` — for open questions;
* ``task="name", checker=f``: a coding task.  The learner writes the function ``name`` in a cell; "Check
  my code" passes it to ``f``.  Its exceptions are a wrong answer, ``NotImplementedError`` means "not
  written yet", and ``solution_code`` is shown with the reveal.

``answer`` may be a callable: it is called once, when the exercise is made, to compute the answer
from the data the notebook holds at that point.  ``reveal`` is markdown, a view (any object
Jupyter can display), a callable returning one or a list of them (called when the reveal opens), or a
list of these.  In markdown, ``{{answer}}`` and ``{{name}}`` for each ``values={name: value or
callable}`` are filled in, so a reveal can quote numbers computed from the data.

Without widgets — tests, a plain Python session, a notebook run headless::

    ex.check(2)         # Result "✓ Right: 2."  or  "✗ Not quite (too high). Hint: …"
    ex.check(None)      # Result "Answer first: …" — not an exception
    ex.reveal()         # the reveal, whatever was answered (instructors)

In Jupyter the exercise shows the question, an input and a Check button.  A right answer opens the
reveal; a wrong one shows the hint and a "Show the answer" button.  A plain class holding ipywidgets,
driven from tests without a browser: set ``ex.input.value``, ``ex.check_button.click()``, then read
``ex.feedback.value`` and ``ex.reveal_output.outputs``.  Its ``_repr_mimebundle_`` carries the
question (never the answer) as text and HTML, so a notebook saved or exported without widgets reads
correctly.  Every answer checked and every reveal opened goes to the learner's record
(:mod:`~workbench.viz.exercise.record`), under ``key``.
"""

from __future__ import annotations

import enum
import html
import numbers
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .record import attempts

__all__ = ["Exercise", "Result", "Reveal", "show", "RIGHT", "WRONG", "NONE", "INVALID"]

RIGHT, WRONG, NONE, INVALID = "right", "wrong", "none", "invalid"

_YES = {"yes", "y", "true", "t", "1", "oui", "ja"}
_NO = {"no", "n", "false", "f", "0", "non", "nein"}
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_INK = "#111"
_BOX = ("font-size:13px;color:" + _INK + ";background:#fff;padding:6px 10px;border:1px solid #ddd;"
        "border-left:4px solid #1976d2;border-radius:4px;line-height:1.5")
_COLOURS = {RIGHT: "#1b5e20", WRONG: "#b71c1c", NONE: "#555", INVALID: "#8d6e00"}


# ---------------------------------------------------------------------------------------------
# reading answers
# ---------------------------------------------------------------------------------------------
class _Unreadable(ValueError):
    """The answer is not of the kind the question takes (no verdict: the reveal stays hidden)."""


def _norm(text) -> str:
    """Case, whitespace, quotes, ``_``/``-`` between words and a final full stop do not matter."""
    s = str(text).casefold().replace("−", "-").replace("–", "-")
    s = re.sub(r"[`'\"“”‘’]", "", s)
    s = re.sub(r"(?<=\w)[_-]+(?=\w)", " ", s)
    s = re.sub(r"\s+", " ", s).strip()
    return s.rstrip(".!").strip()


def _squash(text) -> str:
    """A name without separators: CONV_2D, conv2d, "Conv 2D" and BuiltinOperator.CONV_2D read alike."""
    return re.sub(r"[\W_]+", "", _norm(text))


def _is_bool(x) -> bool:
    return isinstance(x, (bool, np.bool_))


def _is_number(x) -> bool:
    return isinstance(x, numbers.Real) and not _is_bool(x) and not isinstance(x, enum.Enum)


def _empty(answer) -> bool:
    if answer is None:
        return True
    if isinstance(answer, str):
        return not answer.strip()
    if isinstance(answer, (list, tuple)):
        return not answer or all(_empty(a) for a in answer)
    return False


def _number(answer) -> float:
    if _is_number(answer):
        return float(answer)
    if _is_bool(answer) or not isinstance(answer, str):
        raise _Unreadable(f"{answer!r} is not a number")
    s = answer.strip().casefold().replace("−", "-").replace("–", "-")
    s = re.sub(r"[\s_,\u2009\u202f]", "", s).lstrip("≈~")
    power = re.fullmatch(r"([+-]?\d+)(?:\^|\*\*)([+-]?\d+)", s)
    if power:
        return float(int(power.group(1)) ** int(power.group(2)))
    percent = s.endswith("%")
    try:
        value = float(s[:-1] if percent else s)
    except ValueError:
        raise _Unreadable(f"“{answer.strip()}” is not a number") from None
    return value / 100 if percent else value


def _bool(answer) -> bool:
    if _is_bool(answer):
        return bool(answer)
    s = _norm(answer)
    if s in _YES:
        return True
    if s in _NO:
        return False
    raise _Unreadable(f"“{answer}” is neither yes nor no")


def show(value) -> str:
    """How an answer reads in feedback and reveals."""
    if isinstance(value, enum.Enum):
        return value.name
    if _is_bool(value):
        return "yes" if value else "no"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (set, frozenset)):
        return " / ".join(sorted(show(v) for v in value))
    if isinstance(value, (list, tuple)):
        return ", ".join(show(v) for v in value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return f"{float(value):.6g}"
    return str(value)


def _inline(text: str) -> str:
    """A line of markdown as HTML: `code`, **bold**, *italic* (enough for questions and hints)."""
    s = html.escape(str(text), quote=False)
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", s)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<i>\1</i>", s)


# ---------------------------------------------------------------------------------------------
# results and reveals
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Result:
    """The verdict on one answer: ``status`` is ``right``, ``wrong``, ``none`` (no answer given) or
    ``invalid`` (not an answer this question can read); true only when right."""

    status: str
    answer: Any = None
    detail: str = ""
    hint: str = ""

    @property
    def ok(self) -> bool:
        return self.status == RIGHT

    def __bool__(self) -> bool:
        return self.ok

    @property
    def text(self) -> str:
        if self.status == RIGHT:
            return f"✓ Right: {self.detail}." if self.detail else "✓ Right."
        if self.status == WRONG:
            said = f"✗ Not quite ({self.detail})." if self.detail else "✗ Not quite."
            return said + (f" Hint: {self.hint}" if self.hint else " Try again, or show the answer.")
        if self.status == INVALID:
            return f"⚠ {self.detail}. Try again."
        return self.detail or "Answer first: type or pick your prediction, then check it."

    def html(self) -> str:
        colour = _COLOURS[self.status]
        if self.status == WRONG and self.hint:
            said = f"✗ Not quite ({self.detail})." if self.detail else "✗ Not quite."
            body = f"<b>{_inline(said)}</b><br><i>Hint:</i> {_inline(self.hint)}"
        else:
            body = f"<b>{_inline(self.text)}</b>"
        return f"<div class='wb-exercise-result' style='color:{colour};margin:4px 0'>{body}</div>"

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Result({self.status}: {self.text})"

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        return {"text/plain": self.text, "text/html": self.html()}


_FORMATTER = None


def _format(obj) -> tuple[dict, dict]:
    """(data, metadata) as Jupyter would display ``obj``: the kernel's formatter, or a standalone one."""
    global _FORMATTER
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:  # no IPython: plain text
        return {"text/plain": repr(obj)}, {}
    if shell is not None:
        return shell.display_formatter.format(obj)
    if _FORMATTER is None:
        from IPython.core.formatters import DisplayFormatter
        _FORMATTER = DisplayFormatter()
    return _FORMATTER.format(obj)


def _fill(text: str, values: Mapping) -> str:
    return _PLACEHOLDER.sub(lambda m: show(values[m.group(1)]), text)


class Reveal:
    """What an exercise shows once answered: markdown parts and views, in order."""

    def __init__(self, parts, values: Mapping | None = None):
        self.parts = tuple(parts)
        self.values = dict(values or {})

    def bundles(self) -> list[tuple[dict, dict]]:
        """One (data, metadata) per part, ready for a display_data output; callables are called now."""
        out = []
        for part in self.parts:
            if callable(part) and not hasattr(part, "_repr_mimebundle_"):
                part = part()
                if part is None:
                    continue
                if isinstance(part, (list, tuple)):  # a callable may give several views
                    out += Reveal(part, self.values).bundles()
                    continue
            if isinstance(part, str):
                text = _fill(part, self.values)
                out.append(({"text/markdown": text, "text/plain": text}, {}))
            else:
                data, metadata = _format(part)
                if data:
                    out.append((data, metadata))
        return out

    @property
    def text(self) -> str:
        return "\n\n".join(str(d.get("text/plain", "")) for d, _ in self.bundles())

    def __repr__(self) -> str:
        return self.text

    def _ipython_display_(self):
        from IPython.display import display
        for data, metadata in self.bundles():
            display(data, raw=True, metadata=metadata)


# ---------------------------------------------------------------------------------------------
# the exercise
# ---------------------------------------------------------------------------------------------
class Exercise:
    """One question, its answer, a hint and a reveal; a widget in Jupyter, ``check()`` anywhere."""

    def __init__(self, question: str, answer: Any = None, *, choices=None, checker: Callable | None = None,
                 hint: str = "", reveal=None, values: Mapping | None = None, tolerance: float = 0.0,
                 rel: float = 0.0, key: str | None = None, task: str | None = None,
                 solution: Callable | None = None, solution_code: str = "", bank: str = ""):
        if answer is None and checker is None:
            raise ValueError("an exercise needs an answer or a checker")
        if task is not None and checker is None:
            raise ValueError(f"the coding task {task!r} needs a checker: a function of the learner's {task}")
        self.question = question
        self.key = key or question
        self.task = task
        self.solution = solution
        self.wrong = None        # a wrong submission of a coding task (a bank sets it), for tests
        self.record = attempts(self.key, question, bank)
        self.hint = hint
        self.checker = checker
        self.tolerance = float(tolerance)
        self.rel = float(rel)
        self.expected = answer() if callable(answer) else answer
        if isinstance(self.expected, np.ndarray):
            self.expected = self.expected.tolist()
        if choices is None and _is_bool(self.expected):
            choices = [("yes", True), ("no", False)]
            self.expected = bool(self.expected)
        self.choices = None if choices is None else [c if isinstance(c, tuple) else (str(c), c) for c in choices]
        if self.choices is not None and self.expected is not None:
            self.expected = self._choice_value(self.expected)
        values = {k: (v() if callable(v) else v) for k, v in (values or {}).items()}
        values["answer"] = self.shown
        parts = reveal if isinstance(reveal, (list, tuple)) else ([] if reveal is None else [reveal])
        if solution_code:
            parts = [*parts, "A solution:\n\n```python\n" + solution_code.strip("\n") + "\n```"]
        for part in parts:  # a placeholder without a value is an authoring error: say so now
            for name in _PLACEHOLDER.findall(part) if isinstance(part, str) else ():
                if name not in values:
                    raise KeyError(f"the reveal uses {{{{{name}}}}}, which has no value (values: {sorted(values)})")
        self._reveal = Reveal(parts, values)
        self.result: Result | None = None
        self.revealed = False
        self._build_widget()

    # -- the answer ----------------------------------------------------------------------------
    def _choice_value(self, answer):
        """The value of the choice ``answer`` names (by value, or by its label)."""
        for label, value in self.choices:
            if type(answer) is type(value) and answer == value:
                return value
        for label, value in self.choices:
            if _norm(answer) in (_norm(label), _norm(show(value))):
                return value
        if all(_is_bool(value) for _, value in self.choices):  # yes / no also reads true, n, 0 …
            try:
                return _bool(answer)
            except _Unreadable:
                pass
        labels = " · ".join(label for label, _ in self.choices)
        raise _Unreadable(f"“{show(answer)}” is not one of the choices ({labels})")

    @property
    def shown(self) -> str:
        """The expected answer as it reads (a choice by its label)."""
        if self.expected is None:
            return ""
        if self.choices is not None:
            return next(label for label, value in self.choices if value == self.expected
                        and type(value) is type(self.expected))
        return show(self.expected)

    def _compare(self, answer, expected) -> tuple[bool, str]:
        """(right?, detail) for one answer against one expected value of a scalar kind."""
        if isinstance(expected, (set, frozenset)):
            verdicts = []
            for e in expected:
                try:
                    verdicts.append(self._compare(answer, e))
                except _Unreadable:
                    continue
            if not verdicts:
                raise _Unreadable(f"cannot read “{answer}” as an answer here")
            return any(ok for ok, _ in verdicts), ""
        if _is_bool(expected):
            return _bool(answer) == expected, ""
        if isinstance(expected, enum.Enum):
            if isinstance(answer, enum.Enum):
                return answer == expected, ""
            names = {_squash(expected.name), _squash(f"{type(expected).__name__}.{expected.name}")}
            if isinstance(expected, int):
                names.add(str(int(expected)))
            return _squash(answer) in names, ""
        if _is_number(expected):
            got, want = _number(answer), float(expected)
            slack = max(self.tolerance, self.rel * abs(want), 1e-9 * max(1.0, abs(want)))
            if abs(got - want) <= slack:
                return True, ""
            return False, "too high" if got > want else "too low"
        return _norm(answer) == _norm(expected), ""

    def _verdict(self, answer) -> tuple[bool, str]:
        if self.checker is not None:
            said = self.checker(answer)
            return (bool(said[0]), str(said[1])) if isinstance(said, tuple) else (bool(said), "")
        if self.choices is not None:
            return self._choice_value(answer) == self.expected, ""
        if isinstance(self.expected, (list, tuple)):
            items = answer
            if isinstance(answer, str):
                sep = ";" if ";" in answer else ("," if "," in answer else None)
                items = [a for a in (answer.split(sep) if sep else answer.split()) if a.strip()]
            elif isinstance(answer, np.ndarray):
                items = answer.tolist()
            if not isinstance(items, (list, tuple)) or len(items) != len(self.expected):
                n = len(items) if isinstance(items, (list, tuple)) else 1
                raise _Unreadable(f"this question takes {len(self.expected)} answers, separated by commas "
                                  f"(got {n})")
            verdicts = [self._compare(a, e) for a, e in zip(items, self.expected)]
            right = sum(ok for ok, _ in verdicts)
            return right == len(verdicts), ("" if right == len(verdicts) else
                                            f"{right} of {len(verdicts)} right")
        return self._compare(answer, self.expected)

    def check(self, answer=None) -> Result:
        """The verdict on ``answer`` (``None`` or blank → "answer first"); remembered as ``self.result``.

        A coding task checks the function given, or else the learner's function of that name in the
        notebook (the IPython namespace)."""
        if self.task is not None:
            result = self._check_task(self._submission() if answer is None else answer)
        elif _empty(answer):
            result = Result(NONE)
        else:
            try:
                ok, detail = self._verdict(answer)
            except _Unreadable as exc:
                result = Result(INVALID, answer, str(exc))
            else:
                if ok:  # a set of accepted answers: say back the one given
                    given = isinstance(self.expected, (set, frozenset)) or not self.shown
                    result = Result(RIGHT, answer, show(answer).strip() if given else self.shown)
                else:
                    result = Result(WRONG, answer, detail, self.hint)
        if result.status in (RIGHT, WRONG):
            self.record.checked(result.status == RIGHT)
        self.result = result
        return result

    def _submission(self):
        """The learner's function named ``task``, from the notebook's namespace (None outside IPython)."""
        try:
            from IPython import get_ipython
        except ImportError:
            return None
        shell = get_ipython()
        return None if shell is None else shell.user_ns.get(self.task)

    def _check_task(self, fn) -> Result:
        """A coding task: run the checker on the learner's function; their exceptions are a wrong answer."""
        if fn is None:
            return Result(NONE, detail=f"Write the function `{self.task}` in the cell above, run that cell, "
                                       "then check it.")
        if not callable(fn):
            return Result(INVALID, fn, f"`{self.task}` is a {type(fn).__name__}, not a function")
        try:
            said = self.checker(fn)
        except NotImplementedError:
            return Result(NONE, detail=f"Your `{self.task}` still says “not implemented”: write its body, run "
                                       "the cell, then check it.")
        except Exception as exc:  # the learner's code failed: say how, as a wrong answer
            return Result(WRONG, fn, f"your `{self.task}` raised {type(exc).__name__}: {exc}", self.hint)
        ok, detail = (bool(said[0]), str(said[1])) if isinstance(said, tuple) else (bool(said), "")
        return Result(RIGHT if ok else WRONG, fn, detail if not ok else "your code passes every check",
                      "" if ok else self.hint)

    def reveal(self) -> Reveal:
        """The reveal, whatever was answered (for instructors, and for tests).  Before a right answer it
        counts as "revealed" in the learner's record."""
        self.record.shown()
        return self._reveal

    # -- widgets -------------------------------------------------------------------------------
    def _build_widget(self) -> None:
        try:
            import ipywidgets as W
        except ImportError:  # headless without ipywidgets: check() and the static views still work
            self.widget = self.input = self.check_button = self.feedback = None
            self.show_button = self.reveal_output = None
            return
        self.question_html = W.HTML(self._question_html())
        if self.task is not None:
            self.input = W.HTML(f"<span style='color:#555'>your function <code>{html.escape(self.task)}</code>"
                                " in the cell above</span>")
        elif self.choices is not None:
            options = [(label, k) for k, (label, _) in enumerate(self.choices)]
            short = len(options) <= 6 and all(len(label) <= 70 for label, _ in options)
            make = W.RadioButtons if short else W.Dropdown
            self.input = make(options=options, value=None, layout=W.Layout(width="auto"))
        else:
            many = isinstance(self.expected, (list, tuple))
            self.input = W.Text(value="", placeholder="your answers, separated by commas" if many else
                                "your prediction", layout=W.Layout(width="320px"))
        self.check_button = W.Button(description="Check my code" if self.task else "Check", button_style="primary",
                                     icon="check", layout=W.Layout(width="140px" if self.task else "110px"))
        self.feedback = W.HTML("")
        self.show_button = W.Button(description="Show the answer", icon="eye",
                                    layout=W.Layout(display="none", width="auto"))
        self.reveal_output = W.Output(layout=W.Layout(display="none"))
        self.check_button.on_click(lambda _b: self._on_check())
        self.show_button.on_click(lambda _b: self._open(with_answer=True))
        row = W.HBox([self.input, self.check_button], layout=W.Layout(align_items="center"))
        self.widget = W.VBox([self.question_html, row, self.feedback, self.show_button, self.reveal_output])
        self.widget.add_class("wb-exercise")
        if re.fullmatch(r"[\w-]+", self.key):  # a bank key: a page (or a browser test) can find the widget
            self.widget.add_class(f"wb-ex-{self.key}")

    def _answer_from_widget(self):
        if self.task is not None:
            return None  # check() reads the learner's function from the notebook
        value = self.input.value
        if self.choices is not None:
            return None if value is None else self.choices[value][1]
        return value

    def _on_check(self) -> Result:
        result = self.check(self._answer_from_widget())
        self.feedback.value = result.html()
        if result.status == RIGHT:
            self._open()
        elif result.status == WRONG and not self.revealed:
            self.show_button.layout.display = ""
        return result

    def _open(self, with_answer: bool = False) -> None:
        """Show the reveal (after a wrong answer, led by the answer itself)."""
        outputs = []
        if with_answer and self.shown:
            line = f"**The answer:** {self.shown}"
            outputs.append({"output_type": "display_data", "metadata": {},
                            "data": {"text/markdown": line, "text/plain": line.replace("**", "")}})
        outputs += [{"output_type": "display_data", "data": d, "metadata": m} for d, m in self._reveal.bundles()]
        self.reveal_output.outputs = tuple(outputs)
        self.reveal_output.layout.display = ""
        self.show_button.layout.display = "none"
        self.revealed = True
        if with_answer:
            self.record.shown()

    # -- static views --------------------------------------------------------------------------
    @property
    def _verb(self) -> str:
        return "Your code" if self.task else "Predict"

    def _question_html(self) -> str:
        return f"<div style='{_BOX}'><b>{self._verb}</b> · {_inline(self.question)}</div>"

    def __repr__(self) -> str:
        lines = [f"{self._verb}: {self.question}"]
        if self.choices is not None:
            lines += [f"  ( ) {label}" for label, _ in self.choices]
        lines.append(f"  (write {self.task}, then press “Check my code”, or .check())" if self.task else
                     "  (answer in the widget, or with .check(your_answer))")
        return "\n".join(lines)

    def _static_html(self) -> str:
        body = f"<b>{self._verb}</b> · {_inline(self.question)}"
        if self.choices is not None:
            body += "<ul style='margin:2px 0;list-style:circle'>" + "".join(
                f"<li>{_inline(label)}</li>" for label, _ in self.choices) + "</ul>"
        return f"<div class='wb-exercise' style='{_BOX}'>{body}</div>"

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        bundle = {}
        if self.widget is not None:
            bundle.update(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs) or {})
        bundle["text/plain"] = repr(self)
        bundle["text/html"] = self._static_html()
        return bundle
