"""``workbench bench MODEL``: median invoke latency, optionally beside ai-edge-litert's in the same run."""

from __future__ import annotations

import json
import sys

from .._common import EXIT_OK, _nonnegative, _positive
from ..inputs import SHAPE_HELP, _allocate_and_feed, _input_position, _parse_shape


def _register_bench(sub) -> None:
    p = sub.add_parser("bench", help="median invoke latency (optionally side by side with ai-edge-litert)",
                       description="Time workbench.Interpreter on MODEL; with --vs-litert also ai-edge-litert's "
                                   "builtin kernels (no XNNPACK) and its default (XNNPACK) path, on the same "
                                   "seeded inputs in the same run, and print the ratios. --shape resizes "
                                   "the input for every runtime measured (litert's resize_tensor_input).")
    p.add_argument("model", help="path of a .tflite file")
    p.add_argument("--threads", type=_positive, default=1, metavar="N", help="threads, 1 or more (default 1)")
    p.add_argument("--runs", type=_nonnegative, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...", help=SHAPE_HELP)
    p.add_argument("--vs-litert", action="store_true", help="measure ai-edge-litert too (needs it installed)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.set_defaults(run=_cmd_bench)


def _cmd_bench(args) -> int:
    from ...bench import litert_median, median_ms
    from ...interpreter import Interpreter

    it = Interpreter(model_path=args.model, num_threads=args.threads)
    _allocate_and_feed(it, [], args.shape, args.seed)
    details = it.get_input_details()
    # the inputs --shape resized, by the same name/position mapping, for litert to resize the same way
    given = sorted({_input_position(details, _parse_shape(spec)[0], "--shape") for spec in args.shape})
    resized = [(pos, details[pos]["name"], [int(v) for v in details[pos]["shape"]]) for pos in given]
    rows = {"workbench": median_ms(it.invoke, args.runs)}
    rows["workbench"]["inputs"] = {d["name"]: [int(v) for v in d["shape"]] for d in details}
    rows["workbench"]["outputs"] = {d["name"]: [int(v) for v in it.get_tensor(d["index"]).shape]
                                    for d in it.get_output_details()}
    if args.vs_litert:
        rows["litert builtin (no XNNPACK)"] = litert_median(args.model, args.threads, args.runs, False, args.seed,
                                                            resized)
        rows["litert default (XNNPACK)"] = litert_median(args.model, args.threads, args.runs, True, args.seed,
                                                         resized)
    ours = rows["workbench"]["median_ms"]
    for r in rows.values():
        r["ours_over_this"] = ours / r["median_ms"] if r["median_ms"] else None
    inputs = {d["name"]: [int(v) for v in d["shape"]] for d in it.get_input_details()}
    doc = {"file": args.model, "threads": args.threads, "runs": args.runs, "inputs": inputs, "results": rows}
    if args.json:
        json.dump(doc, sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
        return EXIT_OK
    shapes = f", inputs {', '.join(f'{k} {v}' for k, v in inputs.items())}" if args.shape else ""
    out = [f"{args.model}: {args.threads} thread(s), median of {args.runs} invokes{shapes}",
           f"{'':32}{'median ms':>11}{'min ms':>10}{'ours / this':>13}"]
    for name, r in rows.items():
        out.append(f"{name:32}{r['median_ms']:>11.2f}{r['min_ms']:>10.2f}{r['ours_over_this']:>13.2f}")
    sys.stdout.write("\n".join(out) + "\n")
    return EXIT_OK
