"""Float32 SOFTMAX (any beta) and LOG_SOFTMAX, bit for bit with litert.

Float softmaxes sit inside quantized models (between DEQUANTIZE and QUANTIZE) and in dynamic-range
models: one bit off in float changes the next quantization.  Every case runs

  * our speed layer (fast/softmax.py, numba) vs ai-edge-litert's builtin kernels (BUILTIN_WITHOUT_
    DEFAULT_DELEGATES, all models in one child process, ``litert_batch.run_many``): every output bit
    pattern equal;
  * our teaching layer (``Interpreter(reference=True)``, numpy) vs litert: the same.

What decides the bits (see kernels/_softmax.py): Eigen's packet exp on the
first 4·⌊N/4⌋ values of the tensor (SOFTMAX) or of each row (LOG_SOFTMAX) and expf on the rest;
Eigen's reductions (two packet accumulators, the unaligned head and the tail added last, so the
row length and the row's offset from a 16-byte boundary matter); the reciprocal of the sum times
each value.  So the sweep takes rows of 1 to 1000 values, 1-D, 2-D and 4-D tensors with several
rows (every offset mod 4), betas 1, 0.37, 2.5, −1.3, 0, 1000, 1e-30, inputs from N(0, 1) scaled by
1, 10, 100, 10^4, random finite bit patterns (every exponent), ±inf, ±3.4e38, ties and rows of equal
values.  Rows holding a NaN come out all NaN in both; the NaN payloads / signs are not matched
(see test_nan_rows_are_nan_rows).  Measured on ai-edge-litert 2.3.0 (x86-64, SSE build, no FMA).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

from helpers import litert_batch
from workbench import dump
from workbench.interpreter import Interpreter
from workbench.interpreter.fast import softmax
from workbench.interpreter.kernels import _unary
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder, SoftmaxOptions
from workbench.versioning import update_versions

F32 = np.dtype(np.float32)
f = np.float32

LENGTHS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, 31, 37, 64, 100, 257, 1000)
BETAS = (1.0, 0.37, 2.5, -1.3, 0.0, 1000.0, 1e-30)
KINDS = ("s1", "s10", "s100", "s1e4", "bits", "special", "equal", "neginf")
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, 3.4028235e38, -3.4028235e38, 1e30, -1e30, 1e-45, -1e-45,
                    5.0, 5.0, 5.0, -7.5, 88.72283, -103.97208, 1.0, 1.0], np.float32)


def shapes(n: int) -> list:
    """1-D, 2-D with an odd number of rows (every row offset mod 4 when n is odd), 4-D."""
    rows = 3 if n >= 257 else 5
    return [(n,), (rows, n), (2, 3, 1, n)]


def make_input(kind: str, shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind[0] == "s" and kind[1].isdigit():
        return (rng.standard_normal(shape) * float(kind[1:])).astype(f)
    if kind == "bits":                                    # every exponent; non-finite patterns → 1
        v = rng.integers(0, 2 ** 32, shape, dtype=np.uint64).astype(np.uint32).view(f)
        return np.where(np.isfinite(v), v, f(1)).astype(f)
    if kind == "special":
        return rng.choice(SPECIAL, shape).astype(f)
    if kind == "equal":                                   # rows of one repeated value (ties for the max)
        return np.repeat(rng.standard_normal(shape[:-1] + (1,)).astype(f) * f(30), shape[-1], -1)
    if kind == "neginf":                                  # −inf entries, and whole rows of −inf
        x = rng.standard_normal(shape).astype(f) * f(20)
        x[rng.random(shape) < 0.3] = -np.inf
        x.reshape(-1, shape[-1])[::2] = -np.inf
        return x
    raise ValueError(kind)


def case_list() -> list:
    cases = []
    for n in LENGTHS:
        for shape in shapes(n):
            for kind in KINDS:
                cases.append(("log_softmax", shape, None, kind))
                for beta in BETAS:
                    if beta == 1.0 or (kind in ("s1", "s10", "special") and len(shape) == 2):
                        cases.append(("softmax", shape, beta, kind))
    for scale in ("s1", "s10", "s100"):                   # the shapes that showed the old differences
        cases.append(("softmax", (64, 37), 1.0, scale))
        cases.append(("log_softmax", (64, 37), None, scale))
    return cases


def case_id(case) -> str:
    op, shape, beta, kind = case
    return f"{op}:{'x'.join(map(str, shape))}:{kind}" + ("" if beta is None else f":b{beta:g}")


CASES = case_list()
IDS = [case_id(c) for c in CASES]


def build(case):
    op, shape, beta, kind = case
    x = make_input(kind, shape, zlib.crc32(case_id(case).encode()))
    return one_op_model(op, shape, beta), x


def one_op_model(op: str, shape, beta=None):
    b = ModelBuilder()
    t = b.input("x", shape, np.float32)
    y = b.tensor("y", shape, np.float32)
    if op == "softmax":
        b.op(B.SOFTMAX, [t], [y], SoftmaxOptions(beta=beta))
    else:
        b.op(B.LOG_SOFTMAX, [t], [y])
    b.output(y)
    return update_versions(b.build())


def run_ours(model, x: np.ndarray, reference: bool = False) -> np.ndarray:
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float32).view(np.uint32)


def differ(a, b) -> int:
    return int((bits(a) != bits(b)).sum())


NAN_PAYLOADS = np.array([0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFF812345], np.uint32).view(np.float32)


def nan_input(shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(f)
    x[rng.random(shape) < 0.05] = rng.choice(NAN_PAYLOADS)
    rows = x.reshape(-1, shape[-1])
    rows[:, 0][::3] = NAN_PAYLOADS[2]                            # NaN in the first value of a row too
    rows[1::2] = rng.standard_normal(rows[1::2].shape).astype(f)  # every other row without NaN
    return x


NAN_CASES = [(op, shape) for op in ("softmax", "log_softmax") for shape in [(9, 5), (7, 8), (3, 37), (2, 3, 1, 13)]]


@pytest.fixture(scope="module")
def litert():
    jobs = [(dump(m), [x]) for m, x in map(build, CASES)]
    jobs += [(dump(one_op_model(op, shape, 1.0)), [nan_input(shape, k)]) for k, (op, shape) in enumerate(NAN_CASES)]
    results = litert_batch.run_many(jobs)
    assert all(r[0] == "ok" for r in results), [r for r in results if r[0] != "ok"][:3]
    out = {i: r[1][0] for i, r in zip(IDS, results)}
    out["nan"] = [r[1][0] for r in results[len(CASES):]]
    return out


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_bit_exact_with_litert(case, litert):
    model, x = build(case)
    theirs = litert[case_id(case)]
    ours = run_ours(model, x)
    ref = run_ours(model, x, reference=True)
    assert ours.dtype == theirs.dtype == F32 and ours.shape == theirs.shape == x.shape
    bad = differ(ours, theirs)
    assert bad == 0, f"{case_id(case)}: {bad}/{x.size} outputs differ from litert (fast kernel)"
    bad = differ(ref, theirs)
    assert bad == 0, f"{case_id(case)}: {bad}/{x.size} outputs differ from litert (reference)"


def test_nan_rows_are_nan_rows(litert):
    """A NaN anywhere in a row makes the whole row NaN (the sum is NaN), in litert and here; the
    other rows are bit-exact.  Which NaN (sign, payload) each output carries is not matched: it
    depends on the operand order the compiler chose inside Eigen's reductions."""
    for k, (op, shape) in enumerate(NAN_CASES):
        x = nan_input(shape, k)
        theirs = litert["nan"][k]
        nan_rows = np.isnan(x.reshape(-1, shape[-1])).any(axis=1)
        assert nan_rows.any() and not nan_rows.all()
        assert np.isnan(theirs.reshape(-1, shape[-1])[nan_rows]).all()
        for reference in (False, True):
            ours = run_ours(one_op_model(op, shape, 1.0), x, reference)
            assert (np.isnan(ours) == np.isnan(theirs)).all(), (op, shape, reference)
            o, t = ours.reshape(-1, shape[-1]), theirs.reshape(-1, shape[-1])
            assert differ(o[~nan_rows], t[~nan_rows]) == 0, (op, shape, reference)


