"""int8 MobileNet v1 1.0 224: this workbench vs ai-edge-litert (builtin kernels, and default = XNNPACK), 1 thread.

    python benchmarks/bench_quantized.py [--runs 20] [--model PATH]

litert runs in a child process (it can abort the whole process on a failed check).  Prints median
(and minimum) milliseconds per invoke and the ratio ours / litert builtin (goal ≤ 1.0), plus
whether the outputs are bit-exact with the builtin kernels on the same input, and which kernels
our CONV_2D nodes use (``vnni``: the int8 dot-product path of :mod:`workbench.perf.vnni`;
``WORKBENCH_VNNI=0`` shows the portable float-BLAS path).  The 1 → 2 thread figures are in
``bench_threads.py``, memory in ``bench_memory.py``, start-up in ``bench_startup.py``.
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
sys.path.insert(0, str(ROOT))
DEFAULT_MODEL = ROOT.parent / "shared" / "models" / "mobilenet_v1_a10_224_int8.tflite"

LITERT = r"""
import json, sys, time, numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
path, runs, x_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
x = np.load(x_path)
res = {}
for kind in ("builtin", "default"):
    kw = ({"experimental_op_resolver_type": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}
          if kind == "builtin" else {})
    it = Interpreter(model_path=path, num_threads=1, **kw)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], x); it.invoke()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter(); it.invoke(); ts.append(time.perf_counter() - t0)
    out = it.get_tensor(it.get_output_details()[0]["index"])
    np.save(x_path + f".{kind}.npy", out)
    res[kind] = 1000 * float(np.median(ts))
    res[kind + "_min"] = 1000 * float(np.min(ts))
print(json.dumps(res))
"""


AGREEMENT = r"""
import json, sys, numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
out = {}
for path in sys.argv[2:]:
    its = {}
    for kind in ("builtin", "default"):
        kw = ({"experimental_op_resolver_type": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}
              if kind == "builtin" else {})
        its[kind] = Interpreter(model_path=path, num_threads=1, **kw)
        its[kind].allocate_tensors()
    d = its["builtin"].get_input_details()[0]
    equal = total = maxdiff = 0
    for seed in range(int(sys.argv[1])):
        x = np.random.default_rng(seed).integers(-128, 128, d["shape"]).astype(np.int8)
        ys = {}
        for kind, it in its.items():
            it.set_tensor(it.get_input_details()[0]["index"], x); it.invoke()
            ys[kind] = it.get_tensor(it.get_output_details()[0]["index"]).astype(np.int64)
        equal += int((ys["builtin"] == ys["default"]).sum()); total += ys["builtin"].size
        maxdiff = max(maxdiff, int(np.abs(ys["builtin"] - ys["default"]).max()))
    out[path] = (equal, total, maxdiff)
print(json.dumps(out))
"""


def xnnpack_agreement(paths, seeds: int = 5) -> dict:
    """{model path: (elements where litert default (XNNPACK) == litert builtin, total, max |diff|)}."""
    proc = subprocess.run([sys.executable, "-c", AGREEMENT, str(seeds), *map(str, paths)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    args = ap.parse_args(argv)
    if not args.model.exists():
        print(f"{args.model} is absent; nothing to benchmark")
        return 0
    from workbench.interpreter import Interpreter

    it = Interpreter(model_path=args.model, num_threads=1)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    x = np.random.default_rng(0).integers(-128, 128, d["shape"]).astype(np.int8)
    it.set_tensor(d["index"], x)
    it.invoke()                                    # warm-up (numba compiles or loads its cache)
    ts = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        it.invoke()
        ts.append(time.perf_counter() - t0)
    ours = 1000 * float(np.median(ts))
    ours_min = 1000 * float(np.min(ts))
    y = it.get_tensor(it.get_output_details()[0]["index"])

    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        xp = str(Path(tmp) / "x.npy")
        np.save(xp, x)
        proc = subprocess.run([sys.executable, "-c", LITERT, str(args.model), str(args.runs), xp],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr[-2000:])
            return 1
        lt = json.loads(proc.stdout.strip().splitlines()[-1])
        same = {k: int((np.load(xp + f".{k}.npy") == y).sum()) for k in ("builtin", "default")}
    kernels = sorted({k for _, k, _, _ in it.prepared() if k.startswith("conv_2d")})
    print(f"model: {args.model.name}, 1 thread, median (min) of {args.runs} invokes; CONV_2D kernels: "
          f"{', '.join(kernels)}")
    print(f"  workbench            {ours:8.2f} ms ({ours_min:.2f})")
    print(f"  litert builtin       {lt['builtin']:8.2f} ms ({lt['builtin_min']:.2f})   ratio ours/builtin = "
          f"{ours / lt['builtin']:.2f}x (min {ours_min / lt['builtin_min']:.2f}x, goal <= 1.0x); outputs equal: "
          f"{same['builtin']}/{y.size}")
    print(f"  litert default       {lt['default']:8.2f} ms ({lt['default_min']:.2f})   ratio ours/default = "
          f"{ours / lt['default']:.2f}x; outputs equal to ours: {same['default']}/{y.size}")
    models = sorted(args.model.parent.glob("mobilenet_*_int8.tflite"))
    if models:
        print("litert default (XNNPACK) vs litert builtin on the int8 MobileNets, 5 seeded inputs each:")
        for path, (eq, tot, mx) in xnnpack_agreement(models).items():
            print(f"  {Path(path).name:32s} {eq}/{tot} output elements equal ({100 * eq / tot:.1f} %), max |diff| {mx}")
    prof = it.profile(runs=3)
    print(prof if len(str(prof)) < 4000 else str(prof)[:4000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
