"""Ours / LiteRT's default interpreter (XNNPACK) on the MobileNets, 1 and 2 threads, in one run.

    python benchmarks/bench_vs_xnnpack.py [--runs 300] [--rounds 60] [--model PATH ...]

Default models (from ../shared/models): MobileNet v1 1.0/224 float32 and int8 and MobileNet v2
1.0/224 float32.  A model missing there is named and skipped.  The MobileNet v2 1.0/224 float file is
not in the shared folder today, and no converter is installed here, so it is built in code with the
Keras application's layers and seeded random weights (``benchmarks/mobilenet_v2_file.py``; both
runtimes run that one file) and the table says so; ``--standin`` measures the converter-made 0.35/96
file instead, as earlier runs did.

Method: both interpreters live in this process and get the same seeded input.  After a warm-up,
the rounds alternate over every (runtime, threads) pair, so a slow phase of a shared machine hurts
all of them alike; each pair gets ``runs`` invokes in all (at least 15), and the table shows the
median and the minimum in milliseconds and ours / XNNPACK for both, and the median over the rounds of
each round's ratio (ours' median in that round / XNNPACK's): a comparison of neighbours in time, which
this VM's slow and fast stretches of several seconds move less than the two overall medians.  The
defaults, 300 invokes in 60 rounds (5 a set, about a minute here), keep the two runtimes' sets close in
time: where a slow stretch (one CPU at 50-70 % for seconds) begins in the middle of a run, each
runtime's invokes are then a mixture of a fast and a slow group, and an overall median means something
only if both runtimes have about the same share in each.  With 15 invokes in 5 rounds a one-thread v2
run printed 1.14x where its rounds' median ratio was 0.99x; with 300 in 30 rounds (10 a set) a
two-thread v2 run printed 1.17x, its rounds' median ratio 0.96x, after such a stretch began (the
steadiness line after the rounds said so).  Each
round takes the pairs in a new (seeded) order, and each pair's set of invokes starts after a short
pause and one untimed invoke, so that neither runtime's idle worker threads, still spinning after its
own set, take a core from the other's (see :data:`SETTLE_S`).  LiteRT is
``ai_edge_litert.interpreter.Interpreter(num_threads=n)`` with the default op resolver, which
applies the XNNPACK delegate (ai-edge-litert's ``interpreter.py``, ``OpResolverType.AUTO``).

Before and after the rounds it prints how steadily each CPU ran (:func:`cpu_steadiness`: 0.5 s of a
counting loop on each CPU at once, in 5 ms windows): on a shared machine one CPU can run at half speed
for seconds, which moves a two-thread median whichever runtime it meets.

``--memory-load`` asks how each runtime bears another core's memory traffic, as a shared machine's
neighbours make it: this process runs on one CPU, one thread per interpreter, while a second process on
another CPU copies a 32 MB array into another, over and over (the last-level cache and the memory bus
busy, nothing else).  Rounds alternate with that process stopped (SIGSTOP) and running
(SIGCONT); the table gives ours / XNNPACK quiet and loaded, and how much slower each runtime ran loaded.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for _p in (str(ROOT), str(ROOT / "benchmarks")):
    if _p not in sys.path:
        sys.path.insert(0, _p)
MODELS = ROOT.parent / "shared" / "models"
DEFAULT_MODELS = (("mobilenet_v1_a10_224_float32.tflite", None),
                  ("mobilenet_v1_a10_224_int8.tflite", None),
                  ("mobilenet_v2_a10_224_float32.tflite", "built"))
STANDIN_V2 = "mobilenet_v2_a035_96_float32.tflite"


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (on a shared machine they say how busy the other cores were)."""
    try:
        return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except (AttributeError, OSError):
        return "unknown"


STEADY_PROBE = ("import os, sys, time\n"
                "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
                "start, win, n = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])\n"
                "counts = [0] * n\n"
                "while time.time() < start:\n"
                "    pass\n"
                "t0 = time.perf_counter()\n"
                "for w in range(n):\n"
                "    end, c = t0 + (w + 1) * win, 0\n"
                "    while time.perf_counter() < end:\n"
                "        c += 1\n"
                "    counts[w] = c\n"
                "print(' '.join(map(str, counts)))\n")
"""One CPU's probe: from a common start time, how many turns of a Python loop each window of ``win`` seconds
held (the loop's speed is the CPU's, whatever else the machine's host gives it)."""


