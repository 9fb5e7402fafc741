"""Run one .tflite file in ai-edge-litert, in a child process, and save its outputs.

LiteRT's kernels can abort the whole process (a failed check in C++ calls ``abort()``), so the
tests never import the interpreter themselves: they call :func:`run` below, which starts this file
as a script with ``sys.executable``::

    python tests/helpers/litert_runner.py MODEL.tflite INPUTS.npz OUTPUTS.npz [--seed N]

With ``--seed`` the script makes the inputs itself (seeded random values of each input's dtype and
shape, as the interpreter reports them) and writes them to INPUTS.npz, so a second model can be run
on exactly the same inputs; without it, INPUTS.npz is read.  Arrays are stored as ``input_<k>`` and
``output_<k>`` in the order of ``get_input_details()`` / ``get_output_details()``.

Exit status 0: OUTPUTS.npz was written.  1: a Python-level error (message on stderr).  A negative
status is the signal that killed the interpreter (e.g. -6 for an abort).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

RUNNER = Path(__file__).resolve()
DEFAULT_TIMEOUT = 120.0


def make_input(rng: np.random.Generator, dtype: np.dtype, shape) -> np.ndarray:
    """Seeded random values that fit ``dtype``: uniform in [-1, 1) for floats, full range for ints."""
    dtype = np.dtype(dtype)
    shape = tuple(int(d) for d in shape)
    if dtype.kind == "f":
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    raise TypeError(f"no random input for dtype {dtype}")


def _main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("inputs")
    parser.add_argument("outputs")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--resolver", default="BUILTIN_WITHOUT_DEFAULT_DELEGATES",
                        help="LiteRT's op resolver: BUILTIN_REF runs its reference kernels")
    args = parser.parse_args(argv)

    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(
        model_path=args.model,
        experimental_op_resolver_type=getattr(OpResolverType, args.resolver),
    )
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    if args.seed is not None:
        rng = np.random.default_rng(args.seed)
        inputs = {f"input_{k}": make_input(rng, d["dtype"], d["shape"]) for k, d in enumerate(details)}
        np.savez(args.inputs, **inputs)
    else:
        with np.load(args.inputs) as z:
            inputs = {key: z[key] for key in z.files}
    if len(inputs) != len(details):
        print(f"model has {len(details)} inputs, {args.inputs} holds {len(inputs)}", file=sys.stderr)
        return 1
    for k, d in enumerate(details):
        interpreter.set_tensor(d["index"], inputs[f"input_{k}"])
    interpreter.invoke()
    outputs = {f"output_{k}": np.array(interpreter.get_tensor(d["index"]))
               for k, d in enumerate(interpreter.get_output_details())}
    np.savez(args.outputs, **outputs)
    return 0


# --------------------------------------------------------------------------------------------
# The side the tests use


@dataclass
class RunResult:
    model: Path
    returncode: int
    stderr: str
    outputs: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def describe(self) -> str:
        tail = self.stderr.strip().splitlines()[-5:]
        return f"{self.model.name}: exit status {self.returncode}\n" + "\n".join(tail)


def run(model: Path, inputs: Path, outputs: Path, seed: int | None = None,
        timeout: float = DEFAULT_TIMEOUT, resolver: str = "BUILTIN_WITHOUT_DEFAULT_DELEGATES") -> RunResult:
    """Run ``model`` in a child interpreter process; see the module docstring.  ``resolver="BUILTIN_REF"``
    runs LiteRT's reference kernels."""
    cmd = [sys.executable, str(RUNNER), str(model), str(inputs), str(outputs), "--resolver", resolver]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    result = RunResult(Path(model), proc.returncode, proc.stderr)
    if proc.returncode == 0:
        with np.load(outputs) as z:
            result.outputs = {key: z[key] for key in z.files}
    return result


BATCH_CHILD = r"""
import contextlib, importlib.util, io, json, sys, traceback
spec = importlib.util.spec_from_file_location("litert_runner_child", sys.argv[3])
runner = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)
items = json.load(open(sys.argv[1]))
for k in range(int(sys.argv[2]), len(items)):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = runner._main(items[k])
        except Exception:
            traceback.print_exc()
            code = 1
    with open(sys.argv[1] + "." + str(k), "w") as f:
        json.dump({"returncode": code, "stderr": err.getvalue()}, f)
"""


def run_batch(items, timeout: float = 600.0) -> list[RunResult]:
    """:func:`run` for many files in one child process: ``items`` are ``(model, inputs, outputs, seed)``
    tuples (``seed`` None: read the inputs), run in order, so a later item may read the inputs an earlier
    one made.  A Python error gives that item status 1 with its traceback; an abort ends the child, gives
    that item the child's (negative) status and its stderr, and a new child goes on with the next item."""
    argvs = [[str(m), str(i), str(o)] + (["--seed", str(seed)] if seed is not None else [])
             for m, i, o, seed in items]
    results: list[RunResult] = []
    with tempfile.TemporaryDirectory() as d:
        jobs = Path(d) / "items.json"
        jobs.write_text(json.dumps(argvs))
        while len(results) < len(argvs):
            start = len(results)
            proc = subprocess.run([sys.executable, "-c", BATCH_CHILD, str(jobs), str(start), str(RUNNER)],
                                  capture_output=True, text=True, timeout=timeout)
            for k in range(start, len(argvs)):
                done = Path(f"{jobs}.{k}")
                if not done.exists():
                    break
                status = json.loads(done.read_text())
                results.append(RunResult(Path(argvs[k][0]), status["returncode"], status["stderr"]))
            if len(results) < len(argvs):
                if proc.returncode == 0:
                    raise RuntimeError(f"litert child stopped early without an error:\n{proc.stderr[-2000:]}")
                results.append(RunResult(Path(argvs[len(results)][0]), proc.returncode, proc.stderr))
    for r, argv in zip(results, argvs):
        if r.ok:
            with np.load(argv[2]) as z:
                r.outputs = {key: z[key] for key in z.files}
    return results


def run_built(root: Path, names, build, workers: int = 4, resolver: str = "BUILTIN_WITHOUT_DEFAULT_DELEGATES") -> dict:
    """Run models built in code: ``build(name)`` gives (Model, {input name: array}); each is written
    under ``root`` (to look at when a case fails), its inputs ordered as our interpreter lists them, and
    all of them run in one child process (``helpers.litert_batch``: a model that aborts LiteRT costs one
    restart of the child, not the batch).  Returns {name: RunResult}; an abort reads as a negative exit
    status, a Python-level error as status 1, as :func:`run` reports them.  ``workers`` is kept for
    callers written when each model had a child of its own."""
    from helpers.litert_batch import run_many
    from workbench import dump
    from workbench.interpreter import Interpreter

    names = sorted(names)
    jobs, paths = [], []
    for name in names:
        model, feed = build(name)
        data = dump(model)
        path = Path(root) / f"{name}.tflite"
        path.write_bytes(data)
        details = Interpreter(model=model).get_input_details()
        jobs.append((data, [feed[d["name"]] for d in details]))
        paths.append(path)
    results = {}
    for name, path, (kind, value) in zip(names, paths, run_many(jobs, resolver=resolver)):
        if kind == "ok":
            results[name] = RunResult(path, 0, "", {f"output_{k}": v for k, v in enumerate(value)})
        elif kind == "error":
            results[name] = RunResult(path, 1, value)
        else:   # "exit status N: stderr"
            status = value.removeprefix("exit status ").split(":", 1)[0]
            results[name] = RunResult(path, int(status) if status.lstrip("-").isdigit() else -1, value)
    return results


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
