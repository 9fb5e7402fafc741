"""The ``workbench`` command line: thin commands over the library's public functions.

    workbench inspect model.tflite                  # readable summary of the whole file
    workbench inspect model.tflite --json           # the same facts as one JSON document
    workbench versions model.tflite --runtime 2.3.0 # would TFLite 2.3.0 run it? (exit 1 if not)
    workbench partition model.tflite --target tidl --strategy tidl -o cut.tflite
    workbench run cut.tflite --steps                # run it, one line per node
    workbench bench model.tflite --vs-litert        # median latency beside ai-edge-litert's

One module per command under :mod:`workbench.cli.commands`: each has ``_register_<name>(sub)``, which
adds its parser, and ``_cmd_<name>(args) -> int``.  What the commands share has its own module:
:mod:`.describe` (model → the JSON documents of ``inspect`` and ``versions``), :mod:`.text` (their
text rendering, from the same documents so the two never disagree), :mod:`.inputs` (input files,
shapes and calibration frames for ``run`` and ``bench``) and :mod:`.workload` (the models the
precompile step runs).  A malformed or missing file prints ``error: <message>`` on stderr and exits
with status 2, never a traceback.  docs/cli.md describes every command, flag and JSON format.
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import config, installed_version
from ..errors import WorkbenchError
from ._common import EXIT_ERROR, EXIT_INTERNAL, EXIT_OK, _one_line
from .commands.bench import _register_bench
from .commands.inspect import _register_inspect
from .commands.partition import _register_partition
from .commands.precompile import _register_precompile
from .commands.run import _register_run
from .commands.versions import EXIT_CANNOT_RUN, _register_versions
from .describe import describe, full_release, group_findings, to_json, versions_report
from .text import render_profile, render_text, render_versions
from .workload import precompile_models, precompile_workload

__all__ = ["COMMANDS", "EXIT_CANNOT_RUN", "EXIT_ERROR", "EXIT_INTERNAL", "EXIT_OK", "build_parser", "describe",
           "full_release", "group_findings", "main", "precompile_models", "precompile_workload", "render_profile",
           "render_text", "render_versions", "to_json", "versions_report"]


# (name, registration) in the order `workbench --help` lists them
COMMANDS = [("inspect", _register_inspect), ("versions", _register_versions), ("partition", _register_partition),
            ("run", _register_run), ("bench", _register_bench), ("precompile", _register_precompile)]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description="TFLite Workbench command line.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {installed_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for _, register in COMMANDS:
        register(sub)
    return parser


def _model_path(text: str) -> str:
    """MODEL as given, or the cached file of the corpus model of that name when no such file exists
    (``workbench inspect face_landmark``). A bare name that is neither: a one-line error naming both."""
    if os.path.exists(text):
        return text
    from .. import corpus

    if text in corpus.MODELS:
        return str(corpus.cached_path(text))
    if os.sep in text or (os.altsep and os.altsep in text) or text.endswith(".tflite"):
        return text                                     # a path: the command says "cannot read"
    try:
        corpus.cached_path(text)
    except corpus.CorpusError as exc:
        raise WorkbenchError(f"cannot read {text}: no such file, and {exc}") from None
    return text


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input or arguments, 1 internal)."""
    for stream in (sys.stdout, sys.stderr):  # never die on a name the terminal cannot encode
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or an argparse error (status 2)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    where = getattr(args, "model", None)
    try:
        if where:
            where = args.model = _model_path(where)
    except WorkbenchError as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    prefix = f"{where}: " if where else ""
    try:
        return args.run(args)
    except BrokenPipeError:  # `workbench inspect big.tflite | head`: stop quietly
        try:  # the recipe of the Python docs: point stdout at devnull so the exit flush stays quiet
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_OK
    except WorkbenchError as exc:
        print(f"error: {prefix}{_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        reason = exc.strerror or _one_line(exc)
        print(f"error: cannot read {exc.filename or where}: {reason}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug: say so in one line; WORKBENCH_DEBUG=1 shows the traceback
        if config.debug_level() > 0:
            raise
        print(f"error: internal error while running {args.command}: {type(exc).__name__}: {_one_line(exc)} "
              "(set WORKBENCH_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
