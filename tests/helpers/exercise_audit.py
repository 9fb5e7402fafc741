"""The exercise audit: a cell appended to a notebook run that answers every exercise it asked (nothing, a
wrong answer, its right answer — read from the bank's values — headless and through the widget) and
the learner's record; it prints one JSON document after ``EXERCISE-AUDIT``."""

from __future__ import annotations

import json

AUDITS: dict = {}     # notebook path → the audit's report of its last headless run

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


def audit_report(nb) -> dict:
    """The audit's JSON from an executed notebook whose last cells include the audit cell."""
    for cell in reversed(nb.cells):
        if cell.cell_type == "code" and cell.source.startswith(AUDIT[:40]):
            text = "".join(o.get("text", "") for o in cell.get("outputs", ()) if o.output_type == "stream")
            return json.loads(text.split("EXERCISE-AUDIT ", 1)[1])
    raise AssertionError("the notebook ran without the exercise audit cell")
