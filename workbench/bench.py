"""Timing helpers behind ``workbench run --profile`` and ``workbench bench``.

ai-edge-litert is measured in a child process (its kernels can abort the process that runs them),
on the same seeded inputs as ours, so a ratio printed by ``workbench bench --vs-litert`` compares the
two side by side in one run.  ai-edge-litert is a test/benchmark oracle, not a dependency: without
it, ``--vs-litert`` says so and the rest still works.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np

from .errors import WorkbenchError


def random_inputs(details, seed: int = 0) -> list[np.ndarray]:
    """Seeded inputs for the given input details (floats in [-1, 1), integers in a small range)."""
    rng = np.random.default_rng(seed)
    out = []
    for d in details:
        dtype = np.dtype(d["dtype"])
        shape = tuple(int(s) for s in d["shape"])
        if dtype.kind == "f":
            out.append(rng.uniform(-1, 1, shape).astype(dtype))
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            out.append(rng.integers(max(info.min, -128), min(info.max, 127) + 1, shape).astype(dtype))
        elif dtype.kind == "b":
            out.append(rng.integers(0, 2, shape).astype(bool))
        else:
            raise WorkbenchError(f"no random input for {d['name']!r} of dtype {dtype}; pass it with --input")
    return out


def median_ms(invoke, runs: int, warmup: int = 3) -> dict:
    for _ in range(warmup):
        invoke()
    times = []
    for _ in range(max(runs, 1)):
        t0 = time.perf_counter()
        invoke()
        times.append(time.perf_counter() - t0)
    return {"median_ms": float(np.median(times) * 1e3), "min_ms": float(np.min(times) * 1e3), "runs": len(times)}


def _litert_child(model: str, threads: int, runs: int, xnnpack: bool, seed: int,
                  input_shapes: list | None = None) -> dict:
    """Runs in the child: resize the inputs asked for, allocate, feed seeded inputs, time ``invoke``.

    ``input_shapes`` is a list of ``[position, name, shape]`` (position in the input list, the name the
    parent saw there, the new shape).  The result also reports the input and output shapes litert ran
    at, so a caller can check it ran the shapes it was given."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kind = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    it = Interpreter(model_path=model, num_threads=threads, experimental_op_resolver_type=kind)
    details = it.get_input_details()
    for pos, name, shape in input_shapes or []:
        if not 0 <= pos < len(details) or details[pos]["name"] != name:
            seen = details[pos]["name"] if 0 <= pos < len(details) else "nothing"
            raise WorkbenchError(f"input {pos} is {name!r} for workbench but {seen!r} for ai-edge-litert")
        it.resize_tensor_input(details[pos]["index"], [int(v) for v in shape], strict=True)
    it.allocate_tensors()
    details = it.get_input_details()
    for d, x in zip(details, random_inputs(details, seed)):
        it.set_tensor(d["index"], x)
    result = median_ms(it.invoke, runs)
    result["inputs"] = {d["name"]: [int(v) for v in d["shape"]] for d in details}
    result["outputs"] = {d["name"]: [int(v) for v in it.get_tensor(d["index"]).shape] for d in it.get_output_details()}
    return result


def litert_median(model: str, threads: int = 1, runs: int = 50, xnnpack: bool = False, seed: int = 0,
                  input_shapes: list | None = None) -> dict:
    """Median invoke time of ai-edge-litert on ``model`` (measured in a child process).

    ``input_shapes``: ``[(position, name, shape), ...]`` -- inputs to resize (litert's
    ``resize_tensor_input(strict=True)``) before allocating, as ``workbench bench --shape`` does for
    ours; the seeded inputs then have these shapes, the same values ``random_inputs`` gives ours."""
    shapes = json.dumps([[int(p), str(n), [int(v) for v in s]] for p, n, s in (input_shapes or [])])
    code = ("import json, sys; from workbench.bench import _litert_child; "
            f"print(json.dumps(_litert_child({str(model)!r}, {threads}, {runs}, {xnnpack}, {seed}, "
            f"json.loads({shapes!r}))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise WorkbenchError(f"ai-edge-litert could not run the model: {last}")
    return json.loads(proc.stdout.strip().splitlines()[-1])