def cpu_steadiness(seconds: float = 0.5, window: float = 0.005) -> dict:
    """{cpu: (median, 10th percentile, share of windows under 70 %, fastest)} of each CPU's speed in windows of
    ``window`` seconds, each window against the fastest window of any CPU, all CPUs probed at the same time
    by one pinned process each.  On a shared machine a CPU can run at half speed for seconds (its host's other
    work); two threads then run at about one and a half threads' speed for any runtime, and which
    runtime's rounds such a stretch covers moves a run's medians: printed before and after a run, so that
    a reader can tell a steady run from another."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    n = max(1, int(round(seconds / window)))
    start = time.time() + 0.2
    procs = [subprocess.Popen([sys.executable, "-c", STEADY_PROBE, str(c), repr(start), repr(window), str(n)],
                              stdout=subprocess.PIPE, text=True) for c in cpus]
    counts = {c: np.array(pr.communicate()[0].split(), np.float64) for c, pr in zip(cpus, procs)}
    for c, v in counts.items():
        if v.size != n:
            raise RuntimeError(f"the steadiness probe of CPU {c} gave {v.size} windows, not {n}")
    best = max([1.0] + [float(v.max()) for v in counts.values() if v.size])
    out = {}
    for c, v in counts.items():
        rel = v / best
        out[c] = (float(np.median(rel)), float(np.percentile(rel, 10)), float((rel < 0.7).mean()), float(rel.max()))
    return out


def steadiness_line(when: str) -> str:
    parts = [f"cpu{c} median {m:.0%}, p10 {p:.0%}, under 70 %: {u:.0%} of windows"
             for c, (m, p, u, _) in cpu_steadiness().items()]
    return f"CPU speed {when} (0.5 s in 5 ms windows, each against the fastest window): " + "; ".join(parts)


def seeded_input(d: dict) -> np.ndarray:
    rng = np.random.default_rng(0)
    if d["dtype"] == np.float32:
        return rng.uniform(-1, 1, d["shape"]).astype(np.float32)
    info = np.iinfo(d["dtype"])
    return rng.integers(info.min, info.max + 1, d["shape"]).astype(d["dtype"])


def interpreters(path: Path, threads: tuple[int, ...]) -> dict:
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    from workbench.interpreter import Interpreter

    its = {}
    for n in threads:
        for name, cls in (("ours", Interpreter), ("xnnpack", LiteRT)):
            it = cls(model_path=str(path), num_threads=n)
            it.allocate_tensors()
            d = it.get_input_details()[0]
            it.set_tensor(d["index"], seeded_input(d))
            its[name, n] = it
    return its


SETTLE_S = 0.02
"""Pause before each (runtime, threads) set of a round: both runtimes' worker threads spin for a while
after a parallel invoke (ours ~0.1-0.5 ms, pthreadpool's longer), and on a 2-core machine a spinning
worker of the set before takes a core from the set being timed, a cost no user running one runtime pays."""


def measure(its: dict, runs: int, rounds: int, warmup: int = 3) -> dict:
    for it in its.values():
        for _ in range(warmup):
            it.invoke()
    times = {key: [] for key in its}
    rounds_of = {key: [] for key in its}        # each round's median, by pair
    per_round = max(1, -(-runs // rounds))
    order = list(its)
    rng = np.random.default_rng(0)
    for _ in range(rounds):
        # a new order every round: no (runtime, threads) always comes first, or after the same other one
        for k in rng.permutation(len(order)):
            key = order[k]
            it = its[key]
            time.sleep(SETTLE_S)
            it.invoke()                 # wakes the runtime's threads (not timed)
            start = len(times[key])
            for _ in range(per_round):
                t0 = time.perf_counter()
                it.invoke()
                times[key].append(time.perf_counter() - t0)
            rounds_of[key].append(float(np.median(times[key][start:])))
    return {key: (1000 * float(np.median(v)), 1000 * float(np.min(v)), rounds_of[key]) for key, v in times.items()}


STREAMER = ("import os, sys, numpy as np\n"
            "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
            "a, b = np.ones(32 << 20, np.uint8), np.zeros(32 << 20, np.uint8)\n"
            "while True:\n"
            "    b[...] = a\n")
"""The other core's load for ``--memory-load``: one 32 MB array copied into another, over and over (a
memcpy: reads and writes at the memory bus's pace, through a last-level cache they do not fit in)."""


def measure_under_load(its: dict, runs: int, rounds: int) -> dict:
    """:func:`measure`'s rounds on one CPU, alternately with :data:`STREAMER` stopped and running on another:
    {(runtime, threads, loaded): median ms}."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--memory-load needs two CPUs")
    streamer = subprocess.Popen([sys.executable, "-c", STREAMER, str(cpus[-1])])
    try:
        os.sched_setaffinity(0, {cpus[0]})
        time.sleep(0.5)                  # its two arrays allocated and written once
        for it in its.values():
            for _ in range(3):
                it.invoke()
        times = {(*key, loaded): [] for key in its for loaded in (False, True)}
        per_round = max(1, -(-runs // rounds))
        rng = np.random.default_rng(0)
        for r in range(rounds):
            for loaded in ((False, True) if r % 2 else (True, False)):
                streamer.send_signal(signal.SIGCONT if loaded else signal.SIGSTOP)
                time.sleep(SETTLE_S)
                for k in rng.permutation(len(its)):
                    key = list(its)[k]
                    its[key].invoke()
                    for _ in range(per_round):
                        t0 = time.perf_counter()
                        its[key].invoke()
                        times[(*key, loaded)].append(time.perf_counter() - t0)
    finally:
        streamer.kill()
        streamer.wait()
        os.sched_setaffinity(0, set(cpus))
    return {key: 1000 * float(np.median(v)) for key, v in times.items()}


def agreement(its: dict, n: int) -> str:
    ours, theirs = its["ours", n], its["xnnpack", n]
    a = ours.get_tensor(ours.get_output_details()[0]["index"]).astype(np.float64)
    b = theirs.get_tensor(theirs.get_output_details()[0]["index"]).astype(np.float64)
    return f"max |ours - xnnpack| on output 0: {np.abs(a - b).max():.3g}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300, help="invokes per runtime and thread count (>= 15)")
    ap.add_argument("--rounds", type=int, default=60, help="alternating rounds (default 60)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--model", type=Path, action="append")
    ap.add_argument("--memory-load", action="store_true",
                    help="one thread, quiet against another core copying 32 MB over and over (see above)")
    ap.add_argument("--standin", action="store_true",
                    help=f"without the MobileNet v2 1.0/224 file, measure {STANDIN_V2} instead of the built one")
    args = ap.parse_args(argv)
    runs = max(15, args.runs)
    models = []
    if args.model:
        models = [(m, "") for m in args.model]
    else:
        for name, standin in DEFAULT_MODELS:
            if (MODELS / name).exists():
                models.append((MODELS / name, ""))
            elif standin and args.standin and (MODELS / STANDIN_V2).exists():
                models.append((MODELS / STANDIN_V2, f"  (stand-in: {name} is not in {MODELS})"))
            elif standin == "built":
                import mobilenet_v2_file

                models.append((mobilenet_v2_file.path(), "  (built in code: Keras's layers, seeded random weights)"))
            else:
                print(f"skipped: {name} is not in {MODELS}")
    if args.memory_load:
        print(f"median ms per invoke on one CPU, one thread, {runs}+ invokes each quiet and loaded, {args.rounds} "
              f"alternating rounds; load average {load_average()}")
        print(f"{'model':38s} {'ours':>7s} {'xnnpack':>8s} {'ratio':>6s} | {'loaded: ours':>12s} {'xnnpack':>8s} "
              f"{'ratio':>6s} | {'slower: ours':>12s} {'xnnpack':>8s}")
        for path, _ in models:
            its = interpreters(path, (1,))
            m = measure_under_load(its, runs, args.rounds)
            oq, xq, ol, xl = (m["ours", 1, False], m["xnnpack", 1, False], m["ours", 1, True], m["xnnpack", 1, True])
            print(f"{path.stem:38s} {oq:7.2f} {xq:8.2f} {oq / xq:5.2f}x | {ol:12.2f} {xl:8.2f} {ol / xl:5.2f}x | "
                  f"{ol / oq:11.2f}x {xl / xq:7.2f}x")
            del its
        return 0
    threads = tuple(args.threads)
    print(steadiness_line("before"))
    print(f"median (min) ms per invoke, {runs}+ invokes each after 3 warm-up, {args.rounds} alternating rounds; "
          f"load average {load_average()}")
    print(f"{'model':38s} {'thr':>3s} {'ours':>15s} {'xnnpack':>15s} {'ours/xnnpack':>13s} {'(min)':>6s} "
          f"{'(rounds)':>8s}")
    for path, note in models:
        its = interpreters(path, threads)
        res = measure(its, runs, args.rounds)
        for n in threads:
            o, x = res["ours", n], res["xnnpack", n]
            paired = float(np.median(np.array(o[2]) / np.array(x[2])))
            print(f"{path.stem:38s} {n:3d} {o[0]:8.2f} ({o[1]:5.2f}) {x[0]:8.2f} ({x[1]:5.2f}) "
                  f"{o[0] / x[0]:12.2f}x {o[1] / x[1]:5.2f}x {paired:7.2f}x{note if n == threads[0] else ''}")
        print(f"{'':38s}     {agreement(its, threads[0])}")
        del its
    print(f"load average at the end {load_average()}")
    print(steadiness_line("after"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
