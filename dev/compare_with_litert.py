"""Run .tflite files in workbench.Interpreter and in ai-edge-litert (builtin kernels) and compare.

A dev tool for finding where the workbench's interpreter fails on converter-made models::

    python dev/compare_with_litert.py sample_models/*.tflite          # a table, one row per model
    python dev/compare_with_litert.py --seeds 0 1 2 --json out.json M.tflite ...

Per model and seed: LiteRT runs the model in a child process (``tests/helpers/litert_runner.py``, which
makes seeded inputs: uniform [-1, 1) for floats, the full range for integers) and our interpreter
runs the same inputs.  A row says whether both ran, how many output elements are bitwise equal,
the largest absolute difference and the largest difference relative to the output's largest
magnitude (``max|ours - litert| / max|litert|``), whether every float element is within
``rtol=1e-4`` (plus ``atol=1e-6``, for elements near zero), and, when our interpreter refused or
failed, the first line of its error (the registry's error names the op, version and dtypes).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import litert_runner  # noqa: E402

from workbench.interpreter import Interpreter  # noqa: E402

RTOL, ATOL = 1e-4, 1e-6


def run_ours(path: Path, inputs: dict) -> dict:
    it = Interpreter(model_path=path)
    it.allocate_tensors()
    for k, d in enumerate(it.get_input_details()):
        it.set_tensor(d["index"], inputs[f"input_{k}"])
    it.invoke()
    return {f"output_{k}": np.array(it.get_tensor(d["index"])) for k, d in enumerate(it.get_output_details())}


def compare_outputs(ours: dict, theirs: dict) -> dict:
    equal = total = 0
    max_abs = max_rel = 0.0
    close = True
    for key in sorted(theirs):
        a, b = ours[key], theirs[key]
        if a.shape != b.shape or a.dtype != b.dtype:
            return {"error": f"{key}: ours {a.dtype}{list(a.shape)} vs litert {b.dtype}{list(b.shape)}"}
        equal += int(np.sum(a == b)) if a.dtype.kind != "f" else int(np.sum((a == b) | (np.isnan(a) & np.isnan(b))))
        total += a.size
        if a.size and a.dtype.kind in "fiu":
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            diff[np.isnan(diff) & np.isnan(a) & np.isnan(b)] = 0.0
            scale = float(np.max(np.abs(b.astype(np.float64)))) or 1.0
            max_abs = max(max_abs, float(np.nanmax(diff)) if not np.all(np.isnan(diff)) else float("nan"))
            max_rel = max(max_rel, float(np.max(diff)) / scale)
            if a.dtype.kind == "f":
                close &= bool(np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))
            else:
                close &= bool(np.array_equal(a, b))
    return {"equal": equal, "total": total, "max_abs": max_abs, "max_rel": max_rel, "close": close}


def compare(path: Path, seed: int, tmp: Path) -> dict:
    row = {"model": path.name, "seed": seed}
    res = litert_runner.run(path, tmp / "in.npz", tmp / "out.npz", seed=seed)
    row["litert"] = res.ok
    if not res.ok:
        row["litert_error"] = res.describe().splitlines()[-1]
        return row
    with np.load(tmp / "in.npz") as z:
        inputs = {k: z[k] for k in z.files}
    try:
        ours = run_ours(path, inputs)
    except Exception as exc:  # noqa: BLE001 - a dev tool: report whatever happened
        row["ours"] = False
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        return row
    row["ours"] = True
    row.update(compare_outputs(ours, res.outputs))
    return row


def _fmt(row: dict) -> str:
    if not row.get("litert"):
        return f"litert failed: {row.get('litert_error', '')}"
    if not row.get("ours"):
        return f"ours failed: {row['error']}"
    if "error" in row:
        return row["error"]
    verdict = "bit-exact" if row["equal"] == row["total"] else ("within 1e-4" if row["close"] else "DIFFERENT")
    return (f"{verdict:11s} {row['equal']}/{row['total']} equal, max abs {row['max_abs']:.3g}, "
            f"max rel {row['max_rel']:.3g}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", type=Path)
    p.add_argument("--seeds", nargs="*", type=int, default=None,
                   help="input seeds (default: one seed, crc32 of the file name, "
                        "as tests/sample_models/test_sample_models.py)")
    p.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.models:
            seeds = args.seeds if args.seeds else [zlib.crc32(path.stem.encode())]
            for seed in seeds:
                row = compare(path, seed, Path(tmp))
                rows.append(row)
                print(f"{path.name:40s} seed {seed:<10d} {_fmt(row)}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
