"""Which (op, version) pairs ai-edge-litert's builtin resolver registers that our registry lacks.

    python dev/litert_op_coverage.py            # table of ops litert has and we lack (or lack versions of)

The probing itself lives in ``tests/helpers/litert_op_probe.py`` (one-operator models handed to litert in
child processes; see there), shared with ``tests/interpreter/test_registry_vs_litert.py``, which keeps the
known gaps in an explicit table.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.litert_op_probe import CUSTOM_NAMES, litert_registered, our_registered  # noqa: E402


def main() -> int:
    from workbench.interpreter.registry import format_versions
    from workbench.schema import BuiltinOperator as B

    theirs_all = litert_registered()
    ours_all = our_registered()
    missing, partial, extra = [], [], []
    for op in list(B) + list(CUSTOM_NAMES):
        if op == B.CUSTOM:
            continue
        label = op.name if not isinstance(op, str) else op
        theirs = sorted(theirs_all.get(op, ()))
        have = set(ours_all.get(op, ()))
        if not theirs:
            continue
        lack = [v for v in theirs if v not in have]
        if not have:
            missing.append((label, format_versions(theirs)))
        elif lack:
            partial.append((label, format_versions(theirs), format_versions(sorted(have)), format_versions(lack)))
    for op, have in ours_all.items():
        more = sorted(have - set(theirs_all.get(op, ())))
        if more:
            extra.append((op.name if not isinstance(op, str) else op, format_versions(more)))
    print(f"# litert registers these ops; our registry has none of their versions ({len(missing)})")
    for label, vs in missing:
        print(f"{label:40s} litert v{vs}")
    print(f"\n# litert registers more versions than we do ({len(partial)})")
    for label, vs, have, lack in partial:
        print(f"{label:40s} litert v{vs:12s} ours v{have:12s} lacking v{lack}")
    print(f"\n# we register these and litert does not ({len(extra)})")
    for label, vs in sorted(extra):
        print(f"{label:40s} ours v{vs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
