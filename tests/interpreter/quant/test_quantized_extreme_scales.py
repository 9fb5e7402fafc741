"""Quantized element-wise activations at absurd scales, and int16 ADD / SUB with zero points.

Scales of 1e30 and more, or 1e-30 and less (down to the smallest float32 denormal, 1.4e-45), make
the float arithmetic of TFLite's lookup-table builders overflow to ±inf or produce NaN (0 · inf,
inf − inf), and push integer multipliers out of the int32 range.  What litert writes then is what
its x86 build makes of those values; every case below runs

  * our fast kernel vs ai-edge-litert's builtin kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES, all
    models in one child process, ``litert_batch.run_many``): every element equal;
  * our fast kernel vs our numpy reference (``Interpreter(reference=True)``): every element equal;
  * ``explain()`` at every output of an 8-bit case and at a seeded sample of an int16 one: the
    worked-out value equals the kernel's.

Inputs are every value of the type (non-negative ones for SQRT / RSQRT).  The sweep found and
this file keeps (measured on ai-edge-litert 2.3.0):

  * int8 LUTs (TANH, ELU, GELU, EXP, LOG): litert clamps round(y/out_scale) + out_zp to
    [−128, 127] while still a float (+inf → 127, −inf → −128) and a NaN becomes 0; the uint8 LUTs
    truncate to int32 first (inf, NaN and anything beyond int32 → INT32_MIN → clamped to 0).
  * int16 LUTs (GELU, EXP, LOG, RSQRT): the slope between two entries is an int16 and wraps when
    the entries sit at the two ends of the range; a NaN entry is 0.
  * int16 LOGISTIC / TANH: an input multiplier that is 0 (scales below ~3.8e-14) or INT32_MIN
    (above ~1.7e5) sends litert to the gemmlowp kernel, which reads the input as Q3.12; these
    used to be refused.
  * int8 SQRT: INT32_MIN (an infinite quotient) + a negative zero point wraps in int32.

int16 ADD and SUB with a non-zero input or output zero point: litert 2.3.0 refuses them at
prepare (``add.cc`` / ``sub.cc``: "zero_point != 0"), on the general and on the power-of-two
path, with or without options; so does the workbench, with an UnsupportedOpError naming the node
and the zero point.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from helpers import litert_batch
from workbench import dump
from workbench.errors import ModelError, UnsupportedOpError
from workbench.interpreter import Interpreter, quant
from workbench.interpreter.explain import explain
from workbench.schema import (
    AddOptions,
    GeluOptions,
    LeakyReluOptions,
    ModelBuilder,
    SoftmaxOptions,
    SubOptions,
)
from workbench.schema import (
    BuiltinOperator as B,
)
from workbench.versioning import update_versions

U8, I8, I16 = (np.dtype(t) for t in (np.uint8, np.int8, np.int16))
SM16 = (2 ** -15, 0)
EXPLAIN_SAMPLE = 96            # explain() positions per int16 case (every position of an 8-bit one)


def q(scale, zp):
    return {"scale": scale, "zero_point": zp, "quantized_dimension": 0}


def unary_model(op, dt, qi, qo, options=None, lo=None, shape=None):
    """A one-op model over every value of ``dt`` (from ``lo`` up, if given), or over seeded random
    values of ``shape``."""
    info = np.iinfo(dt)
    if shape is None:
        x = np.arange(info.min if lo is None else lo, info.max + 1).astype(dt).reshape(1, -1)
    else:
        rng = np.random.default_rng(zlib.crc32(repr((op, dt, qi, qo, shape)).encode()))
        x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    b = ModelBuilder()
    t = b.input("x", x.shape, dt, quantization=q(*qi))
    y = b.tensor("y", x.shape, dt, quantization=q(*qo))
    b.op(op, [t], [y], options)
    b.output(y)
    return update_versions(b.build()), [x]


def binary_model(op, qa, qb, qo, options, shape_b=(3, 40)):
    rng = np.random.default_rng(zlib.crc32(repr((op, qa, qb, qo, shape_b)).encode()))
    a = rng.integers(-32768, 32767, (3, 40), endpoint=True).astype(np.int16)
    c = rng.integers(-32768, 32767, shape_b, endpoint=True).astype(np.int16)
    b = ModelBuilder()
    ta = b.input("a", a.shape, np.int16, quantization=q(*qa))
    tb = b.input("b", c.shape, np.int16, quantization=q(*qb))
    y = b.tensor("y", (3, 40), np.int16, quantization=q(*qo))
    b.op(op, [ta, tb], [y], options)
    b.output(y)
    return update_versions(b.build()), [a, c]


def _tag(s: float) -> str:
    return f"{s:.2g}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")


CASES: dict = {}


def add_cases(name, op, dt, pairs, zps, options=None, lo=None, shape=None):
    for si, so in pairs:
        key = f"{name}_{dt}_in{_tag(si)}_out{_tag(so)}"
        CASES[key] = (op, dt, (si, zps[0]), (so, zps[1]), options, lo, shape)


HUGE, TINY = (1e30, 3e38), (1e-45, 1e-38, 1e-30)
# (input scale, output scale): every combination of absurd with ordinary and with absurd
PAIRS8 = [(si, so) for si in (1e-45, 1e-30, 0.05, 1e10, 1e30, 3e38) for so in (1e-45, 1e-38, 1e-30, 1e-10, 0.05, 3e38)
          if not (si == 0.05 and so == 0.05)]
ZP8 = {I8: (5, -7), U8: (130, 120)}

for dt in (U8, I8):
    add_cases("tanh", B.TANH, dt, PAIRS8, ZP8[dt])
    add_cases("gelu", B.GELU, dt, PAIRS8, ZP8[dt], GeluOptions(approximate=False))
    add_cases("gelu_approximate", B.GELU, dt, PAIRS8, ZP8[dt], GeluOptions(approximate=True))
    add_cases("logistic", B.LOGISTIC, dt, [(s, 1 / 256) for s in HUGE + TINY], (ZP8[dt][0], 0 if dt == U8 else -128))
add_cases("elu", B.ELU, I8, PAIRS8, ZP8[I8])
add_cases("exp", B.EXP, I8, PAIRS8, ZP8[I8])
add_cases("log", B.LOG, I8, PAIRS8, ZP8[I8])
add_cases("log_zp", B.LOG, I8, [(0.05, 1e-38), (1e30, 1e-30), (3e38, 0.05)], (-100, 120))
add_cases("sqrt", B.SQRT, I8, PAIRS8, (-128, -7), lo=-128)
add_cases("sqrt_zp", B.SQRT, I8, [(0.05, 1e-45), (3e38, 0.05), (1e-30, 1e-38)], (-100, 100), lo=-100)

PAIRS16 = [(0.05, 1e-38), (0.05, 1e-30), (0.05, 1e-10), (1e-30, 1e-38), (1e-10, 1e-30), (1e10, 0.05), (1e30, 0.05),
           (1e30, 1e-30), (3e38, 0.05), (3e38, 1e-38), (1e-45, 1e-45), (3e38, 3e38)]
add_cases("gelu", B.GELU, I16, PAIRS16, (0, 0), GeluOptions(approximate=False))
add_cases("gelu_approximate", B.GELU, I16, PAIRS16, (0, 0), GeluOptions(approximate=True))
add_cases("exp", B.EXP, I16, PAIRS16 + [(0.05, 0.05), (0.05, 1e30)], (0, 0))
add_cases("log", B.LOG, I16, PAIRS16 + [(1e-45, 1e-38), (1e10, 1e-38)], (0, 0))
add_cases("rsqrt", B.RSQRT, I16, PAIRS16 + [(3e38, 1e-10)], (0, 0), lo=0)
add_cases("sqrt", B.SQRT, I16, PAIRS16, (0, 0), lo=0)
for op in (B.LOGISTIC, B.TANH):
    add_cases(op.name.lower(), op, I16,
              [(s, SM16[0]) for s in (1e-45, 1e-38, 1e-30, 3e-14, 4e-14, 1e6, 1e10, 1e30, 3e38)], (0, 0))

# multipliers through QuantizeMultiplier: infinite ones, shifts of 32 and more
for dt in (U8, I8, I16):
    zps = (0, 0) if dt == I16 else ZP8[dt]
    for alpha in (0.2, -0.3, 1e30):
        add_cases(f"leaky_relu_alpha{alpha:g}", B.LEAKY_RELU, dt, PAIRS8 if alpha == 0.2 else PAIRS8[::3], zps,
                  LeakyReluOptions(alpha=alpha))
for dt in (U8, I8):
    add_cases("hard_swish", B.HARD_SWISH, dt, PAIRS8 + [(3.5e7, 0.05), (3.5e7, 3.5e7), (1.8e7, 0.05), (7e7, 7e7)],
              ZP8[dt])
add_cases("rsqrt", B.RSQRT, I8, PAIRS8, (-128, -7), lo=-128)
add_cases("softmax", B.SOFTMAX, I16, [(s, SM16[0]) for s in (1e-45, 1e-30, 1e5, 1e10, 1e30, 3e38)], (0, 0),
          SoftmaxOptions(beta=1.0), shape=(3, 300))
add_cases("softmax_beta1e30", B.SOFTMAX, I16, [(0.001, SM16[0])], (0, 0), SoftmaxOptions(beta=1e30), shape=(3, 300))


# int16 ADD / SUB with zero points: refused by litert and by the workbench (all option variants)
ZERO_POINT_CASES = {}
for op, opts in ((B.ADD, AddOptions), (B.SUB, SubOptions)):
    for pot in (False, True, None):
        for zps in ((3, 0, 0), (0, -5, 0), (0, 0, 7), (100, -200, 300)):
            for scales in ((0.001, 0.0007, 0.0015), (2 ** -12, 2 ** -14, 2 ** -12)):
                for shape_b in ((3, 40), (40,)):
                    name = f"{op.name.lower()}_pot{pot}_zp{'_'.join(map(str, zps))}_s{scales[0]:.3g}_b{len(shape_b)}"
                    ZERO_POINT_CASES[name] = (op, (scales[0], zps[0]), (scales[1], zps[1]), (scales[2], zps[2]),
                                              None if pot is None else opts(pot_scale_int16=pot), shape_b)


def build_case(name):
    op, dt, qi, qo, options, lo, shape = CASES[name]
    return unary_model(op, dt, qi, qo, options, lo, shape)


def run_ours(model, feeds, reference=False) -> tuple[Interpreter, list]:
    it = Interpreter(model=model, reference=reference, keep_intermediates=True)
    it.allocate_tensors()
    for d, v in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], v)
    it.invoke()
    return it, [it.get_tensor(d["index"]) for d in it.get_output_details()]


@pytest.fixture(scope="module")
def litert():
    names = sorted(CASES)
    zp_names = sorted(ZERO_POINT_CASES)
    jobs = [(dump(m), f) for m, f in map(build_case, names)]
    jobs += [(dump(m), f) for m, f in (binary_model(*ZERO_POINT_CASES[n]) for n in zp_names)]
    results = litert_batch.run_many(jobs)
    return dict(zip(names + [f"zp:{n}" for n in zp_names], results))


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_reference_and_explain(case, litert):
    status, theirs = litert[case]
    model, feeds = build_case(case)
    if status != "ok":              # litert refuses at prepare: so must the workbench, with a typed error
        with pytest.raises((UnsupportedOpError, ModelError), match=r"\(node 0\)"):
            Interpreter(model=model).allocate_tensors()
        return
    it, ours = run_ours(model, feeds)
    _, ref = run_ours(model, feeds, reference=True)
    assert ours[0].dtype == theirs[0].dtype and ours[0].shape == theirs[0].shape
    bad = int((ours[0] != theirs[0]).sum())
    assert bad == 0, f"{case}: {bad}/{ours[0].size} outputs differ from litert"
    assert int((ours[0] != ref[0]).sum()) == 0, f"{case}: fast kernel and numpy reference differ"
    size = ours[0].size
    positions = range(size) if size <= 256 else np.random.default_rng(zlib.crc32(case.encode())).choice(
        size, EXPLAIN_SAMPLE, replace=False)
    for k in positions:
        e = explain(it, 0, int(k))
        assert e.agrees is not False, f"{case} at {int(k)}: {e!r}"


@pytest.mark.parametrize("case", sorted(ZERO_POINT_CASES))
def test_int16_add_sub_with_zero_points_are_refused_like_litert(case, litert):
    status, message = litert[f"zp:{case}"]
    assert status == "error" and "zero_point != 0" in message, (status, message)
    model, _ = binary_model(*ZERO_POINT_CASES[case])
    with pytest.raises(UnsupportedOpError, match=r"\(node 0\).*zero point is -?\d+") as info:
        Interpreter(model=model).allocate_tensors()
    # the first non-zero zero point in litert's order (input 1, input 2, output) is the one named
    first = next(k for k, z in enumerate(m[1] for m in ZERO_POINT_CASES[case][1:4]) if z)
    assert ("input 1", "input 2", "output")[first] in str(info.value)


def test_extreme_scale_cases_reach_inf_and_nan():
    """The sweep is not vacuous: the 8-bit tables meet infinite and NaN values, the int16 tables
    wrapped slopes, and the int16 LOGISTIC / TANH cases multipliers that are not > 0."""
    from workbench.interpreter.kernels.gelu import gelu_f32
    v = np.arange(-128, 128)
    d = (np.float32(0.05) * (v - 5).astype(np.float32)).astype(np.float32)
    with np.errstate(all="ignore"):
        qf = (quant.round_half_away(gelu_f32(d) * (np.float32(1) / np.float32(1e-45))) - 7).astype(np.float32)
    assert np.isinf(qf).any() and np.isnan(qf).any()
    model, _ = build_case("gelu_int16_in0.05_out1e-38")
    it = Interpreter(model=model)
    it.allocate_tensors()
    lut = it.prepared()[0][2].lut.astype(np.int64)
    assert (np.abs(np.diff(lut)) > 32767).any()
    for case in ("logistic_int16_in1e-30_out3.1e-5", "tanh_int16_in3e38_out3.1e-5"):
        model, _ = build_case(case)
        it = Interpreter(model=model)
        it.allocate_tensors()
        assert it.prepared()[0][2].input_multiplier in (0, quant.INT32_MIN)


def test_lut_float_to_8bit():
    values = np.array([np.inf, -np.inf, np.nan, 3e9, -3e9, 127.9, -128.9, 5.7, -5.7], np.float32)
    assert quant.lut_float_to_8bit(values, np.int8).tolist() == [127, -128, 0, 127, -128, 127, -128, 5, -5]
    assert quant.lut_float_to_8bit(values, np.uint8).tolist() == [0, 0, 0, 0, 0, 127, 0, 5, 0]


def test_int16_lut_slope_wraps_like_an_int16():
    lut = np.zeros(513, np.int16)
    lut[256], lut[257] = -32768, 32767           # slope 65535 is −1 as an int16
    x = np.array([0, 1, 64, 65, 127], np.int16)
    assert quant.lut_lookup_int16(x, lut).tolist() == [-32768, -32768, -32768, 32767, 32767]
