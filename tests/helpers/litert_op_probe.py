"""Which (op, version) pairs ai-edge-litert's builtin op resolver registers (a test helper; also used
by ``dev/litert_op_coverage.py``).

How: for every BuiltinOperator and versions 1..MAX_VERSION, a one-operator model with no tensors is
handed to ``ai_edge_litert.interpreter.Interpreter`` (BUILTIN_WITHOUT_DEFAULT_DELEGATES).  Op
resolution happens while the interpreter is built, before any kernel sees a tensor, so "built"
means "registered" (a kernel's init that aborts on the empty options also means registered).
An unknown *custom* op is only refused by ``allocate_tensors`` ("Encountered unresolved custom
op"), so custom ops are allocated too.  Custom ops are probed by the names TFLite's
BuiltinOpResolver adds with AddCustom.

The probing runs in child processes (a kernel's init may abort); the parent starts a new child
after a crash and counts the op that was being built as registered.

    registered = litert_registered()        # {BuiltinOperator.ADD: {1, ..., 6}, "Mfcc": {1}, ...}
    ours = our_registered()                 # the same for workbench's BuiltinOpResolver
"""

from __future__ import annotations

import json
import subprocess
import sys

MAX_VERSION = 16
CUSTOM_NAMES = ("TFLite_Detection_PostProcess", "Mfcc", "AudioSpectrogram", "NumericVerify",
                "aeq.hadamard_rotation")
CUSTOM_VERSIONS = range(1, 4)

CHILD = r'''
import sys, json
from workbench import dump
from workbench.schema import ModelBuilder, BuiltinOperator as B
from ai_edge_litert.interpreter import Interpreter, OpResolverType
jobs = json.loads(sys.argv[1])
for op, v in jobs:
    b = ModelBuilder()
    if isinstance(op, str):
        b.op(B.CUSTOM, [], [], custom_code=op, version=v)
    else:
        b.op(B(op), [], [], version=v)
    data = dump(b.build())
    print(json.dumps([op, v, "start"]), flush=True)
    try:
        it = Interpreter(model_content=data,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        if isinstance(op, str):      # an unknown custom op only fails when allocating
            it.allocate_tensors()
        ok = True
    except Exception as exc:
        msg = str(exc).lower()
        ok = "find op" not in msg and "not supported" not in msg and "unresolved" not in msg
    print(json.dumps([op, v, ok]), flush=True)
'''


def probe(jobs) -> dict:
    """{(op, version): registered?} for ``jobs`` = [[op code int | custom name, version], ...]."""
    results: dict = {}
    pending = [list(j) for j in jobs]
    while pending:
        proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(pending)], capture_output=True,
                              text=True)
        started = None
        for line in proc.stdout.splitlines():
            op, v, what = json.loads(line)[:3]
            if what == "start":
                started = (op, v)
            elif what in (True, False):
                results[(op, v)] = what
                started = None
        if started is not None:          # that op's init crashed the child: it was resolved
            results[started] = True
        pending = [j for j in pending if tuple(j) not in results]
        if proc.returncode == 0 and pending:
            raise RuntimeError(f"child ended without probing {pending[:3]}: {proc.stderr[-2000:]}")
    return results


def _key(op):
    from workbench.schema import BuiltinOperator as B

    return op if isinstance(op, str) else B(op)


def litert_registered() -> dict:
    """{BuiltinOperator or custom name: set of versions litert registers} (only ops with any)."""
    from workbench.schema import BuiltinOperator as B

    jobs = [[int(op), v] for op in B if op != B.CUSTOM for v in range(1, MAX_VERSION + 1)]
    jobs += [[name, v] for name in CUSTOM_NAMES for v in CUSTOM_VERSIONS]
    out: dict = {}
    for (op, v), ok in probe(jobs).items():
        if ok:
            out.setdefault(_key(op), set()).add(v)
    return out


def our_registered() -> dict:
    """{BuiltinOperator or custom name: set of versions} of workbench's BuiltinOpResolver."""
    from workbench.interpreter.registry import BuiltinOpResolver

    resolver = BuiltinOpResolver()
    resolver.load_everything()          # a new resolver loads kernels as models ask for them
    out: dict = {}
    for (op, v) in list(resolver._builtin) + list(resolver._custom):
        out.setdefault(op, set()).add(int(v))
    return out
