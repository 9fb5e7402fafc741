"""How fast does the workbench read a .tflite file, next to the FlatBuffers object API?

For every corpus model (and the MobileNets in /work/shared/models when that directory exists):

  (a) ``workbench.load(bytes)``: full decode of the structure (weights stay views of the bytes);
  (b) ``ai_edge_litert.schema_py_generated.ModelT.InitFromPackedBuf(bytes, 0)``: the flatc-generated
      object API, in the same process;
  (c) ``workbench.load(path)`` of the largest file: memory-mapped, weights never read.

Each figure is the median of N runs, N chosen so each measurement takes at least ``--min-time``
seconds (0.5 by default).  Absolute times drift between machines; the ratio is the figure to watch.

    python benchmarks/bench_parse.py            # table + goals
    python benchmarks/bench_parse.py --json     # the same as one JSON document

A script, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import workbench
from workbench import corpus

SHARED_MODELS = Path("/work/shared/models")
GOAL_RATIO = 0.2  # ours / object API on the largest graph
GOAL_LAZY_MS = 5.0  # workbench.load(path) of the biggest file
MAX_RUNS = 100_000


WARM_UP_S = 0.3


def median_seconds(fn, min_time: float, min_runs: int = 5) -> tuple[float, int]:
    """Median time of ``fn()`` over N runs, N adaptive so the runs take >= ``min_time`` in total."""
    gc.collect()
    # warm-up (both sides alike): the first runs pay for growing the allocator's arenas
    warm_runs, t0 = 0, time.perf_counter()
    while warm_runs < 3 or (time.perf_counter() - t0 < WARM_UP_S and warm_runs < MAX_RUNS):
        fn()
        warm_runs += 1
    first = max((time.perf_counter() - t0) / warm_runs, 1e-7)  # the estimate for N
    n = min(MAX_RUNS, max(min_runs, math.ceil(min_time / first)))
    times = []
    enabled = gc.isenabled()
    gc.disable()  # as timeit does: collector pauses are noise, not parsing work
    try:
        while True:
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
            if len(times) >= n and sum(times) >= min_time:
                break
            if len(times) >= MAX_RUNS:
                break
    finally:
        if enabled:
            gc.enable()
    return statistics.median(times), len(times)


def models() -> list[tuple[str, Path]]:
    found = sorted(corpus.fetch().items())
    if SHARED_MODELS.is_dir():
        found += [(p.stem, p) for p in sorted(SHARED_MODELS.glob("mobilenet*.tflite"))]
    return [(name, Path(path)) for name, path in found]


def measure(min_time: float) -> dict:
    from ai_edge_litert import schema_py_generated as generated

    rows = []
    for name, path in models():
        data = path.read_bytes()
        model = workbench.load(data)
        tensors = sum(len(sg.tensors or ()) for sg in model.subgraphs or ())
        ops = sum(len(sg.operators or ()) for sg in model.subgraphs or ())
        ours, ours_n = median_seconds(lambda: workbench.load(data), min_time)
        theirs, theirs_n = median_seconds(lambda: generated.ModelT.InitFromPackedBuf(data, 0), min_time)
        rows.append({"model": name, "path": str(path), "bytes": len(data), "tensors": tensors, "ops": ops,
                     "ours_ms": ours * 1e3, "ours_runs": ours_n, "object_api_ms": theirs * 1e3,
                     "object_api_runs": theirs_n, "ratio": ours / theirs})
        print(f"  measured {name}", file=sys.stderr, flush=True)

    largest_graph = max(rows, key=lambda r: r["tensors"])
    biggest = max(rows, key=lambda r: r["bytes"])
    lazy, lazy_n = median_seconds(lambda: workbench.load(biggest["path"]), min_time)
    return {
        "environment": {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "workbench": workbench.__version__,
            "ai_edge_litert": _version("ai-edge-litert"),
            "flatbuffers": _version("flatbuffers"),
            "min_time_s": min_time,
        },
        "models": rows,
        "goals": [
            {"goal": "parse ratio ours/object API on the largest graph", "model": largest_graph["model"],
             "tensors": largest_graph["tensors"], "value": largest_graph["ratio"], "target": GOAL_RATIO,
             "unit": "ratio", "met": largest_graph["ratio"] <= GOAL_RATIO},
            {"goal": "lazy load (memory-mapped path) of the biggest file", "model": biggest["model"],
             "bytes": biggest["bytes"], "value": lazy * 1e3, "runs": lazy_n, "target": GOAL_LAZY_MS,
             "unit": "ms", "met": lazy * 1e3 <= GOAL_LAZY_MS},
        ],
    }


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def render(result: dict) -> str:
    env = result["environment"]
    lines = [f"workbench {env['workbench']} | python {env['python']} | ai-edge-litert {env['ai_edge_litert']} | "
             f"flatbuffers {env['flatbuffers']} | {env['cpus']} cpus | median, >= {env['min_time_s']} s per figure",
             ""]
    header = f"{'model':38s} {'tensors':>7s} {'ops':>5s} {'ours ms':>9s} {'object API ms':>13s} {'ours/theirs':>11s}"
    lines += [header, "-" * len(header)]
    for r in result["models"]:
        lines.append(f"{r['model']:38s} {r['tensors']:7d} {r['ops']:5d} {r['ours_ms']:9.2f} "
                     f"{r['object_api_ms']:13.2f} {r['ratio']:11.2f}")
    lines += ["", "goals"]
    ratio, lazy = result["goals"]
    lines.append(f"  parse ratio on the largest graph ({ratio['model']}, {ratio['tensors']} tensors): "
                 f"{ratio['value']:.2f}  (goal <= {ratio['target']})  {'met' if ratio['met'] else 'NOT MET'}")
    lines.append(f"  lazy load of the biggest file ({lazy['model']}, {lazy['bytes'] / 1e6:.1f} MB): "
                 f"{lazy['value']:.2f} ms  (goal <= {lazy['target']:g} ms)  {'met' if lazy['met'] else 'NOT MET'}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print one JSON document instead of the table")
    p.add_argument("--min-time", type=float, default=0.5, metavar="S",
                   help="seconds each measurement runs at least (default 0.5)")
    args = p.parse_args(argv)
    result = measure(args.min_time)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
