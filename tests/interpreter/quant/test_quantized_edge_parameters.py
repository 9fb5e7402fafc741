"""Quantized SOFTMAX, LOG_SOFTMAX and LEAKY_RELU with edge parameters, bit for bit with litert.

ai-edge-litert's builtin kernels (2.3.0) accept every one of these models at prepare and compute
on; the workbench used to refuse them.  Every case runs

  * our fast kernel vs litert (BUILTIN_WITHOUT_DEFAULT_DELEGATES, all models in one child process,
    ``litert_batch.run_many``): every element equal;
  * our fast kernel vs our numpy reference (``Interpreter(reference=True)``): every element equal;
  * ``explain()`` at a seeded sample of positions: the worked-out value equals the kernel's;

and, where litert refuses instead, the workbench must refuse with a typed error naming the node.

What the sweep found (and the kernels now do):

  * LOG_SOFTMAX int8 / uint8, input scales 1e-45 … 3e38: tiny scales make every table entry 1 and
    the output constant; from about 1e30 on the float32 arithmetic gives ±inf and NaN, which x86
    converts to INT32_MIN (→ the type's minimum); from in_scale·255 = inf on (≈ 1.3e36) every
    output is −128 (int8) / 0 (uint8).
  * SOFTMAX int8 / uint8 inputs (int8, uint8 and int16 outputs), beta NaN / ±inf or an input
    scale · beta beyond float32: the float table holds NaN, so does every row's sum, and the output
    is INT32_MIN (+ the zero point, in int32) clamped — int8 → int8 127 (INT32_MIN − 128 wraps),
    → int16 −32768, uint8 → uint8 0.  beta ±1e38 is finite arithmetic with inf · 0 = NaN in it.
  * SOFTMAX int16: a NaN / infinite in_scale·beta makes the input multiplier (0, 0): every
    difference maps to exp(0) and each output is round(32768 / row length).
  * LEAKY_RELU uint8 / int8 / int16, alpha NaN / ±inf: the alpha multiplier is (0, 0), every
    negative input gives the output zero point.
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
from workbench.schema import BuiltinOperator as B
from workbench.schema import LeakyReluOptions, ModelBuilder, SoftmaxOptions
from workbench.versioning import update_versions

U8, I8, I16 = (np.dtype(t) for t in (np.uint8, np.int8, np.int16))
NAN, INF = float("nan"), float("inf")
EXPLAIN_SAMPLE = 48


def q(scale, zp):
    return {"scale": scale, "zero_point": zp, "quantized_dimension": 0}


def inputs_for(dt, key):
    """8-bit types: every value in order and shuffled, a row of low values, a constant row and a
    row at the top of the range (rows ending in ties and in a single maximum); int16: random rows."""
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    info = np.iinfo(dt)
    if dt == I16:
        return rng.integers(info.min, info.max, (3, 300), endpoint=True).astype(dt)
    every = np.arange(info.min, info.max + 1).astype(dt)
    return np.stack([every, rng.permutation(every), rng.integers(info.min, info.min + 20, 256).astype(dt),
                     np.full(256, 7, dt), rng.integers(info.max - 3, info.max, 256, endpoint=True).astype(dt)])


def one_op(op, dt, out_dt, qi, qo, options, key):
    x = inputs_for(dt, key)
    b = ModelBuilder()
    t = b.input("x", x.shape, dt, quantization=q(*qi))
    y = b.tensor("y", x.shape, out_dt, quantization=q(*qo))
    b.op(op, [t], [y], options)
    b.output(y)
    return update_versions(b.build()), [x]


def _tag(v: float) -> str:
    return f"{v:.2g}".replace("e+", "e")


CASES: dict = {}

# LOG_SOFTMAX: tiny and huge input scales (the output must be scale 16/256, zero point 127 / 255)
for dt, out_zp, in_zps in ((I8, 127, (0, 5)), (U8, 255, (0, 130))):
    for s in (1e-45, 1e-38, 1e-30, 1e30, 1.3e36, 1.4e36, 3e37, 3e38):
        for zp in in_zps:
            CASES[f"log_softmax_{dt}_in{_tag(s)}_zp{zp}"] = (B.LOG_SOFTMAX, dt, dt, (s, zp), (16 / 256, out_zp), None)

# SOFTMAX: every input / output pair, NaN / infinite / huge betas, scale · beta beyond float32
SOFTMAX_OUT = {(I8, I8): (1 / 256, -128), (I8, I16): (2 ** -15, 0), (U8, U8): (1 / 256, 0), (U8, I16): (2 ** -15, 0),
               (I16, I16): (2 ** -15, 0)}
for (dt, out_dt), qo in SOFTMAX_OUT.items():
    zp = 0 if dt == I16 else 3
    for beta in (NAN, INF, -INF, 1e38, -1e38):
        for s in (0.05, 1e-30):
            CASES[f"softmax_{dt}_{out_dt}_beta{_tag(beta)}_in{_tag(s)}"] = (B.SOFTMAX, dt, out_dt, (s, zp), qo,
                                                                           SoftmaxOptions(beta=beta))
    for s, beta in ((1e30, 1e10), (1e30, -1e10), (3e38, 2.0)):
        CASES[f"softmax_{dt}_{out_dt}_beta{_tag(beta)}_in{_tag(s)}"] = (B.SOFTMAX, dt, out_dt, (s, zp), qo,
                                                                       SoftmaxOptions(beta=beta))

# LEAKY_RELU: NaN (both signs) and infinite alphas, ordinary and absurd scales
for dt, zps in ((U8, (130, 120)), (I8, (5, -7)), (I16, (0, 0))):
    for name, alpha in (("nan", NAN), ("-nan", -NAN), ("inf", INF), ("-inf", -INF)):
        for si, so in ((0.05, 0.05), (0.05, 0.1), (1e-30, 0.05), (3e38, 1e-30)):
            CASES[f"leaky_relu_{dt}_alpha{name}_in{_tag(si)}_out{_tag(so)}"] = (
                B.LEAKY_RELU, dt, dt, (si, zps[0]), (so, zps[1]), LeakyReluOptions(alpha=alpha))


def build_case(name):
    return one_op(*CASES[name], name)


def run_ours(model, feeds, reference=False):
    it = Interpreter(model=model, reference=reference, keep_intermediates=True)
    it.allocate_tensors()
    for d, v in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], v)
    it.invoke()
    return it, it.get_tensor(it.get_output_details()[0]["index"])


@pytest.fixture(scope="module")
def litert():
    names = sorted(CASES)
    results = litert_batch.run_many([(dump(m), f) for m, f in map(build_case, names)])
    return dict(zip(names, results))


@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_exact_with_litert_reference_and_explain(case, litert):
    status, theirs = litert[case]
    model, feeds = build_case(case)
    if status != "ok":              # litert refuses: so must the workbench, with a typed error
        with pytest.raises((UnsupportedOpError, ModelError), match=r"\(node 0\)"):
            Interpreter(model=model).allocate_tensors()
        return
    it, ours = run_ours(model, feeds)
    _, ref = run_ours(model, feeds, reference=True)
    theirs = theirs[0]
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    bad = int((ours != theirs).sum())
    assert bad == 0, f"{case}: {bad}/{ours.size} outputs differ from litert"
    assert int((ours != ref).sum()) == 0, f"{case}: fast kernel and numpy reference differ"
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    for k in rng.choice(ours.size, EXPLAIN_SAMPLE, replace=False):
        e = explain(it, 0, int(k))
        assert e.agrees is not False, f"{case} at {int(k)}: {e!r}"


def test_litert_computes_every_edge_case(litert):
    """The sweep is not vacuous: litert accepts every model above (none is refused, none crashes)."""
    assert {status for status, _ in litert.values()} == {"ok"}


@pytest.mark.parametrize("dt, minimum", [(I8, -128), (U8, 0)])
def test_log_softmax_at_scale_3e38_is_the_type_minimum(dt, minimum, litert):
    """in_scale · 255 is inf: every output, ours and litert's, is the type's minimum."""
    for zp in (0, 5) if dt == I8 else (0, 130):
        case = f"log_softmax_{dt}_in3e38_zp{zp}"
        assert np.unique(litert[case][1][0]).tolist() == [minimum]
        model, feeds = build_case(case)
        assert np.unique(run_ours(model, feeds)[1]).tolist() == [minimum]


@pytest.mark.parametrize("pair, value", [((I8, I8), 127), ((I8, I16), -32768), ((U8, U8), 0), ((U8, I16), -32768)])
def test_softmax_nan_beta_is_int32_min_plus_zero_point(pair, value, litert):
    """A NaN beta: every output is (int32)NaN = INT32_MIN plus the zero point in int32, clamped;
    explain() says so."""
    case = f"softmax_{pair[0]}_{pair[1]}_betanan_in0.05"
    assert np.unique(litert[case][1][0]).tolist() == [value]
    model, feeds = build_case(case)
    it, ours = run_ours(model, feeds)
    assert np.unique(ours).tolist() == [value]
    assert np.isnan(it.prepared()[0][2].table).all()
    e = explain(it, 0, 3)
    assert e.agrees is True and any("INT32_MIN" in s.formula for s in e.steps), e


def test_leaky_relu_nan_alpha_multiplier_is_zero():
    model, feeds = build_case("leaky_relu_int8_alphanan_in0.05_out0.05")
    it, ours = run_ours(model, feeds)
    d = it.prepared()[0][2]
    assert (d.output_multiplier_alpha, d.output_shift_alpha) == (0, 0)
    x = feeds[0].astype(np.int64)
    assert (ours[x < 5] == -7).all() and (ours[x > 5] > -7).any()


def test_output_conversions():
    p = np.array([np.nan, np.inf, -np.inf, 3e9, 2.5, -2.5, 127.4], np.float32)
    assert quant.softmax_output_int32_x86(p, -128, False).tolist() == [
        2 ** 31 - 128, 2 ** 31 - 128, 2 ** 31 - 128, 2 ** 31 - 128, -125, -131, -1]
    assert quant.softmax_output_int32_x86(p, -128, True).tolist() == [
        -2 ** 31, -2 ** 31, -2 ** 31, -2 ** 31, 3, -2, 127]
    assert quant.log_softmax_output_int32_x86(p, 127).tolist() == [
        -2 ** 31, -2 ** 31, -2 ** 31, -2 ** 31, 129, 125, 254]
