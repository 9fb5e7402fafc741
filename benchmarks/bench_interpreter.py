"""Latency of the workbench interpreter vs ai-edge-litert on one model.

    python benchmarks/bench_interpreter.py MODEL.tflite [--threads N] [--runs R]

Reports, in the same run and on the same random input:
  * median invoke latency of ours, of litert's builtin kernels without XNNPACK
    (OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES) and of litert's default (XNNPACK), and ratios;
  * first-inference time of ours (Interpreter() + allocate_tensors() + first invoke, in a fresh
    process) with a cold numba cache (an empty NUMBA_CACHE_DIR) and a warm one (the same dir again).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def make_inputs(details, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]) for d in details]


def median_ms(invoke, runs: int, warmup: int = 3) -> tuple[float, float]:
    for _ in range(warmup):
        invoke()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        invoke()
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1000.0), float(np.min(times) * 1000.0)


def bench_ours(model: str, threads: int, runs: int):
    from workbench.interpreter import Interpreter

    it = Interpreter(model_path=model, num_threads=threads)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), make_inputs(it.get_input_details())):
        it.set_tensor(d["index"], x)
    return median_ms(it.invoke, runs), it


def bench_litert(model: str, threads: int, runs: int, xnnpack: bool):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kind = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    it = Interpreter(model_path=model, num_threads=threads, experimental_op_resolver_type=kind)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), make_inputs(it.get_input_details())):
        it.set_tensor(d["index"], x)
    return median_ms(it.invoke, runs), it


def first_inference(model: str, threads: int) -> dict:
    """Run in a child process: time Interpreter() + allocate_tensors() + the first invoke."""
    t0 = time.perf_counter()
    from workbench.interpreter import Interpreter

    it = Interpreter(model_path=model, num_threads=threads)
    it.allocate_tensors()
    t1 = time.perf_counter()
    for d, x in zip(it.get_input_details(), make_inputs(it.get_input_details())):
        it.set_tensor(d["index"], x)
    it.invoke()
    t2 = time.perf_counter()
    it.invoke()
    t3 = time.perf_counter()
    return {"allocate_ms": (t1 - t0) * 1000, "first_invoke_ms": (t2 - t1) * 1000, "total_ms": (t2 - t0) * 1000,
            "second_invoke_ms": (t3 - t2) * 1000}


def child_first_inference(model: str, threads: int, cache_dir: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, __file__, model, "--threads", str(threads), "--first-inference-child"],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--first-inference-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--profile", action="store_true", help="also print our per-op profile")
    args = p.parse_args(argv)
    if args.first_inference_child:
        print(json.dumps(first_inference(args.model, args.threads)))
        return 0

    print(f"model: {args.model}\nthreads: {args.threads}, runs: {args.runs}")
    with tempfile.TemporaryDirectory() as cache:
        cold = child_first_inference(args.model, args.threads, cache)
        warm = child_first_inference(args.model, args.threads, cache)
    (ours, ours_min), it = bench_ours(args.model, args.threads, args.runs)
    (builtin, builtin_min), lit = bench_litert(args.model, args.threads, args.runs, xnnpack=False)
    (xnn, xnn_min), _ = bench_litert(args.model, args.threads, args.runs, xnnpack=True)
    # the same input gives the same answer
    out_ours = it.get_tensor(it.get_output_details()[0]["index"])
    out_lit = lit.get_tensor(lit.get_output_details()[0]["index"])
    err = float(np.abs(out_ours - out_lit).max() / (np.abs(out_lit).max() + 1))

    print(f"\n{'':34}{'median ms':>12}{'min ms':>10}{'ours / this':>14}")
    print(f"{'workbench (ours)':34}{ours:>12.2f}{ours_min:>10.2f}{1.0:>14.2f}")
    print(f"{'litert builtin (no XNNPACK)':34}{builtin:>12.2f}{builtin_min:>10.2f}{ours / builtin:>14.2f}")
    print(f"{'litert default (XNNPACK)':34}{xnn:>12.2f}{xnn_min:>10.2f}{ours / xnn:>14.2f}")
    print(f"\nmax |ours - litert builtin| / (max |litert| + 1) on output 0: {err:.2e}")
    print("\nfirst inference of ours (fresh process: import + Interpreter + allocate_tensors + invoke):")
    for label, r in (("cold numba cache", cold), ("warm numba cache", warm)):
        print(f"  {label}: {r['total_ms']:.0f} ms (import+allocate {r['allocate_ms']:.0f} ms, first invoke "
              f"{r['first_invoke_ms']:.0f} ms; second invoke {r['second_invoke_ms']:.1f} ms)")
    if args.profile:
        print()
        print(it.profile(runs=10))
    return 0


if __name__ == "__main__":
    sys.exit(main())
