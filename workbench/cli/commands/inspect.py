"""``workbench inspect MODEL``: a readable summary of the whole file, or ``--json``."""

from __future__ import annotations

import os
import sys

from ...errors import WorkbenchError
from ...schema import load
from .._common import EXIT_OK, _nonnegative
from ..describe import describe, to_json
from ..text import render_text


def _register_inspect(sub) -> None:
    p = sub.add_parser("inspect", help="summarize a .tflite file (tensors, operators, options, metadata)",
                       description="Summarize a .tflite file: operator codes, tensors, operators with their "
                                   "non-default options, metadata and signatures.")
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.add_argument("--subgraph", type=_nonnegative, metavar="N", help="show only subgraph N")
    p.add_argument("--limit", type=_nonnegative, metavar="N",
                   help="text view: show at most N rows of each list (JSON output is always complete)")
    p.set_defaults(run=_cmd_inspect)


def _cmd_inspect(args) -> int:
    model = load(args.model)
    count = len(model.subgraphs or ())
    chosen = None
    if args.subgraph is not None:
        if args.subgraph >= count:
            raise WorkbenchError(f"subgraph {args.subgraph} does not exist (the model has {count})")
        chosen = [args.subgraph]
    doc = describe(model, file=str(args.model), size=os.path.getsize(args.model), subgraphs=chosen)
    if args.json:
        sys.stdout.write(to_json(doc) + "\n")
    else:
        sys.stdout.write(render_text(doc, args.limit) + "\n")
    sys.stdout.flush()
    return EXIT_OK
