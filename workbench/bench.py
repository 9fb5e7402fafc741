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


def _litert_child(model: str, threads: int, runs: int, xnnpack: bool, seed: int) -> dict:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kind = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    it = Interpreter(model_path=model, num_threads=threads, experimental_op_resolver_type=kind)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), random_inputs(it.get_input_details(), seed)):
        it.set_tensor(d["index"], x)
    return median_ms(it.invoke, runs)


def litert_median(model: str, threads: int = 1, runs: int = 50, xnnpack: bool = False, seed: int = 0) -> dict:
    """Median invoke time of ai-edge-litert on ``model`` (measured in a child process)."""
    code = ("import json, sys; from workbench.bench import _litert_child; "
            f"print(json.dumps(_litert_child({model!r}, {threads}, {runs}, {xnnpack}, {seed})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise WorkbenchError(f"ai-edge-litert could not run the model: {last}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
