"""Run a model for several invokes in ai-edge-litert (child process), inputs resized before allocation.

For the corpus models that one seeded invoke at the stored input shape does not cover:

* stateful models (microWakeWord's streaming spotters keep their state in resource variables), whose
  outputs depend on every invoke before: all steps run on ONE interpreter, in order;
* models whose stored input shape cannot run (openWakeWord's melspectrogram is stored as [1, 1]
  with shape signature [-1, -1]; LiteRT fails to prepare its CONV_2D at that size), so the inputs
  are resized BEFORE the first ``allocate_tensors`` (``tests/helpers/litert_session.py`` allocates first).

``run_steps(model_bytes, steps, input_shapes=None)`` → one list of output arrays per step
(``get_output_details()`` order); raises ``RuntimeError`` with LiteRT's stderr when the child fails
or dies.  LiteRT's builtin kernels (``BUILTIN_WITHOUT_DEFAULT_DELEGATES``) unless ``resolver`` says
``"BUILTIN_REF"`` (its reference kernels, the oracle of ``Interpreter(variant="reference")``).
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
model, shapes, steps = pickle.load(open(sys.argv[1], "rb"))
it = Interpreter(model_content=model, experimental_op_resolver_type=getattr(OpResolverType, sys.argv[3]))
if shapes is not None:
    for d, shape in zip(it.get_input_details(), shapes):
        it.resize_tensor_input(d["index"], list(shape), strict=True)
it.allocate_tensors()
out = []
for feeds in steps:
    for d, v in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], np.asarray(v))
    it.invoke()
    out.append([np.array(it.get_tensor(d["index"])) for d in it.get_output_details()])
pickle.dump(out, open(sys.argv[2], "wb"))
'''


def run_steps(model: bytes, steps: list, input_shapes=None, timeout: float = 300.0,
              resolver: str = "BUILTIN_WITHOUT_DEFAULT_DELEGATES") -> list:
    """``resolver="BUILTIN_REF"`` runs LiteRT's reference kernels instead of its builtin ones."""
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "steps.pkl", Path(d) / "out.pkl"
        shapes = None if input_shapes is None else [tuple(int(x) for x in s) for s in input_shapes]
        src.write_bytes(pickle.dumps((bytes(model), shapes, steps)))
        proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(dst), resolver],
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"litert child failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        return pickle.loads(dst.read_bytes())
