"""Run a sequence of calls on one ai-edge-litert Interpreter in a child process.

``run_calls(model_bytes, calls)`` where each call is one of
  ("invoke", [input arrays in get_input_details() order])   resizes inputs whose shape differs
                                                           (then allocate_tensors), sets, invokes;
  ("reset",)                                               reset_all_variables();
  ("signature", key, {name: array})                        get_signature_runner(key)(**inputs);
  ("details",)                                             get_tensor_details() of subgraph 0;
  ("signature_list",)                                      get_signature_list().
Returns one result per call: a list of output arrays, a dict, or None.  The child process keeps
LiteRT aborts away from the test process (as tests/helpers/litert_runner.py).
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
model, calls = pickle.load(open(sys.argv[1], "rb"))
it = Interpreter(model_content=model,
                 experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
it.allocate_tensors()
out = []
for call in calls:
    if call[0] == "invoke":
        details = it.get_input_details()
        resized = False
        for d, v in zip(details, call[1]):
            if tuple(d["shape"]) != tuple(np.shape(v)):
                it.resize_tensor_input(d["index"], list(np.shape(v)))
                resized = True
        if resized:
            it.allocate_tensors()
        for d, v in zip(it.get_input_details(), call[1]):
            it.set_tensor(d["index"], np.asarray(v))
        it.invoke()
        out.append([np.array(it.get_tensor(d["index"])) for d in it.get_output_details()])
    elif call[0] == "reset":
        it.reset_all_variables()
        out.append(None)
    elif call[0] == "signature":
        r = it.get_signature_runner(call[1])
        out.append({k: np.array(v) for k, v in r(**call[2]).items()})
    elif call[0] == "details":
        out.append(it.get_tensor_details())
    elif call[0] == "signature_list":
        out.append(it.get_signature_list())
pickle.dump(out, open(sys.argv[2], "wb"))
'''


def run_calls(model: bytes, calls: list, timeout: float = 120.0) -> list:
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "calls.pkl", Path(d) / "out.pkl"
        src.write_bytes(pickle.dumps((bytes(model), calls)))
        proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(dst)], capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"litert child failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
        return pickle.loads(dst.read_bytes())


def run_cases(names, build_case, calls_for, workers: int = 2) -> dict:
    """name -> LiteRT's results of ``calls_for(feeds)`` on case ``name`` (``build_case(name)`` gives
    (model, feeds)), or the RuntimeError of a child that failed (each case's own test reports it); the
    children run ``workers`` at a time."""
    from concurrent.futures import ThreadPoolExecutor

    from workbench import dump

    def one(name):
        model, feeds = build_case(name)
        try:
            return name, run_calls(dump(model), calls_for(feeds))
        except RuntimeError as exc:
            return name, exc

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(one, names))


def run_ours(interpreter, calls: list) -> list:
    """The same calls on a workbench Interpreter (already constructed)."""
    import numpy as np

    it = interpreter
    it.allocate_tensors()
    out = []
    for call in calls:
        if call[0] == "invoke":
            resized = False
            for d, v in zip(it.get_input_details(), call[1]):
                if tuple(d["shape"]) != tuple(np.shape(v)):
                    it.resize_tensor_input(d["index"], list(np.shape(v)))
                    resized = True
            if resized:
                it.allocate_tensors()
            for d, v in zip(it.get_input_details(), call[1]):
                it.set_tensor(d["index"], np.asarray(v))
            it.invoke()
            out.append([np.array(it.get_tensor(d["index"])) for d in it.get_output_details()])
        elif call[0] == "reset":
            it.reset_all_variables()
            out.append(None)
        elif call[0] == "signature":
            out.append(it.get_signature_runner(call[1])(**call[2]))
        elif call[0] == "details":
            out.append(it.get_tensor_details())
        elif call[0] == "signature_list":
            out.append(it.get_signature_list())
    return out
