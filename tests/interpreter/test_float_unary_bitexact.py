"""Float32 element-wise kernels (EXP, ELU, LOGISTIC, TANH, LOG, SQRT, RSQRT, SIN, COS, GELU in both
settings, HARD_SWISH), bit for bit with litert.

These run as "float islands" inside quantized models (between DEQUANTIZE and QUANTIZE) and in
dynamic-range models: one bit off in float changes the next quantization.  Every case runs

  * our speed layer (numba) vs ai-edge-litert's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES,
    all models in one child process, ``litert_batch.run_many``): every output bit pattern equal,
    NaN payloads included;
  * our teaching layer, numpy alone (``Interpreter(reference=True)``) vs litert: the same.

The inputs sweep float32 widely: ±0, ±inf, NaNs with payloads, denormals, random bit patterns (every
exponent), uniform ranges from ±1e-3 to ±1e4, and runs of neighbouring floats around the thresholds
of the approximations (88.72, −87.34, −103.97, ±16.64, ±7.907, ±104, ±3, ±6 ...).  Small tensors of
1 to 11 elements put those values in the last n mod 4 positions, which Eigen (LOGISTIC, GELU) and
HARD_SWISH's loop compute differently from the packets of 4.  Measured on ai-edge-litert 2.3.0
(x86-64, SSE build, no FMA, glibc libm).
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
from workbench.interpreter import Interpreter, quant
from workbench.interpreter.fast import activations as activations_fast
from workbench.interpreter.fast import unary as unary_fast
from workbench.interpreter.kernels import _unary
from workbench.interpreter.kernels.gelu import gelu_approximate_f32, gelu_f32
from workbench.schema import BuiltinOperator as B
from workbench.schema import GeluOptions, ModelBuilder
from workbench.versioning import update_versions

F32, F16 = np.dtype(np.float32), np.dtype(np.float16)
THRESHOLDS = (88.72283, -87.33654, -103.97208, 16.6355324, -16.6355324, 7.90738964, -7.90738964, 9.0, -9.0,
              11.0, -11.0, 15.556349, -15.556349, 0.625, -0.625, 1e-4, -1e-4, 17.0, -17.0, 104.0, -104.0, 1.0, -1.0,
              1.4142135, -1.4142135, 3.0, -3.0, 6.0, -6.0, 0.0)
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.1754942e-38, -1.1754942e-38,
                     1.17549435e-38, -1.17549435e-38, 3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0],
                    np.float32)


def neighbours(t: float, k: int = 40) -> np.ndarray:
    """t and its k float32 neighbours on either side."""
    v = np.float32(t)
    up = [v]
    for _ in range(k):
        up.append(np.nextafter(up[-1], np.float32(np.inf)))
    down = [v]
    for _ in range(k):
        down.append(np.nextafter(down[-1], np.float32(-np.inf)))
    return np.array(up + down[1:], np.float32)


def interesting() -> np.ndarray:
    """Specials, payload NaNs, threshold neighbourhoods: what the tail cases draw from."""
    nan_payloads = np.array([0x7F800001, 0xFF800001, 0x7FC12345, 0xFFC00001, 0x7FBFFFFF], np.uint32).view(np.float32)
    return np.concatenate([SPECIALS, nan_payloads] + [neighbours(t, 6) for t in THRESHOLDS]).astype(np.float32)


def sweep() -> np.ndarray:
    rng = np.random.default_rng(20240611)
    bits = rng.integers(0, 2 ** 32, 30000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    ranges = [(-4, 2), (-8, 8), (-4, 4), (-20, 20), (-110, 90), (-1e4, 1e4), (-1, 1), (-1e-3, 1e-3)]
    uniform = [rng.uniform(a, b, 6000).astype(np.float32) for a, b in ranges]
    denormals = (rng.integers(0, 1 << 23, 2000).astype(np.uint32)
                 | (rng.integers(0, 2, 2000).astype(np.uint32) << 31)).view(np.float32)
    x = np.concatenate([interesting(), bits, *uniform] + [neighbours(t) for t in THRESHOLDS] + [denormals])
    return x[: len(x) - len(x) % 4].astype(np.float32)


OPS = {
    "exp": (B.EXP, None), "elu": (B.ELU, None), "logistic": (B.LOGISTIC, None), "tanh": (B.TANH, None),
    "log": (B.LOG, None), "sqrt": (B.SQRT, None), "rsqrt": (B.RSQRT, None), "sin": (B.SIN, None),
    "cos": (B.COS, None), "gelu": (B.GELU, GeluOptions(approximate=False)),
    "gelu_approximate": (B.GELU, GeluOptions(approximate=True)), "hard_swish": (B.HARD_SWISH, None),
}
TAIL_SIZES = (1, 2, 3, 5, 6, 7, 9, 10, 11)
TAIL_SEEDS = 3
SWEEP = sweep()


def inputs(case: str) -> np.ndarray:
    """``<op>:sweep`` (the whole sweep, 4·k values), ``<op>:sweep3`` (4·k + 3 values, shaped [.., 7]
    after a cut), ``<op>:n<size>s<seed>`` (interesting values in a small tensor)."""
    kind = case.split(":")[1]
    if kind == "sweep":
        return SWEEP.reshape(-1, 4)
    if kind == "sweep3":
        m = len(SWEEP) // 7
        m -= (m - 1) % 4                                      # 7·m ≡ 3 (mod 4)
        return SWEEP[-7 * m:].reshape(-1, 7)
    size, seed = (int(v) for v in kind[1:].split("s"))
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    return rng.choice(interesting(), size).astype(np.float32)


CASES = [f"{op}:{kind}" for op in OPS for kind in
         ["sweep", "sweep3"] + [f"n{n}s{s}" for n in TAIL_SIZES for s in range(TAIL_SEEDS)]]


def unary_model(op, x: np.ndarray, options=None):
    b = ModelBuilder()
    t = b.input("x", x.shape, x.dtype)
    y = b.tensor("y", x.shape, x.dtype)
    b.op(op, [t], [y], options)
    b.output(y)
    return update_versions(b.build())


def build(case: str):
    op, options = OPS[case.split(":")[0]]
    x = inputs(case)
    return unary_model(op, x, options), x


def run_ours(model, x: np.ndarray, reference: bool = False) -> np.ndarray:
    it = Interpreter(model=model, reference=reference)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def bits(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.view({4: np.uint32, 2: np.uint16}[a.dtype.itemsize])


def differ(a, b) -> int:
    return int((bits(a) != bits(b)).sum())


HALVES = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)


@pytest.fixture(scope="module")
def litert():
    jobs = [(dump(m), [x]) for m, x in map(build, CASES)]
    jobs += [(dump(unary_model(op, HALVES)), [HALVES]) for op in (B.SIN, B.COS)]
    results = litert_batch.run_many(jobs)
    assert all(r[0] == "ok" for r in results), [r for r in results if r[0] != "ok"][:3]
    out = {c: r[1][0] for c, r in zip(CASES, results)}
    out["sin16"], out["cos16"] = results[-2][1][0], results[-1][1][0]
    return out


@pytest.mark.parametrize("case", CASES)
def test_float32_bit_exact_with_litert(case, litert):
    model, x = build(case)
    theirs = litert[case]
    ours = run_ours(model, x)
    ref = run_ours(model, x, reference=True)
    assert ours.dtype == theirs.dtype == F32 and ours.shape == theirs.shape
    bad = differ(ours, theirs)
    assert bad == 0, f"{case}: {bad}/{x.size} outputs differ from litert (fast kernel)"
    bad = differ(ref, theirs)
    assert bad == 0, f"{case}: {bad}/{x.size} outputs differ from litert (reference)"


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_float16_sin_cos_every_value(op, litert):
    model = unary_model(OPS[op][0], HALVES)
    theirs = litert[op + "16"]
    for reference in (False, True):
        ours = run_ours(model, HALVES, reference)
        assert ours.dtype == F16
        assert differ(ours, theirs) == 0, (op, reference)


@pytest.mark.parametrize("name", ["expf", "expm1f", "logf", "sinf", "cosf"])
def test_numba_math_is_the_c_library(name):
    """The fast path rests on numba's math.exp (...) on a float32 calling the C library's expf (...);
    the teaching layer's numpy formulation (``_unary.libm_f32``) computes the same bits."""
    x = SWEEP
    out = np.empty_like(x)
    op = {"expf": "exp", "expm1f": "elu", "logf": "log", "sinf": "sin", "cosf": "cos"}[name]
    unary_fast.run_float_unary(op, x, out)
    want = quant.libm_apply(name, x)                     # ctypes: the C library itself
    if name == "expm1f":
        want = np.where(x < 0, want, x)
    assert differ(out, want) == 0
    numpy_formulation = _unary.libm_f32(name, x)
    if name == "expm1f":
        numpy_formulation = np.where(x < 0, numpy_formulation, x)
    assert differ(numpy_formulation, want) == 0


