"""Compare every tensor a model computes, node by node, with ai-edge-litert's builtin kernels.

    python dev/compare_tensors.py MODEL.tflite [MODEL ...] [--seeds 0 1 2] [--show 5]

The outputs of a model can hide a wrong intermediate (a saturated SOFTMAX, a clamp, an argmax).
Here litert runs with ``experimental_preserve_all_tensors`` in a child process (its kernels can
abort a process) and we run with ``keep_intermediates=True`` on the same seeded inputs
(``tests/litert_runner.py``'s inputs); then every tensor a node of subgraph 0 writes is compared:
integer tensors must be equal element for element, float tensors within 1e-4 of the tensor's
largest magnitude.  One line per model and seed, and the first ``--show`` nodes that differ, in
graph order (the first one is where to look).
"""

from __future__ import annotations

import argparse
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import litert_runner  # noqa: E402
from workbench.interpreter import Interpreter  # noqa: E402

CHILD = r"""
import pickle, sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
path, inputs, out = sys.argv[1], pickle.load(open(sys.argv[2], "rb")), sys.argv[3]
it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                 experimental_preserve_all_tensors=True)
it.allocate_tensors()
for d in it.get_input_details():
    it.set_tensor(d["index"], inputs[d["name"]])
it.invoke()
tensors = {}
for t in it.get_tensor_details():
    try:
        tensors[t["index"]] = np.array(it.get_tensor(t["index"]))
    except ValueError:
        pass
pickle.dump(tensors, open(out, "wb"))
"""


def litert_tensors(path: Path, inputs: dict) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.pkl", Path(tmp) / "out.pkl"
        src.write_bytes(pickle.dumps(inputs))
        proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(src), str(dst)], capture_output=True,
                              text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"litert failed (status {proc.returncode}): {proc.stderr.strip()[-800:]}")
        return pickle.loads(dst.read_bytes())


def compare(path: Path, seed: int, show: int) -> str:
    it = Interpreter(model_path=path, keep_intermediates=True)
    it.allocate_tensors()
    details = it.get_input_details()
    rng = np.random.default_rng(seed)
    inputs = {d["name"]: litert_runner.make_input(rng, np.dtype(d["dtype"]), d["shape"]) for d in details}
    for d in details:
        it.set_tensor(d["index"], inputs[d["name"]])
    it.invoke()
    theirs = litert_tensors(path, inputs)
    checked, bad = 0, []
    for node, *_ in it.prepared():
        for t in node.outputs:
            if t < 0 or t not in theirs:
                continue
            try:
                ours = it.get_tensor(t)
            except Exception:
                continue
            want = theirs[t]
            if ours.shape != want.shape:
                bad.append(f"node {node.index} {node.op_name}: tensor {t} shape {ours.shape} != {want.shape}")
                continue
            checked += 1
            if ours.dtype.kind in "iub":
                diff = int(np.count_nonzero(ours != want))
                if diff:
                    worst = int(np.abs(ours.astype(np.int64) - want.astype(np.int64)).max())
                    bad.append(f"node {node.index} {node.op_name}: tensor {t} {diff}/{ours.size} differ, max {worst}")
            elif ours.dtype.kind == "f":
                scale = float(np.nanmax(np.abs(want))) if want.size else 0.0
                err = float(np.nanmax(np.abs(ours.astype(np.float64) - want))) if want.size else 0.0
                if not err <= 1e-4 * (scale + 1e-6):
                    bad.append(f"node {node.index} {node.op_name}: tensor {t} max |diff| {err:.3g} "
                               f"(max |value| {scale:.3g})")
    head = f"{path.name:44s} seed {seed}: {checked} tensors compared, {len(bad)} differ"
    return "\n".join([head] + [f"    {b}" for b in bad[:show]])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("--seeds", type=int, nargs="*", default=[0])
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args(argv)
    for path in args.models:
        for seed in args.seeds:
            try:
                print(compare(path, seed, args.show), flush=True)
            except Exception as exc:      # a dev tool: say what failed and go on with the next model
                print(f"{path.name:44s} seed {seed}: FAILED {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
