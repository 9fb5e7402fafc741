"""Start-up cost: ``import workbench``, and import + load + allocate + first inference in a fresh process.

    python benchmarks/bench_startup.py [--repeat 3] [--model PATH ...]

Every figure comes from a fresh child process (median of ``--repeat`` children):

* ``import workbench`` alone, and ``import workbench.interpreter``;
* for MobileNet v1 0.25/128 float32 and int8 (../shared/models): import + Interpreter() +
  allocate_tensors() + set_tensor + the first invoke, split into its parts, with

  - a **cold** numba cache: NUMBA_CACHE_DIR is a new empty directory for each child, so every
    numba kernel the model uses is compiled;
  - a **warm** cache: the same directory after a first child filled it (what a user sees from the
    second run on);
  - ``lib``: the precompiled kernel library (``make kernels``; see
    workbench.perf.precompiled): no numba in the process at all.  Cold and warm run with
    ``WORKBENCH_PRECOMPILED=0``.

The goal is ≤ 1.5 s for the warm first inference.  The process's own start (the python binary,
site) is reported apart (``python -c pass``).  Python's own bytecode cache (``__pycache__/*.pyc``) is
on in the children, as for a user, and filled by a first throw-away child, even when this shell
sets PYTHONDONTWRITEBYTECODE (``--no-pyc`` keeps it off: every module is then compiled from source
in every child, which costs about 0.2–0.4 s more here).
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

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT.parent / "shared" / "models"
DEFAULT_MODELS = ("mobilenet_v1_a025_128_float32.tflite", "mobilenet_v1_a025_128_int8.tflite")

IMPORT = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import importlib
importlib.import_module(sys.argv[2])
print((time.perf_counter() - t0) * 1000)
"""

FIRST = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import numpy as np
t_np = time.perf_counter()
from workbench.interpreter import Interpreter
t_imp = time.perf_counter()
it = Interpreter(model_path=sys.argv[2])
t_load = time.perf_counter()
it.allocate_tensors()
t_alloc = time.perf_counter()
d = it.get_input_details()[0]
rng = np.random.default_rng(0)
x = (rng.uniform(-1, 1, d["shape"]).astype(np.float32) if d["dtype"] == np.float32
     else rng.integers(-128, 128, d["shape"]).astype(d["dtype"]))
it.set_tensor(d["index"], x)
it.invoke()
t_first = time.perf_counter()
it.invoke()
t_second = time.perf_counter()
ms = lambda a, b: round((b - a) * 1000, 1)
print(json.dumps({"numpy": ms(t0, t_np), "import": ms(t_np, t_imp), "load": ms(t_imp, t_load),
                  "allocate": ms(t_load, t_alloc), "first invoke": ms(t_alloc, t_first),
                  "total": ms(t0, t_first), "second invoke": ms(t_first, t_second),
                  "numba imported": "numba" in sys.modules}))
"""


BASE_ENV = dict(os.environ)


def child(code: str, *args, env=None) -> str:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          env={**BASE_ENV, **(env or {})})
    wall = (time.perf_counter() - t0) * 1000
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    lines = proc.stdout.strip().splitlines()
    return (lines[-1] if lines else ""), wall


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--model", type=Path, action="append")
    ap.add_argument("--no-pyc", action="store_true", help="keep PYTHONDONTWRITEBYTECODE as this shell has it")
    args = ap.parse_args(argv)
    r = args.repeat
    if not args.no_pyc:
        BASE_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    child(IMPORT, ROOT, "workbench.interpreter.registry")        # fills __pycache__ (when allowed)
    child("import sys; sys.path.insert(0, sys.argv[1]); from workbench.interpreter.registry import "
          "BuiltinOpResolver; BuiltinOpResolver()", ROOT)
    bare = median([child("pass")[1] for _ in range(r)])
    print(f"fresh child processes, median of {r}; python -c pass: {bare:.0f} ms wall")
    for mod in ("workbench", "workbench.interpreter"):
        ms = median([float(child(IMPORT, ROOT, mod)[0]) for _ in range(r)])
        print(f"  import {mod:24s} {ms:7.1f} ms")
    models = [m for m in (args.model or [MODELS / m for m in DEFAULT_MODELS]) if m.exists()]
    if not models:
        print(f"no model found (looked in {MODELS})")
        return 0
    keys = ("numpy", "import", "load", "allocate", "first invoke", "total")
    print("\nimport + load + allocate + first invoke (ms, inside the child; wall = whole child process)")
    print(f"  {'model':38s} {'cache':5s} " + " ".join(f"{k:>12s}" for k in keys) + f" {'wall':>7s}")
    worst = 0.0
    for path in models:
        for cache in ("cold", "warm", "lib"):
            rows, walls = [], []
            for _ in range(r):
                with tempfile.TemporaryDirectory(prefix="numba-cache-") as tmp:
                    env = {"NUMBA_CACHE_DIR": tmp} if cache == "lib" else {"NUMBA_CACHE_DIR": tmp,
                                                                             "WORKBENCH_PRECOMPILED": "0"}
                    if cache == "warm":
                        child(FIRST, ROOT, path, env=env)
                    out, wall = child(FIRST, ROOT, path, env=env)
                rows.append(json.loads(out))
                walls.append(wall)
            med = {k: median([row[k] for row in rows]) for k in keys}
            if cache == "warm":
                worst = max(worst, med["total"])
            numba = sum(row["numba imported"] for row in rows)
            print(f"  {path.name:38s} {cache:5s} " + " ".join(f"{med[k]:12.1f}" for k in keys)
                  + f" {median(walls):7.0f}" + ("  (numba imported)" if cache == "lib" and numba else ""))
    print(f"\nworst warm first inference (import..first invoke, numba path): {worst / 1000:.2f} s (goal <= 1.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