# the numba loops of the speed layer: (module, name, call) — unary's C library loop for EXP, ELU, LOG,
# SIN, COS; activations' Eigen loop for LOGISTIC, TANH, GELU (both forms) and HARD_SWISH
LOOPS = [("unary", n, repr((n,))) for n in unary_fast.FLOAT_OPS] + \
    [("activations", n, repr((op, True, approx))) for n, op, approx in
     (("logistic", 0, False), ("tanh", 1, False), ("gelu", 2, False), ("gelu_approximate", 2, True),
      ("hard_swish", 3, False))]


def _run_loop(module, args, x):
    out = np.empty_like(x)
    if module == "unary":
        unary_fast.run_float_unary(*args, x, out)
    else:
        activations_fast.float_activation_loop(x, out, *args)
    return out


def test_without_jit_the_loops_give_the_same_bits():
    """WORKBENCH_JIT=0: the loops run as Python (the C library through ctypes) and agree with the
    numba build on the interesting values, in packets and in the one-value tail."""
    import ast
    x = np.concatenate([interesting(), SWEEP[::97]])
    x = x[: len(x) - (len(x) - 3) % 4]                        # 4·k + 3 values: a one-value tail of 3
    expected = {name: zlib.crc32(bits(_run_loop(module, ast.literal_eval(args), x)).tobytes())
                for module, name, args in LOOPS}
    code = ("import ast, sys, zlib, numpy as np\n"
            "from workbench import config\n"
            "from workbench.interpreter.fast import activations, unary\n"
            "x = np.frombuffer(sys.stdin.buffer.read(), np.float32)\n"
            f"loops = {LOOPS!r}\n"
            "res = [str(config.JIT), str('numba' in sys.modules)]\n"
            "for module, name, args in loops:\n"
            "    out = np.empty_like(x)\n"
            "    if module == 'unary':\n"
            "        unary.run_float_unary(*ast.literal_eval(args), x, out)\n"
            "    else:\n"
            "        activations.float_activation_loop(x, out, *ast.literal_eval(args))\n"
            "    res.append(str(zlib.crc32(out.view(np.uint32).tobytes())))\n"
            "print(' '.join(res))\n")
    env = dict(os.environ, WORKBENCH_JIT="0")
    proc = subprocess.run([sys.executable, "-c", code], input=x.tobytes(), capture_output=True, check=True, env=env)
    got = proc.stdout.decode().split()
    assert got[:2] == ["False", "False"]
    assert dict(zip([n for _, n, _ in LOOPS], map(int, got[2:]))) == expected


