"""Environment knobs, read once at import.

``WORKBENCH_JIT=0`` (or ``false``/``no``/``off``) runs every numba kernel as plain Python: slow, but
steppable in a debugger and visible to coverage.  ``WORKBENCH_DEBUG=<level>`` (an integer, 0 = off)
turns on extra checks and messages in the components that look at it.  ``WORKBENCH_PRECOMPILED=0``
ignores the precompiled kernel library (:mod:`workbench.interpreter.precompiled`).
"""

from __future__ import annotations

import os


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


def _level(name: str) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else 0
    except ValueError:
        return 1  # any non-numeric value means "on"


JIT: bool = _flag("WORKBENCH_JIT", True)
DEBUG: int = _level("WORKBENCH_DEBUG")
PRECOMPILED: bool = _flag("WORKBENCH_PRECOMPILED", True)

__all__ = ["JIT", "DEBUG", "PRECOMPILED"]
