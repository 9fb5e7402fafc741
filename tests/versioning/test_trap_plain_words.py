"""Each trap of the version rules says what goes wrong in plain words, next to the upstream detail.

Notebook 02 shows the traps as a table whose first column a learner reads before the detail, so
the plain words must not lean on the terms of upstream's code (``outputs[1]``, ``.at()``,
``kTfLite...``, ``in0``, ``v4``) and must stay short.
"""

import re

import pytest

from workbench.versioning import TRAPS
from workbench.versioning.rules import Trap

CODE_TERMS = re.compile(r"outputs\[|\.at\(|kTfLite|\b(?:in|out)\d\b|\bv\d+\b|NoType|is_const|==|≠")


@pytest.mark.parametrize("trap", TRAPS, ids=[t.id for t in TRAPS])
def test_each_trap_says_what_goes_wrong_in_plain_words(trap):
    assert trap.plain, f"{trap.id}: no plain words"
    assert trap.plain != trap.text
    assert trap.plain.endswith("."), trap.plain
    assert len(trap.plain) <= 170, f"{trap.id}: {len(trap.plain)} characters"
    assert not CODE_TERMS.search(trap.plain), f"{trap.id}: upstream's terms in {trap.plain!r}"


def test_a_trap_made_without_plain_words_has_none_and_keeps_its_detail():
    trap = Trap("example", ("ADD",), "ADD v9 tests in0 INT4")
    assert trap.plain == "" and trap.text == "ADD v9 tests in0 INT4"
    assert CODE_TERMS.search(trap.text)          # the check above would catch the detail's wording