def test_the_sweep_tells_the_implementations_apart(litert):
    """The cases above can fail: numpy's functions, tanhf, 1/(1 + expf(−x)), the LUT transforms,
    x·relu6(x + 3)/6 and the packet code alone all differ from litert on these inputs."""
    x = SWEEP.reshape(-1, 4)
    f = np.float32
    with np.errstate(all="ignore"):
        relu6 = np.clip((x + f(3)).astype(f), f(0), f(6))
        wrong = {
            "exp": np.exp(x), "log": np.log(x), "sin": np.sin(x), "cos": np.cos(x),
            "elu": np.where(x < 0, np.expm1(x), x),
            "tanh": _unary.libm_f32("tanhf", x),
            "logistic": (f(1) / (f(1) + _unary.libm_f32("expf", -x)).astype(f)).astype(f),
            "gelu": gelu_f32(x), "gelu_approximate": gelu_approximate_f32(x),
            "hard_swish": ((x * relu6).astype(f) / f(6)).astype(f),
        }
    for op, y in wrong.items():
        assert differ(np.asarray(y, f), litert[f"{op}:sweep"]) > 0, op
    # the one-value tail: computing every element with the packet code would be wrong there
    tail_wrong = {"logistic": quant.eigen_logistic_packet_f32,
                  "gelu": lambda v: _unary.split_packets(v, lambda a: _gelu_packet(a), lambda a: _gelu_packet(a)),
                  "hard_swish": lambda v: _unary.split_packets(v, _hs_lanes, _hs_lanes)}
    for op, fn in tail_wrong.items():
        bad = 0
        for case in CASES:
            if case.startswith(op + ":n") and int(case.split(":n")[1].split("s")[0]) % 4 in (1, 2, 3):
                with np.errstate(all="ignore"):
                    bad += differ(fn(inputs(case)), litert[case])
        assert bad > 0, op


def _gelu_packet(a):
    from workbench.interpreter.kernels.gelu import gelu_eigen_f32
    return gelu_eigen_f32(a, False, True)


def _hs_lanes(a):
    from workbench.interpreter.kernels.hard_swish import hard_swish_lanes_f32
    return hard_swish_lanes_f32(a)
