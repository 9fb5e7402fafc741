"""Exercises kept out of the notebook: a markdown file per notebook holds the questions, the answers
and the reveals, and the notebook only asks.

A bank is the notebook's solutions file, readable by an instructor as the answer key.  Each
``## key — title`` section is one reveal; a section that starts with a fenced ``python`` block is also
an exercise, defined by the names the block sets::

    ## stored-fields — How many of the 7 fields does the file store?

    ```python
    question = "How many of the 7 fields of this `Conv2DOptions` table does the file store?"
    def answer(model, conv):                 # computed from the names the notebook passes
        return len(viz.byte_map(model, conv.builtin_options).present)
    hint = "A writer leaves out a field that equals its schema default."
    ```

    **{{answer}}: `stride_w` and `stride_h`.**  (the reveal: markdown, with {{placeholders}})

and the notebook's cell is only ``ask("stored-fields", model=model, conv=conv)``.

Names a block may set: ``question``, ``answer``, ``choices``, ``hint``, ``tolerance``, ``rel``,
``checker``, ``values`` (a dict of reveal placeholders), ``views`` (a list of objects shown after the
reveal's text), and for a coding task ``task`` (the name of the function the learner writes),
``checker``, ``solution`` (a reference solution, shown with the reveal) and ``wrong`` (a wrong one, for
tests).  Any of ``question``, ``answer``, ``choices``, ``values`` and ``views`` may be a function: its
parameters name what it needs from ``ask``'s keyword arguments.  A ``checker``'s first parameter is the
learner's answer; its other parameters are bound the same way.  A ``python`` block before the first
section is the bank's prelude (imports), run once; every exercise block runs in a copy of it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import WorkbenchError
from .checking import Exercise

__all__ = ["Solutions", "Bank", "BankError", "Spec"]

_FENCE = re.compile(r"\A```python[ \t]*\n(.*?)^```[ \t]*$\n?", re.S | re.M)
_BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)     # anywhere: the prelude
_FIELDS = ("question", "answer", "choices", "hint", "tolerance", "rel", "checker", "values", "views", "task",
           "solution", "wrong")
_COMPUTED = ("question", "answer", "choices", "values", "views")


class BankError(WorkbenchError):
    """An exercise bank that cannot be read, or an ``ask`` it cannot answer (names the key and the file)."""


class Solutions(Mapping):
    """The sections of a markdown file by key: ``## key — title`` opens a section, which runs to the
    next ``##`` (or ``#``) heading.  A relative path is looked up from the working directory (a
    notebook's own folder when it runs in Jupyter).  ``prelude`` is the text before the first section."""

    def __init__(self, path):
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no solutions file {str(path)!r} (looked from {str(Path.cwd())!r}); "
                                    "the shipped notebooks keep theirs in notebooks/solutions/")
        self.path = path
        self.sections: dict[str, str] = {}
        self.titles: dict[str, str] = {}
        self.lines: dict[str, int] = {}          # the line of each section's heading (1-based)
        key, lines, prelude, fenced = None, [], [], False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.startswith("```"):
                fenced = not fenced
            head = None if fenced else re.match(r"^(#{1,2})\s+(.*)$", line)
            if head:
                if key is not None:
                    self.sections[key] = "\n".join(lines).strip()
                key, lines = None, []
                if head.group(1) == "##":
                    name, _, title = head.group(2).partition(" — ")
                    key = name.strip().strip("`")
                    self.titles[key] = title.strip()
                    self.lines[key] = number
                continue
            (lines if key is not None else prelude).append(line)
        if key is not None:
            self.sections[key] = "\n".join(lines).strip()
        self.prelude = "\n".join(prelude).strip()

    def __getitem__(self, key: str) -> str:
        try:
            return self.sections[key]
        except KeyError:
            raise KeyError(f"no section {key!r} in {self.path} (it has: {', '.join(self.sections)})") from None

    def __iter__(self):
        return iter(self.sections)

    def __len__(self) -> int:
        return len(self.sections)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r}: {', '.join(self.sections)})"


@dataclass
class Spec:
    """One exercise of a bank: what its block set (functions not yet called) and the reveal's text."""

    key: str
    fields: dict
    reveal: str
    source: str                                        # the block, as written
    needs: tuple = ()                                  # the names its functions take from ``ask``
    solution_code: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def is_task(self) -> bool:
        return "task" in self.fields

    @property
    def literal_answer(self):
        """The answer as written in the bank, when it is a value and not a function (else None)."""
        answer = self.fields.get("answer")
        return None if callable(answer) else answer


