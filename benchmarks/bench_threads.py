"""1 → 2 thread speed-up of ours, litert builtin and litert default (XNNPACK), in one run.

    python benchmarks/bench_threads.py [--runs 30] [--threads 2] [--model PATH ...]

Default models: MobileNet v1 1.0/224 float32 and int8 from ../shared/models.  For every model and
runtime the median invoke time with 1 and with N threads is measured on the same seeded input
(litert in a child process; ours in this one), and the speed-up t(1)/t(N) printed.  The goal:
ours scales at least as well as litert builtin.  On a machine shared with other work the figures
move from run to run; the rounds alternate 1 and N threads so that a slow phase hurts both, and the
minima are printed beside the medians (with more runnable threads than CPUs, any runtime's N-thread
figure collapses: OpenBLAS and ruy wait for their busy threads).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
MODELS = ROOT.parent / "shared" / "models"
DEFAULT_MODELS = ("mobilenet_v1_a10_224_float32.tflite", "mobilenet_v1_a10_224_int8.tflite")

LITERT = r"""
import json, sys, time, numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
path, runs, threads, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
res = {}
its = {}
for kind in ("builtin", "default"):
    rt = OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if kind == "builtin" else OpResolverType.AUTO
    for n in (1, threads):
        it = Interpreter(model_path=path, num_threads=n, experimental_op_resolver_type=rt)
        it.allocate_tensors()
        d = it.get_input_details()[0]
        rng = np.random.default_rng(0)
        x = (rng.uniform(-1, 1, d["shape"]).astype(np.float32) if d["dtype"] == np.float32
             else rng.integers(-128, 128, d["shape"]).astype(d["dtype"]))
        it.set_tensor(d["index"], x)
        it.invoke()
        its[kind, n] = it
times = {key: [] for key in its}
for _ in range(rounds):
    for key, it in its.items():
        for _ in range(runs // rounds):
            t0 = time.perf_counter(); it.invoke(); times[key].append(time.perf_counter() - t0)
print(json.dumps({f"{k}:{n}": [1000 * float(np.median(v)), 1000 * float(np.min(v))] for (k, n), v in times.items()}))
"""


def ours(path: Path, runs: int, threads: int, rounds: int) -> dict:
    from workbench.interpreter import Interpreter

    its = {}
    for n in (1, threads):
        it = Interpreter(model_path=path, num_threads=n)
        it.allocate_tensors()
        d = it.get_input_details()[0]
        rng = np.random.default_rng(0)
        x = (rng.uniform(-1, 1, d["shape"]).astype(np.float32) if d["dtype"] == np.float32
             else rng.integers(-128, 128, d["shape"]).astype(d["dtype"]))
        it.set_tensor(d["index"], x)
        it.invoke()
        its[n] = it
    times = {n: [] for n in its}
    for _ in range(rounds):
        for n, it in its.items():
            for _ in range(runs // rounds):
                t0 = time.perf_counter()
                it.invoke()
                times[n].append(time.perf_counter() - t0)
    return {n: [1000 * float(np.median(v)), 1000 * float(np.min(v))] for n, v in times.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3, help="alternations of 1 and N threads (default 3)")
    ap.add_argument("--model", type=Path, action="append")
    args = ap.parse_args(argv)
    models = [m for m in (args.model or [MODELS / m for m in DEFAULT_MODELS]) if m.exists()]
    if not models:
        print(f"no model found (looked in {MODELS}); nothing to measure")
        return 0
    n = args.threads
    print(f"median ms per invoke over {args.runs} invokes ({args.rounds} alternating rounds), 1 vs {n} threads")
    for path in models:
        mine = ours(path, args.runs, n, args.rounds)
        proc = subprocess.run([sys.executable, "-c", LITERT, str(path), str(args.runs), str(n), str(args.rounds)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-2000:])
            return 1
        lt = json.loads(proc.stdout.strip().splitlines()[-1])
        rows = [("workbench", mine[1], mine[n]), ("litert builtin", lt["builtin:1"], lt[f"builtin:{n}"]),
                ("litert default", lt["default:1"], lt[f"default:{n}"])]
        print(f"\n{path.name}")
        print(f"  {'runtime':16s} {'1 thread':>9s} {f'{n} threads':>10s} {'speed-up':>9s}   (minima: 1, {n}, speed-up)")
        for name, one, many in rows:
            print(f"  {name:16s} {one[0]:9.2f} {many[0]:10.2f} {one[0] / many[0]:8.2f}x   "
                  f"({one[1]:.2f}, {many[1]:.2f}, {one[1] / many[1]:.2f}x)")
        for k, what in ((0, "medians"), (1, "minima")):
            ok = rows[0][1][k] / rows[0][2][k] >= rows[1][1][k] / rows[1][2][k]
            print(f"  {what}: ours scales {'at least as well as' if ok else 'less well than'} litert builtin")
    return 0


if __name__ == "__main__":
    sys.exit(main())
