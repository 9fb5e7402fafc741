"""One-op recurrent cases (the LSTM family, the RNN family, SVDF) for tests/interpreter/kernels/test_lstm.py,
test_rnn.py and test_svdf.py.

The cases are those of the session tests (tests/interpreter/test_interpreter_rnn.py: float32 and int8 SVDF;
tests/interpreter/quant/test_quantized_rnn.py: integer and hybrid; test_quantized_svdf_bidirectional.py:
hybrid SVDF and bidirectional ops), as :class:`op_layers.OpLayers` cases (the inputs of the session's first
invoke), filtered by the op they build.  Recurrent ops keep state across invokes, which OpLayers' one
invoke does not reach: :func:`two_invokes` runs a case twice on one interpreter -- ours, or LiteRT's under
either op resolver (all cases in one child process per resolver).
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from helpers import interpreter_rnn_cases as floats
from helpers import litert_session
from helpers import quantized_rnn_cases as quantized
from helpers import quantized_svdf_bidirectional_cases as more
from helpers.quantized_cases import assert_same
from workbench import dump
from workbench.interpreter import Interpreter
from workbench.schema import BuiltinOperator as B
from workbench.versioning import update_versions

LSTM_OPS = (B.LSTM, B.UNIDIRECTIONAL_SEQUENCE_LSTM, B.BIDIRECTIONAL_SEQUENCE_LSTM)
RNN_OPS = (B.RNN, B.UNIDIRECTIONAL_SEQUENCE_RNN, B.BIDIRECTIONAL_SEQUENCE_RNN)
SVDF_OPS = (B.SVDF,)


def _session_cases() -> dict:
    """name -> the session case's build() (builder, per-invoke inputs), from the three session modules."""
    out = {}
    for mod in (floats, quantized, more):
        for name, fn in mod.CASES.items():
            assert name not in out, f"case {name} defined twice"
            out[name] = fn
    return out


SESSIONS = _session_cases()


def _op_of(builder) -> B:
    return B(builder.build().operator_codes[0].builtin_code)


def _feeds(builder, invoke) -> dict:
    """{input name: array} for one invoke's inputs (an array or a list in input order)."""
    values = invoke if isinstance(invoke, list) else [invoke]
    return {builder.tensors[t].name: v for t, v in zip(builder.inputs, values)}


def cases(ops) -> dict:
    """OpLayers cases (name -> build(name)) of the session cases whose op is one of ``ops``."""
    out = {}
    for name, fn in SESSIONS.items():
        builder, _ = fn()
        if _op_of(builder) not in ops:
            continue

        def build(_name, fn=fn):
            b, feeds = fn()
            return b, _feeds(b, feeds[0])
        out[name] = build
    return out


def two_invokes_case(name):
    """(model, [inputs of invoke 1, inputs of invoke 2] in the interpreter's input order)."""
    b, feeds = SESSIONS[name]()
    model = update_versions(b.build())
    order = [d["name"] for d in Interpreter(model=model).get_input_details()]
    return model, [[_feeds(b, f)[n] for n in order] for f in feeds[:2]]


def ours_two_invokes(name, *, reference=False, variant="litert-x86") -> list:
    """Our outputs of the two invokes, on one interpreter (the state carried over)."""
    model, feeds = two_invokes_case(name)
    return litert_session.run_ours(Interpreter(model=model, reference=reference, variant=variant),
                                   [("invoke", f) for f in feeds])


CHILD = r'''
import pickle, sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
jobs = pickle.load(open(sys.argv[1], "rb"))
out = []
for model, invokes in jobs:
    try:
        it = Interpreter(model_content=model, experimental_op_resolver_type=getattr(OpResolverType, sys.argv[3]))
        it.allocate_tensors()
        res = []
        for feeds in invokes:
            for d, v in zip(it.get_input_details(), feeds):
                it.set_tensor(d["index"], v)
            it.invoke()
            res.append([np.array(it.get_tensor(d["index"])) for d in it.get_output_details()])
        out.append(("ok", res))
    except Exception as e:
        out.append(("error", f"{type(e).__name__}: {e}"))
pickle.dump(out, open(sys.argv[2], "wb"))
'''


def litert_two_invokes(names, resolver: str = "BUILTIN_WITHOUT_DEFAULT_DELEGATES") -> dict:
    """name -> ("ok", [outputs of invoke 1, outputs of invoke 2]) or ("error", LiteRT's message), all
    cases in one LiteRT child process (these kernels raise errors; none of them aborts)."""
    names = sorted(names)
    jobs = []
    for n in names:
        model, feeds = two_invokes_case(n)
        jobs.append((bytes(dump(model)), feeds))
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "jobs.pkl", Path(d) / "out.pkl"
        src.write_bytes(pickle.dumps(jobs))
        proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(dst), resolver], capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, f"litert child failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
        return dict(zip(names, pickle.loads(dst.read_bytes())))


def assert_close(ours: list, theirs: list, what: str, tol: float = 1e-5) -> None:
    """max |ours − theirs| <= tol · (max |theirs| + 1) per float output (the float LSTM: TFLite's float
    FullyConnected adds in another order than numpy's BLAS), integers equal."""
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape and a.dtype == b.dtype, f"{what} output {k}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype.kind in "iu":
            np.testing.assert_array_equal(a, b, err_msg=f"{what} output {k}")
            continue
        err = float(np.max(np.abs(a.astype(np.float64) - b))) if a.size else 0.0
        assert err <= tol * (float(np.max(np.abs(b))) + 1), f"{what} output {k}: max error {err}"


RESOLVERS = ("BUILTIN_WITHOUT_DEFAULT_DELEGATES", "BUILTIN_REF")


def litert_sessions(names) -> dict:
    """resolver -> LiteRT's two invokes of every case (litert_two_invokes), for BUILTIN and BUILTIN_REF."""
    return {resolver: litert_two_invokes(names, resolver) for resolver in RESOLVERS}


def check_two_invokes(case: str, sessions: dict, *, builtin_ref_refuses: bool = False, close: bool = False) -> None:
    """Two invokes of one interpreter (the state carries over): the speed layer against LiteRT's BUILTIN
    kernels, the teaching layer (variant="reference") against BUILTIN_REF; bitwise, or within assert_close
    where ``close``.  ``builtin_ref_refuses``: BUILTIN_REF has no kernel for the case, its session fails."""
    speed, teaching = ours_two_invokes(case), ours_two_invokes(case, reference=True, variant="reference")
    for resolver, ours in zip(RESOLVERS, (speed, teaching)):
        status, theirs = sessions[resolver][case]
        if builtin_ref_refuses and resolver == "BUILTIN_REF":
            assert status == "error"
            continue
        assert status == "ok", theirs
        for k in range(2):
            what = f"{case} invoke {k + 1} ({resolver})"
            if close:
                assert_close(ours[k], theirs[k], what)
            else:
                assert_same(ours[k], theirs[k], what)
    assert any(not np.array_equal(a, b) for a, b in zip(speed[0], speed[1])), "the second invoke repeats the first"
