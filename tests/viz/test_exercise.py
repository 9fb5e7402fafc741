"""workbench.viz.exercise: every kind of answer checked with a right answer (✓), a wrong one (✗) and none
("answer first"), headless and through the widgets.  The notebooks' own exercises are checked in
tests/notebooks/test_notebook_exercises.py."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.schema import BuiltinOperator
from workbench.viz.exercise import INVALID, NONE, RIGHT, WRONG, Exercise, Result, Solutions


def outputs_text(ex: Exercise) -> str:
    """What the reveal area of the widget shows, as text."""
    return "\n".join(str(o["data"].get("text/plain", "")) + str(o["data"].get("text/markdown", ""))
                     for o in ex.reveal_output.outputs)


def answer_in_widget(ex: Exercise, value) -> str:
    """Type (or pick) ``value``, press Check; return the feedback shown."""
    if ex.choices is None:
        ex.input.value = value
    else:
        ex.input.value = None if value is None else [label for label, _ in ex.choices].index(value)
    ex.check_button.click()
    return ex.feedback.value


# ---------------------------------------------------------------------------------------------
# each kind, headless
# ---------------------------------------------------------------------------------------------
KINDS = {
    # name: (exercise, right answers, wrong answers)
    "number": (lambda: Exercise("How many fields?", answer=2, hint="count them"), [2, "2", " 2.0 ", "2."],
               [3, "1", "-2"]),
    "number from the data": (lambda: Exercise("Sum?", answer=lambda: int(np.arange(4).sum())), ["6"], ["7"]),
    "number within a tolerance": (lambda: Exercise("Scale?", answer=0.00784, tolerance=0.0001), ["0.0078", "7.8e-3"],
                                  ["0.008", "0.07"]),
    "number within a relative tolerance": (lambda: Exercise("How often?", answer=0.02, rel=0.5),
                                           ["2%", "0.015", "~0.025"], ["5%", "0.5"]),
    "big number": (lambda: Exercise("Largest product?", answer=4161409), ["4,161,409", "4 161 409", "4161409"],
                   ["4161408", "2^22"]),
    "power": (lambda: Exercise("int32 limit + 1?", answer=2 ** 31), ["2^31", "2**31", "2147483648"], ["2^32"]),
    "negative number": (lambda: Exercise("Zero point?", answer=-128), ["-128", "−128"], ["128", "127"]),
    "text": (lambda: Exercise("Identifier?", answer="TFL3", hint="TFLite + schema version"),
             ["TFL3", " tfl3 ", "`TFL3`", "'tfl3'."], ["TFL2", "FL3"]),
    "text with separators": (lambda: Exercise("Which test?", answer="min_consumer"),
                             ["min consumer", "MIN-CONSUMER", "min_consumer"], ["producer"]),
    "enum": (lambda: Exercise("Code?", answer=BuiltinOperator.ADD), ["ADD", "add", "0", "BuiltinOperator.ADD"],
             ["CONV_2D", "3"]),
    "bool": (lambda: Exercise("Different?", answer=False), ["no", "No", False, "false"], ["yes", True]),
    "list of numbers": (lambda: Exercise("Values?", answer=[-6.25, 0.0, 1.0, 6.5], tolerance=0.001),
                        ["-6.25, 0, 1, 6.5", "-6.25; 0; 1; 6.5", "-6.25 0 1 6.5", [-6.25, 0, 1, 6.5],
                         np.array([-6.25, 0, 1, 6.5])], ["-6.25, 0, 1, 6.6", "6.25, 0, 1, 6.5"]),
    "list of names": (lambda: Exercise("Codes?", answer=[BuiltinOperator.CONV_2D, BuiltinOperator.GELU]),
                      ["CONV_2D, GELU", "conv2d, gelu"], ["CONV_2D, CONV_2D"]),
    "set": (lambda: Exercise("Which?", answer={"microwakeword", "resource variables"}),
            ["microWakeWord", "Resource variables"], ["DENSIFY"]),
    "choices": (lambda: Exercise("Where?", choices=["bytes 0–3", "bytes 4–7", "the end"], answer="bytes 0–3",
                                 hint="first thing read"), ["bytes 0–3", "Bytes 0-3"], ["bytes 4–7", "the end"]),
    "choices with values": (lambda: Exercise("Gain?", choices=[("about 1×", 1), ("about 2×", 2), ("about 10×", 10)],
                                             answer=lambda: 1), [1, "about 1×"], [2, "about 10×"]),
    "checker": (lambda: Exercise("Any version above 1?", checker=lambda a: (str(a).strip() not in ("0", "1"), "")),
                ["2", "3"], ["1"]),
}


@pytest.mark.parametrize("kind", KINDS, ids=list(KINDS))
def test_each_kind_says_right_wrong_and_answer_first_headless(kind):
    make, rights, wrongs = KINDS[kind]
    ex = make()
    for a in rights:
        r = ex.check(a)
        assert r.status == RIGHT and r and r.text.startswith("✓"), (a, r)
    for a in wrongs:
        r = ex.check(a)
        assert r.status == WRONG and not r and r.text.startswith("✗"), (a, r)
        if ex.hint:
            assert f"Hint: {ex.hint}" in r.text
    for a in (None, "", "   ", []):
        r = ex.check(a)
        assert r.status == NONE and not r and r.text.startswith("Answer first"), (a, r)
    assert ex.result is r


@pytest.mark.parametrize("kind", KINDS, ids=list(KINDS))
def test_each_kind_through_the_widget(kind):
    make, rights, wrongs = KINDS[kind]
    ex = make()

    def typed(a):
        if ex.choices is None:
            return a
        return ex.choices[[v for _, v in ex.choices].index(ex._choice_value(a))][0]

    # no answer: nothing opens
    assert "Answer first" in answer_in_widget(ex, None if ex.choices is not None else "")
    assert not ex.revealed and ex.reveal_output.layout.display == "none"
    # a wrong answer: ✗, the hint, and the offer to show the answer
    wrong = wrongs[0]
    assert "✗" in answer_in_widget(ex, typed(wrong) if ex.choices is not None else str(wrong))
    assert ex.show_button.layout.display != "none" and not ex.revealed
    # a right answer opens the reveal
    right = rights[0]
    assert "✓" in answer_in_widget(ex, typed(right) if ex.choices is not None else str(right) if not isinstance(
        right, (list, np.ndarray)) else ", ".join(map(str, right)))
    assert ex.revealed and ex.reveal_output.layout.display != "none"
    assert ex.show_button.layout.display == "none"


def test_a_reveal_stays_hidden_until_an_answer_then_shows_markdown_and_a_view():
    class View:
        def _repr_mimebundle_(self, include=None, exclude=None):
            return {"text/plain": "the view", "text/html": "<b>the view</b>"}

    calls = []
    ex = Exercise("How many fields does the file store?", answer=lambda: 2, hint="defaults are left out",
                  reveal=["**{{answer}}**: `stride_w` and `{{other}}`.", lambda: calls.append(1) or View()],
                  values={"other": lambda: "stride_h"})
    bundle = ex._repr_mimebundle_()
    assert "How many fields" in bundle["text/plain"] and "How many fields" in bundle["text/html"]
    assert "stride_w" not in bundle["text/plain"] + bundle["text/html"]          # the question only
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert not calls and ex.reveal_output.outputs == ()                         # nothing computed, nothing shown
    answer_in_widget(ex, "3")
    assert "✗" in ex.feedback.value and "defaults are left out" in ex.feedback.value
    assert ex.reveal_output.outputs == () and not calls
    ex.show_button.click()                                                       # "show the answer"
    shown = outputs_text(ex)
    assert "The answer: 2" in shown and "**2**: `stride_w` and `stride_h`." in shown and "the view" in shown
    assert calls == [1]
    html = [o["data"].get("text/html") for o in ex.reveal_output.outputs]
    assert "<b>the view</b>" in html


def test_a_right_answer_opens_the_reveal_without_repeating_the_answer():
    ex = Exercise("Zero point?", answer=-128, reveal="Real 0 sits at the bottom: {{answer}}.")
    answer_in_widget(ex, "-128")
    assert "✓ Right: -128." in ex.feedback.value
    assert outputs_text(ex).count("Real 0 sits at the bottom: -128.") == 2          # markdown + plain
    assert "The answer" not in outputs_text(ex)


def test_unreadable_answers_keep_the_reveal_closed():
    ex = Exercise("How many?", answer=2, reveal="two")
    r = answer_in_widget(ex, "two-ish")
    assert "⚠" in r and "not a number" in r and not ex.revealed
    assert ex.check("two-ish").status == INVALID
    many = Exercise("Values?", answer=[1, 2, 3])
    r = many.check("1, 2")
    assert r.status == INVALID and "takes 3 answers" in r.text
    choice = Exercise("Where?", choices=["a", "b"], answer="a")
    assert choice.check("c").status == INVALID


def test_numbers_say_too_high_or_too_low():
    ex = Exercise("How many?", answer=10)
    assert "too high" in ex.check(11).text and "too low" in ex.check("9").text


def test_result_is_a_small_displayable_object():
    r = Exercise("Q?", answer=1, hint="*think*").check(2)
    assert isinstance(r, Result) and r.status == WRONG
    bundle = r._repr_mimebundle_()
    assert bundle["text/plain"].startswith("✗") and "<i>think</i>" in bundle["text/html"]
    assert "answer first" in Exercise("Q?", answer=1).check(None).text.lower()


def test_the_static_views_list_the_choices_but_never_mark_the_answer():
    ex = Exercise("Where is the root offset?", choices=["bytes 0–3", "bytes 4–7"], answer="bytes 4–7")
    text, html = repr(ex), ex._repr_mimebundle_()["text/html"]
    assert "bytes 0–3" in text and "bytes 4–7" in text and "bytes 4–7" in html
    assert "✓" not in text + html and "right" not in (text + html).lower()


def test_authoring_mistakes_are_reported_when_the_exercise_is_made():
    with pytest.raises(ValueError, match="not one of the choices"):
        Exercise("Q?", choices=["a", "b"], answer="c")
    with pytest.raises(KeyError, match="missing"):
        Exercise("Q?", answer=1, reveal="{{missing}}")
    with pytest.raises(ValueError, match="answer or a checker"):
        Exercise("Q?")


def test_solutions_are_sections_of_a_markdown_file(tmp_path):
    path = tmp_path / "s.md"
    path.write_text("# Title\n\nintro\n\n## header — Where?\n\nBytes **0–3**.\n\n### a subheading\n\nmore\n\n"
                    "## try-next — Answers\n\n1. one\n", encoding="utf-8")
    s = Solutions(path)
    assert list(s) == ["header", "try-next"] and s.titles["header"] == "Where?"
    assert s["header"] == "Bytes **0–3**.\n\n### a subheading\n\nmore"
    with pytest.raises(KeyError, match="it has: header, try-next"):
        s["nope"]


def test_a_missing_solutions_file_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="no solutions file 'solutions/00_tour.md'"):
        Solutions("solutions/00_tour.md")