def _parameters(fn, skip: int = 0) -> tuple:
    return tuple(inspect.signature(fn).parameters)[skip:]


class Bank(Solutions):
    """A notebook's exercises, read from its solutions file; ``ask(key, **names)`` makes one."""

    def __init__(self, path):
        super().__init__(path)
        self.name = self.path.stem
        prelude = _BLOCK.search(self.prelude + "\n")
        self._globals: dict = {"__name__": f"bank:{self.name}"}
        if prelude:
            self._run(prelude.group(1), self._globals, "the prelude", 1)
        self.specs: dict[str, Spec] = {}
        for key, text in self.sections.items():
            block = _FENCE.match(text)
            if block:
                self.specs[key] = self._spec(key, block.group(1), text[block.end():].strip())

    def _run(self, source: str, namespace: dict, where: str, line: int) -> None:
        try:
            code = compile(source, f"{self.path}:{where}", "exec")
            exec(code, namespace)  # the bank is the notebook's own answer key, shipped beside it
        except Exception as exc:
            raise BankError(f"{self.path}: {where} (line {line}) does not run: {type(exc).__name__}: {exc}") from exc

    def _spec(self, key: str, source: str, reveal: str) -> Spec:
        namespace = dict(self._globals)
        self._run(source, namespace, f"exercise {key!r}", self.lines[key])
        fields = {name: namespace[name] for name in _FIELDS if name in namespace}
        if "question" not in fields:
            raise BankError(f"{self.path}: exercise {key!r} (line {self.lines[key]}) sets no `question`")
        if "answer" not in fields and "checker" not in fields:
            raise BankError(f"{self.path}: exercise {key!r} (line {self.lines[key]}) sets neither `answer` "
                            "nor `checker`")
        needs = []
        for name in _COMPUTED:
            if callable(fields.get(name)):
                needs += [p for p in _parameters(fields[name]) if p not in needs]
        if callable(fields.get("checker")):
            needs += [p for p in _parameters(fields["checker"], 1) if p not in needs]
        solution_code = ""
        if "solution" in fields:
            tree = ast.parse(source)
            node = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "solution"), None)
            if node is not None:  # shown to the learner under the task's own name
                solution_code = ast.get_source_segment(source, node) or ""
                solution_code = re.sub(r"^def solution\b", f"def {fields.get('task', 'solution')}", solution_code)
        return Spec(key, fields, reveal, source, tuple(needs), solution_code)

    # -- asking ---------------------------------------------------------------------------------
    def spec(self, key: str) -> Spec:
        try:
            return self.specs[key]
        except KeyError:
            raise BankError(f"no exercise {key!r} in {self.path} (its exercises: {', '.join(self.specs)})") from None

    def ask(self, key: str, /, **names) -> Exercise:
        """The exercise ``key``, with its computed parts bound to ``names`` (the notebook's data)."""
        spec = self.spec(key)
        missing = [n for n in spec.needs if n not in names]
        if missing:
            raise BankError(f"ask({key!r}) needs {', '.join(f'{n}=' for n in missing)} (the bank's exercise uses "
                            f"them; {self.path}, line {self.lines[key]})")
        f = spec.fields

        def bound(name, skip: int = 0):
            value = f.get(name)
            if not callable(value):
                return value
            wanted = {p: names[p] for p in _parameters(value, skip)}
            return functools.partial(value, **wanted) if skip else (lambda: value(**wanted))

        def now(name):
            value = bound(name)
            return value() if callable(value) else value

        reveal = [spec.reveal] if spec.reveal else []
        if "views" in f:
            views = bound("views")
            reveal.append(views if callable(views) else (lambda: list(views)))
        values = now("values") or {}
        answer = bound("answer")
        exercise = Exercise(now("question"), answer, choices=now("choices"), checker=bound("checker", 1),
                        hint=f.get("hint", ""), reveal=reveal, values=values,
                        tolerance=f.get("tolerance", 0.0), rel=f.get("rel", 0.0), key=key, task=f.get("task"),
                        solution=f.get("solution"), solution_code=spec.solution_code, bank=self.name)
        exercise.wrong = f.get("wrong")          # a wrong submission of a coding task, for tests
        return exercise