def test_the_sweep_tells_the_implementations_apart(litert):
    """The cases above can fail: a float64 softmax, a float32 one with a left-to-right sum, with a
    division instead of the reciprocal, with expf (or the packet exp) everywhere, all differ."""
    def variants(x, beta, op):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).astype(f)
        m = x2.max(axis=1, keepdims=True)
        z = ((x2 - m).astype(f) * f(1.0 if beta is None else beta)).astype(f)
        out = {}
        with np.errstate(all="ignore"):
            ex = {"expf": _unary.libm_f32("expf", z), "packet": _unary.eigen_exp_packet_f32(z)}
            for name, e in ex.items():
                s = np.cumsum(e, axis=1, dtype=f)[:, -1:]
                if op == "softmax":
                    out[name + "+cumsum"] = e * (f(1) / s)
                    out[name + "+divide"] = e / s
                else:
                    out[name + "+cumsum"] = z - _unary.libm_f32("logf", s)
            v = x2.astype(np.float64)
            v = (v - v.max(axis=1, keepdims=True)) * (1.0 if beta is None else beta)
            lse = np.log(np.exp(v).sum(axis=1, keepdims=True))
            out["float64"] = np.exp(v - lse) if op == "softmax" else v - lse
        return {k: np.asarray(y, f).reshape(x.shape) for k, y in out.items()}

    wrong: dict = {}
    for case in CASES:
        if case[3] not in ("s1", "s10", "s100"):
            continue
        model, x = build(case)
        for name, y in variants(x, case[2], case[0]).items():
            key = (case[0], name)
            wrong[key] = wrong.get(key, 0) + differ(y, litert[case_id(case)])
    assert len(wrong) == 8 and all(v > 0 for v in wrong.values()), wrong


