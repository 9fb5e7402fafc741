"""``workbench precompile``: build the precompiled kernel library (no numba at run time)."""

from __future__ import annotations

import json
import sys

from .._common import EXIT_OK
from ..workload import precompile_models, precompile_notes, precompile_workload


def _register_precompile(sub) -> None:
    p = sub.add_parser("precompile", help="build the precompiled kernel library (no numba at run time)",
                       description="Run a workload of models with the numba kernels, then compile every kernel "
                                   "specialisation it called into one native library that the interpreter "
                                   "calls without importing numba (see workbench.perf.precompiled). "
                                   "Workload: the corpus models in the cache (python -m workbench.corpus), the "
                                   "*.tflite files of each --models DIR, and the files given; it says which "
                                   "it used.")
    p.add_argument("models", nargs="*", help="more .tflite files for the workload")
    p.add_argument("--models", dest="folders", action="append", default=[], metavar="DIR",
                   help="a folder whose *.tflite files join the workload (repeatable; e.g. the repository's "
                        "sample_models)")
    p.add_argument("--only", action="store_true", help="run only the models given (files and --models folders), "
                                                       "not the cached corpus")
    p.add_argument("--status", action="store_true", help="say what the library holds; build nothing")
    p.add_argument("--if-needed", action="store_true",
                   help="build only when there is no library for these sources and this CPU yet")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.set_defaults(run=_cmd_precompile)


def _cmd_precompile(args) -> int:
    from ...perf import precompiled

    if args.if_needed and precompiled.status()["built"]:
        args.status = True
    if not args.status:
        models, sources = precompile_models(args.folders, args.models, corpus=not args.only)
        log = (lambda *_: None) if args.json else print
        for line in sources:
            log(f"workload source: {line}")
        if not models:
            # an empty library would read as built to --if-needed: build nothing, so a later run still builds
            log("note: no workload models found in any source, so no library is built (numba compiles each "
                "kernel when first used); fetch the corpus (python -m workbench.corpus) or name models with "
                "--models DIR, then run workbench precompile again")
        else:
            manifest = precompiled.build(lambda log: precompile_workload(models, log), log=log)
            notes = precompile_notes(manifest)
            if notes and not args.json:
                print(notes)
    doc = precompiled.status()
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.status:
        state = (f"{doc['entries']} specialisation(s) of {doc['functions']} kernel function(s)" if doc["built"]
                 else "not built for these sources and this CPU (run: workbench precompile)")
        print(f"precompiled kernels in {doc['directory']} (fingerprint {doc['fingerprint']}): {state}; "
              f"{'enabled' if doc['enabled'] else 'disabled (WORKBENCH_PRECOMPILED=0 or WORKBENCH_JIT=0)'}")
    return EXIT_OK
