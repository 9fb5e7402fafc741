"""Find the operator where workbench.Interpreter and ai-edge-litert part ways (a dev tool).

``dev/compare_with_litert.py`` compares a model's outputs; a classifier's ten softmax values say
little about the hundreds of tensors before them, and in a dynamic-range model one float value one
bit off can flip the run-time quantization of the next layer and look like a big error.  This tool
keeps every tensor in both runtimes (litert's ``experimental_preserve_all_tensors``, in a child
process) and walks subgraph 0 in order: an operator whose inputs are bitwise equal in both but
whose outputs are not is a kernel difference, named with its weights' dtype::

    python dev/compare_per_op.py MODEL.tflite ...                 # seed 0
    python dev/compare_per_op.py --seeds 0,1,2 --show 20 MODEL.tflite ...

Inputs are the seeded ones of ``tests/helpers/litert_runner.py`` (uniform [-1, 1) floats, full-range ints).
Float differences in float operators are expected (the float path is only held to a tolerance);
an integer operator listed here is a bit-exactness bug.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import litert_runner  # noqa: E402

from workbench.interpreter import Interpreter  # noqa: E402
from workbench.schema import load, op_name  # noqa: E402

CHILD = r"""
import sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
it = Interpreter(model_path=sys.argv[1], experimental_preserve_all_tensors=True,
                 experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
it.allocate_tensors()
with np.load(sys.argv[2]) as z:
    for k, d in enumerate(it.get_input_details()):
        it.set_tensor(d["index"], z[f"input_{k}"])
it.invoke()
kept = {}
for d in it.get_tensor_details():
    try:
        kept[f"t{d['index']}"] = np.array(it.get_tensor(d["index"]))
    except ValueError:          # tensors without data (e.g. optional slots)
        pass
np.savez(sys.argv[3], **kept)
"""


def bitwise_equal(a, b) -> bool:
    if a is None or b is None or a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        return np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))
    return np.array_equal(a, b)


def walk(path: Path, seed: int, tmp: Path) -> dict:
    res = litert_runner.run(path, tmp / "in.npz", tmp / "out.npz", seed=seed)
    if not res.ok:
        return {"error": "litert: " + res.describe().splitlines()[-1]}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(tmp / "in.npz"), str(tmp / "all.npz")],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": "litert (all tensors): " + (proc.stderr.strip().splitlines() or ["?"])[-1]}
    with np.load(tmp / "all.npz") as z:
        theirs = {k: z[k] for k in z.files}
    it = Interpreter(model_path=path, experimental_preserve_all_tensors=True)
    it.allocate_tensors()
    with np.load(tmp / "in.npz") as z:
        for k, d in enumerate(it.get_input_details()):
            it.set_tensor(d["index"], z[f"input_{k}"])
    it.invoke()

    def ours(t):
        try:
            return np.array(it.get_tensor(t))
        except Exception:  # noqa: BLE001 - a tensor our interpreter does not keep
            return None

    model = load(path.read_bytes())
    sg = model.subgraphs[0]
    differ, culprits = 0, []
    for i, op in enumerate(sg.operators):
        ins = [t for t in op.inputs if t >= 0]
        outs = list(op.outputs)
        if all(bitwise_equal(ours(t), theirs.get(f"t{t}")) for t in outs):
            continue
        differ += 1
        if not all(bitwise_equal(ours(t), theirs.get(f"t{t}")) for t in ins):
            continue
        a, b = ours(outs[0]), theirs.get(f"t{outs[0]}")
        w = ours(ins[1]) if len(ins) > 1 else None
        row = {"op": i, "name": op_name(model.operator_codes[op.opcode_index]),
               "weights": None if w is None else str(w.dtype), "output": None if a is None else str(a.dtype)}
        if a is not None and b is not None and a.shape == b.shape:
            row["differ"] = int((a != b).sum())
            row["size"] = int(a.size)
            row["max_abs"] = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
        culprits.append(row)
    return {"ops": len(sg.operators), "differ": differ, "culprits": culprits}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", type=Path)
    p.add_argument("--seeds", type=lambda v: [int(s) for s in v.split(",")], default=[0],
                   help="comma-separated input seeds (default 0)")
    p.add_argument("--show", type=int, default=8, help="culprits listed per model and seed")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.models:
            for seed in args.seeds:
                r = walk(path, seed, Path(tmp))
                if "error" in r:
                    print(f"{path.name} seed {seed}: {r['error']}", flush=True)
                    continue
                print(f"{path.name} seed {seed}: {r['ops']} ops, {r['differ']} with different outputs, "
                      f"{len(r['culprits'])} of them with equal inputs", flush=True)
                for c in r["culprits"][:args.show]:
                    what = f"{c['name']} (output {c['output']}, weights {c['weights']})"
                    size = f"{c['differ']}/{c['size']} differ, max |diff| {c['max_abs']:.3g}" if "size" in c else ""
                    print(f"    op {c['op']:4d} {what:50s} {size}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