def test_without_jit_the_loops_give_the_same_bits():
    """WORKBENCH_JIT=0: the loops run as Python (expf / logf through ctypes) and give the numba bits."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(7 * 13).astype(f) * f(40), make_input("special", (7 * 13,), 3)])
    x = x.reshape(14, 13)
    ours = {}
    for name in ("softmax", "log_softmax"):
        out = np.empty_like(x)
        softmax.softmax_f32(x, 0.37, out) if name == "softmax" else softmax.log_softmax_f32(x, out)
        ours[name] = zlib.crc32(bits(out).tobytes())
    code = ("import sys, zlib, numpy as np\n"
            "from workbench import config\n"
            "from workbench.interpreter.fast import softmax\n"
            "x = np.frombuffer(sys.stdin.buffer.read(), np.float32).reshape(14, 13)\n"
            "a, b = np.empty_like(x), np.empty_like(x)\n"
            "softmax.softmax_f32(x, 0.37, a)\n"
            "softmax.log_softmax_f32(x, b)\n"
            "print(config.JIT, 'numba' in sys.modules, zlib.crc32(a.view(np.uint32).tobytes()),"
            " zlib.crc32(b.view(np.uint32).tobytes()))\n")
    env = dict(os.environ, WORKBENCH_JIT="0")
    proc = subprocess.run([sys.executable, "-c", code], input=x.tobytes(), capture_output=True, check=True, env=env)
    got = proc.stdout.decode().split()
    assert got == ["False", "False", str(ours["softmax"]), str(ours["log_softmax"])]


def test_in_place_and_strided_outputs():
    """The fast path writes into the output tensor directly; an output that is the input itself or
    not contiguous gets the same bits."""
    x = make_input("s10", (6, 9), 11)
    want = np.empty_like(x)
    softmax.softmax_f32(x, 2.5, want)
    y = x.copy()
    softmax.softmax_f32(y, 2.5, y)
    assert differ(y, want) == 0
    wide = np.zeros((6, 18), np.float32)
    softmax.softmax_f32(x, 2.5, wide[:, ::2])
    assert differ(wide[:, ::2], want) == 0
    softmax.log_softmax_f32(x, want)
    y = x.copy()
    softmax.log_softmax_f32(y, y)
    assert differ(y, want) == 0
