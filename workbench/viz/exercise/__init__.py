"""Predict-then-reveal exercises for the notebooks, and the learner's record of them.

Three parts:

* :class:`Exercise` (:mod:`.checking`): one question, its answer, a hint and a reveal — a widget in
  Jupyter, ``check()`` anywhere.  The API for people who write their own notebooks.
* :class:`Bank` (:mod:`.bank`): a notebook's questions, answers and reveals kept in a markdown file
  beside it, so the notebook's cells only ask — ``ask("weights")`` or ``ask("stored-fields",
  model=model, conv=conv)`` — and show no answer before the learner predicts.  The file is the
  instructor's answer key.
* :func:`summary` (:mod:`.record`): which exercises the learner answered, right at the first try,
  wrong, or revealed; kept in the kernel only, and ``summary().to_json()`` gives it as text.

In a shipped notebook::

    from workbench.viz import exercise
    ask = exercise.Bank("solutions/01_anatomy_of_a_tflite_file.md").ask
    ask("weights")
    ...
    exercise.summary()
"""

from .bank import Bank, BankError, Solutions, Spec
from .checking import INVALID, NONE, RIGHT, WRONG, Exercise, Result, Reveal, show
from .record import Attempts, Summary, forget, summary

__all__ = ["Exercise", "Result", "Reveal", "show", "Bank", "BankError", "Solutions", "Spec", "summary", "Summary",
           "Attempts", "forget", "RIGHT", "WRONG", "NONE", "INVALID"]
