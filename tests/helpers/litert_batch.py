"""Run many small models in ai-edge-litert in one child process (the oracle of the one-op tests).

``run_many([(model_bytes, [input arrays]), ...])`` returns, per job, ``("ok", [output arrays])``,
``("error", message)`` when litert refused the model or its inputs (a Python exception), or
``("crash", message)`` when the interpreter killed the process (a failed CHECK aborts).  ``resolver=
"BUILTIN_REF"`` runs LiteRT's reference kernels instead of its builtin ones.  Inputs are
set in ``get_input_details()`` order, outputs read in ``get_output_details()`` order.  After a crash
the child is started again at the next job, so one aborting model costs one restart, not the batch.
Arrays travel by pickle, so object arrays of bytes (STRING tensors) go both ways.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r'''
import pickle, sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
jobs = pickle.load(open(sys.argv[1], "rb"))
for k in range(int(sys.argv[3]), len(jobs)):
    model, feeds = jobs[k]
    try:
        it = Interpreter(model_content=model,
                         experimental_op_resolver_type=getattr(OpResolverType, sys.argv[4]))
        it.allocate_tensors()
        for d, v in zip(it.get_input_details(), feeds):
            it.set_tensor(d["index"], v)
        it.invoke()
        res = ("ok", [np.array(it.get_tensor(d["index"])) for d in it.get_output_details()])
    except Exception as e:
        res = ("error", f"{type(e).__name__}: {e}")
    with open(sys.argv[2] + "." + str(k), "wb") as f:
        pickle.dump(res, f)
'''


def run_many(jobs: list, timeout: float = 600.0, resolver: str = "BUILTIN_WITHOUT_DEFAULT_DELEGATES") -> list:
    """``resolver``: LiteRT's op resolver by name — the builtin kernels by default, ``"BUILTIN_REF"`` for
    its reference kernels (the oracle of ``Interpreter(variant="reference")``)."""
    out: list = [None] * len(jobs)
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "jobs.pkl"
        src.write_bytes(pickle.dumps([(bytes(m), list(f)) for m, f in jobs]))
        stem = str(Path(d) / "result")
        k = 0
        while k < len(jobs):
            proc = subprocess.run([sys.executable, "-c", CHILD, str(src), stem, str(k), resolver], capture_output=True,
                                  text=True, timeout=timeout)
            while k < len(jobs) and Path(f"{stem}.{k}").exists():
                out[k] = pickle.loads(Path(f"{stem}.{k}").read_bytes())
                k += 1
            if k < len(jobs):
                if proc.returncode == 0:
                    raise RuntimeError(f"litert child stopped early without an error:\n{proc.stderr[-2000:]}")
                out[k] = ("crash", f"exit status {proc.returncode}: {proc.stderr.strip()[-500:]}")
                k += 1
    return out
