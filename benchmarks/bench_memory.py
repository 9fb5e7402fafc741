"""Peak resident memory while running MobileNet v1 1.0/224 (float32 and int8): ours vs ai-edge-litert.

    python benchmarks/bench_memory.py [--runs 5] [--threads 1] [--models DIR] [--model PATH ...]

Every (model, runtime) pair runs in its own fresh child process, in the same conditions: the same
python, ``numpy`` imported, then the runtime's interpreter module imported, then load, allocate,
set a seeded input, 1 warm-up invoke and ``--runs`` more.  The child reads ``VmHWM`` (the peak
resident set) and ``VmRSS`` from ``/proc/self/status`` (``ru_maxrss`` where there is no /proc) at
four moments and reports:

* ``imports``   RSS right after the imports (the baseline every runtime starts from);
* ``allocated`` RSS after the model is loaded and its tensors allocated;
* ``peak``      the peak RSS of the whole run (VmHWM);
* ``peak - imports``: what running the model costs on top of the imported runtime.

Runtimes: ``ours`` (workbench.interpreter with its precompiled kernel library, built by ``make
kernels`` / ``workbench precompile``: the kernels run without numba in the process — the script says
whether the library is there; without it ``ours`` equals ``ours-numba``), ``ours-numba`` (the same with
``WORKBENCH_PRECOMPILED=0``: numba compiles or loads its cache during the warm-up invoke, which
imports numba and starts LLVM), ``builtin`` (litert's builtin kernels,
OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES) and ``default`` (litert's default, with XNNPACK).
The goal is ours <= 1.5x litert on the whole process's peak.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT.parent / "shared" / "models"
DEFAULT_MODELS = ("mobilenet_v1_a10_224_float32.tflite", "mobilenet_v1_a10_224_int8.tflite")
RUNTIMES = ("ours", "ours-numba", "builtin", "default")

CHILD = r"""
import json, os, resource, sys
sys.path.insert(0, sys.argv[4])

def status():
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields["VmRSS"].split()[0]) * 1024, int(fields["VmHWM"].split()[0]) * 1024
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        return peak, peak

runtime, path, runs, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[5])
import numpy as np
if runtime.startswith("ours"):
    from workbench.interpreter import Interpreter
    make = lambda: Interpreter(model_path=path, num_threads=threads)
else:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    kind = (OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if runtime == "builtin" else OpResolverType.AUTO)
    make = lambda: Interpreter(model_path=path, num_threads=threads, experimental_op_resolver_type=kind)
rss_imports, _ = status()
it = make()
it.allocate_tensors()
rss_allocated, _ = status()
d = it.get_input_details()[0]
rng = np.random.default_rng(0)
if np.dtype(d["dtype"]) == np.float32:
    x = rng.uniform(-1, 1, d["shape"]).astype(np.float32)
else:
    x = rng.integers(-128, 128, d["shape"]).astype(d["dtype"])
it.set_tensor(d["index"], x)
it.invoke()
rss_warm, _ = status()
for _ in range(runs):
    it.invoke()
y = it.get_tensor(it.get_output_details()[0]["index"])
rss_end, peak = status()
print(json.dumps({"numba": "numba" in sys.modules, "imports": rss_imports, "allocated": rss_allocated,
                  "warm": rss_warm, "end": rss_end, "peak": peak}))
"""


def measure(runtime: str, model: Path, runs: int, threads: int) -> dict:
    """Run one (runtime, model) in a fresh child process; the child's RSS figures in bytes."""
    env = dict(os.environ)
    if runtime == "ours-numba":
        env["WORKBENCH_PRECOMPILED"] = "0"
    proc = subprocess.run([sys.executable, "-c", CHILD, runtime, str(model), str(runs), str(ROOT), str(threads)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{runtime} on {model.name} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def mb(n: int) -> str:
    return f"{n / 2 ** 20:7.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="invokes after the warm-up (default 5)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", type=Path, action="append", help="a model (repeatable); default: MobileNet v1 1.0/224 "
                    "float32 and int8 from ../shared/models")
    args = ap.parse_args(argv)
    models = args.model or [MODELS / m for m in DEFAULT_MODELS]
    models = [m for m in models if m.exists()]
    if not models:
        print(f"no model found (looked in {MODELS}); nothing to measure")
        return 0
    sys.path.insert(0, str(ROOT))
    from workbench.perf import precompiled

    lib = precompiled.status()
    print(f"precompiled kernel library: {'in use' if lib['in_use'] else 'NOT BUILT (run: make kernels)'} "
          f"({lib['directory']}, fingerprint {lib['fingerprint']})")
    print(f"peak resident memory (MiB), each runtime in a fresh child process: numpy + runtime imported, load, "
          f"allocate, 1 warm-up + {args.runs} invokes, {args.threads} thread(s)")
    worst = {}
    for model in models:
        res = {rt: measure(rt, model, args.runs, args.threads) for rt in RUNTIMES}
        print(f"\n{model.name}")
        print(f"  {'runtime':10s} {'imports':>8s} {'allocated':>9s} {'warm':>8s} {'peak':>8s} "
              f"{'peak-imports':>13s}  numba")
        for rt in RUNTIMES:
            r = res[rt]
            print(f"  {rt:10s} {mb(r['imports']):>8s} {mb(r['allocated']):>9s} {mb(r['warm']):>8s} {mb(r['peak']):>8s} "
                  f"{mb(r['peak'] - r['imports']):>13s}  {'imported' if r['numba'] else '-'}")
        for mine in ("ours", "ours-numba"):
            ours = res[mine]
            for rt in ("builtin", "default"):
                r = res[rt]
                total = ours["peak"] / r["peak"]
                extra = (ours["peak"] - ours["imports"]) / max(1, r["peak"] - r["imports"])
                if rt == "builtin":
                    worst[mine] = max(worst.get(mine, 0.0), total)
                print(f"  {mine:10s} / litert {rt:8s}: total peak {total:5.2f}x, peak - imports {extra:5.2f}x")
    for mine, w in worst.items():
        print(f"worst {mine} / litert builtin, whole-process peak: {w:.2f}x (goal <= 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
