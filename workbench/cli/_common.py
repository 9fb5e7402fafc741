"""What every command shares: exit statuses, integer argument types, checked output files."""

from __future__ import annotations

import argparse
import os

from ..errors import WorkbenchError

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_ERROR = 2  # malformed or missing input, bad arguments (argparse uses 2 as well)


def _int_at_least(lowest: int, below: str):
    """An argparse type: an integer >= ``lowest``; ``below`` says what is wrong with a smaller one."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < lowest:
            raise argparse.ArgumentTypeError(f"{value} {below}")
        return value
    return parse


_nonnegative = _int_at_least(0, "is negative")
_positive = _int_at_least(1, "is below 1 (as in litert, num_threads should be >= 1)")


def _check_writable(path: str, flag: str) -> None:
    """Before any work: the file ``path`` (given with ``flag``) can be created, i.e. its directory exists."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise WorkbenchError(f"{flag} {path}: cannot write there: it is a directory")
    if not os.path.isdir(directory):
        raise WorkbenchError(f"{flag} {path}: cannot write there: directory {directory} does not exist")


def _write(path: str, flag: str, write) -> None:
    """``write(path)``, an OSError said as a write error that names the file."""
    try:
        write(path)
    except OSError as exc:
        raise WorkbenchError(f"{flag} {path}: cannot write: {exc.strerror or _one_line(exc)}") from None


def _write_bytes(data: bytes):
    def write(path):
        with open(path, "wb") as f:
            f.write(data)
    return write


def _one_line(text: str) -> str:
    return " ".join(str(text).split())
