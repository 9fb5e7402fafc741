"""Old code against new code, alternately, in one run: did a change make the interpreter slower?

    python benchmarks/bench_ab.py [--old REV] [--rounds 21] [--runs 15] [MODEL.tflite ...]

The old side is ``REV`` of this repository (default ``HEAD``), unpacked with ``git archive`` into a
temporary folder; the new side is the working tree.  Each side runs in its own child process that
loads every model once and then, each time the parent asks, times ``--runs`` invokes per model and
reports their median.  The parent asks the two children in turn, swapping who goes first every
round, for ``--rounds`` rounds; the figure per model is the median of the round medians, and the
ratio is new / old (1.05 = 5 % slower).  Alternating in one run keeps both sides under the same
machine load, which separate runs minutes apart do not.

Both sides use numba's compiled kernels (``WORKBENCH_PRECOMPILED=0``): the precompiled library is
built per source fingerprint, so only one side could have it; the machine code is the same either way.

Default models: MobileNet v1 1.0/224 float32 (``bench_interpreter.py``'s model) and int8
(``bench_quantized.py``'s), MobileNet v1 0.25/128 int8 (many small nodes: per-node overhead shows),
and the streaming microWakeWord "okay nabu" model from the corpus (state carried across invokes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models"

CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
from workbench.interpreter import Interpreter
from workbench.corpus import INPUT_SHAPES
from pathlib import Path
runs = int(sys.argv[2])
its = []
for path in sys.argv[3:]:
    it = Interpreter(model_path=path)
    for d, shape in zip(it.get_input_details(), INPUT_SHAPES.get(Path(path).stem, ())):
        it.resize_tensor_input(d["index"], list(shape))
    it.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in it.get_input_details():
        dt = np.dtype(d["dtype"])
        x = rng.uniform(-1, 1, d["shape"]) if dt.kind == "f" else rng.integers(-100, 100, d["shape"])
        it.set_tensor(d["index"], x.astype(dt))
    for _ in range(3):
        it.invoke()
    its.append(it)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    out = []
    for it in its:
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            it.invoke()
            times.append(time.perf_counter() - t0)
        out.append(sorted(times)[len(times) // 2] * 1000.0)
    print(json.dumps(out), flush=True)
'''


def default_models() -> list[Path]:
    from workbench.corpus import cache_dir

    models = [SHARED / "mobilenet_v1_a10_224_float32.tflite", SHARED / "mobilenet_v1_a10_224_int8.tflite",
              SHARED / "mobilenet_v1_a025_128_int8.tflite", cache_dir() / "microwakeword_okay_nabu.tflite"]
    return [m for m in models if m.exists()]


def unpack(rev: str, into: Path) -> Path:
    """``rev`` of this repository's ``workbench`` package, unpacked under ``into``."""
    tar = into / "old.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(tar), rev, "workbench"], check=True)
    with tarfile.open(tar) as t:
        t.extractall(into, filter="data")
    return into


def start(src: Path, models, runs: int):
    env = {**os.environ, "WORKBENCH_PRECOMPILED": "0"}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(src), str(runs), *map(str, models)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"the child for {src} did not start (see its error above)")
    return proc


def ask(proc) -> list[float]:
    proc.stdin.write("go\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", type=Path)
    p.add_argument("--old", default="HEAD", help="the git revision to compare with (default HEAD)")
    p.add_argument("--rounds", type=int, default=21)
    p.add_argument("--runs", type=int, default=15, help="invokes per model per round (their median counts)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    models = args.models or default_models()
    if not models:
        raise SystemExit("no models: give some, or put ../shared/models beside the repository")
    with tempfile.TemporaryDirectory() as tmp:
        old_src = unpack(args.old, Path(tmp))
        sides = {"old": start(old_src, models, args.runs), "new": start(ROOT, models, args.runs)}
        rounds = {name: [] for name in sides}
        try:
            for r in range(args.rounds):
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                for name in order:
                    rounds[name].append(ask(sides[name]))
        finally:
            for proc in sides.values():
                proc.stdin.close()
                proc.wait()
    rows = []
    for k, model in enumerate(models):
        old = statistics.median(r[k] for r in rounds["old"])
        new = statistics.median(r[k] for r in rounds["new"])
        rows.append({"model": model.name, "old_ms": round(old, 3), "new_ms": round(new, 3),
                     "ratio": round(new / old, 3)})
    if args.json:
        print(json.dumps({"old": args.old, "rounds": args.rounds, "runs": args.runs, "rows": rows}, indent=1))
    else:
        print(f"old = {args.old}, new = working tree; {args.rounds} alternating rounds x {args.runs} invokes, "
              f"median of round medians")
        print(f"{'model':44} {'old ms':>9} {'new ms':>9} {'new/old':>8}")
        for row in rows:
            print(f"{row['model']:44} {row['old_ms']:9.3f} {row['new_ms']:9.3f} {row['ratio']:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
