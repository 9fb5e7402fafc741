"""``workbench versions MODEL``: stored vs computed op versions, the minimum runtime, and with
``--runtime R`` whether TFLite R runs the model (exit 1 if not).
"""

from __future__ import annotations

import sys

from ...schema import load
from .._common import EXIT_OK, _nonnegative
from ..describe import _release, to_json, versions_report
from ..text import render_versions

EXIT_CANNOT_RUN = 1  # `versions --runtime X`: release X would refuse the model (docs/cli.md)


def _register_versions(sub) -> None:
    p = sub.add_parser("versions", help="operator versions (stored vs computed), minimum runtime, runtime check",
                       description="For every operator: the version stored in the file and the version today's "
                                   "rules compute, with the reason; the model's minimum TFLite runtime (computed, "
                                   "and the min_runtime_version metadata); with --runtime, what that release "
                                   "would refuse and the error it would print. Exit status 1 when --runtime is "
                                   "given and that release cannot run the model.")
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--runtime", type=_release, metavar="X.Y.Z",
                   help="check the model against TFLite release X.Y.Z (X.Y means X.Y.0; exit status 1 if it cannot "
                        "run it)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.add_argument("--limit", type=_nonnegative, metavar="N",
                   help="text view: show at most N operators (JSON output is always complete)")
    p.set_defaults(run=_cmd_versions)


def _cmd_versions(args) -> int:
    model = load(args.model)
    doc = versions_report(model, file=str(args.model), runtime=args.runtime)
    if args.json:
        sys.stdout.write(to_json(doc) + "\n")
    else:
        sys.stdout.write(render_versions(doc, args.limit) + "\n")
    sys.stdout.flush()
    if args.runtime is not None and not doc["can_run"]:
        return EXIT_CANNOT_RUN
    return EXIT_OK
