"""COMPLEX_ABS, REAL, IMAG (complex64 → float32, complex128 → float64), bit-exact with ai-edge-litert.

Two kinds of tiny models, each run by our fast kernels, our references (``reference=True``) and
litert's builtin kernels (child process):

* as in real models: float32 input → RFFT2D → COMPLEX_ABS, REAL and IMAG (all three outputs),
  on ordinary, huge (1e30), tiny (1e−30), mixed and subnormal inputs, and on inputs with ±inf
  and NaN through a width-2 FFT (wider FFTs of an infinity differ in RFFT2D itself: litert's FFT
  makes NaN of inf·0 where numpy keeps inf — not these kernels' business);
* the complex tensor as the model's input, so its bits are ours to choose: every pairing of
  ±0, ±1, 1e±30, FLT_MAX, the smallest normal and subnormal, ±inf, NaNs of both signs and a
  signalling NaN, plus values with random exponents over the whole range.

Every output element must be bitwise equal to litert's, also the imaginary parts of RFFT2D's
self-conjugate bins ((0 | H/2, 0 | W/2)), which TFLite writes as −0.0.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from helpers import litert_runner
from helpers.quantized_cases import assert_same, litert_outputs, run_ours
from workbench.errors import UnsupportedOpError, WorkbenchError
from workbench.interpreter import Interpreter
from workbench.interpreter.kernels.complex_abs import reference as abs_reference
from workbench.schema import BuiltinOperator as B
from workbench.schema import ModelBuilder
from workbench.versioning import update_versions

# RFFT2D (not ours) warns when the deliberate infinities and NaNs go through numpy's FFT
pytestmark = [pytest.mark.filterwarnings("ignore:invalid value encountered in:RuntimeWarning:numpy.fft"),
              pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning:.*rfft2d")]

F32, F64, C64, C128 = np.float32, np.float64, np.complex64, np.complex128
OPS = (B.COMPLEX_ABS, B.REAL, B.IMAG)
PART = {C64: F32, C128: F64}


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


# ------------------------------------------------------------------------------------------------
# models


def chain_model(shape, fft_length):
    """float32 x → RFFT2D → c; outputs COMPLEX_ABS(c), REAL(c), IMAG(c)."""
    b = ModelBuilder()
    x = b.input("x", shape, F32)
    n = b.constant("fft_length", np.array(fft_length, np.int32))
    out_shape = tuple(shape[:-2]) + (fft_length[0], fft_length[1] // 2 + 1)
    c = b.tensor("spectrum", out_shape, C64)
    b.op(B.RFFT2D, [x, n], [c])
    outs = []
    for op in OPS:
        y = b.tensor(op.name.lower(), out_shape, F32)
        b.op(op, [c], [y])
        outs.append(y)
    b.output(*outs)
    return b


def direct_model(shape, dtype):
    """complex z (a model input) → COMPLEX_ABS, REAL, IMAG."""
    b = ModelBuilder()
    z = b.input("z", shape, dtype)
    outs = []
    for op in OPS:
        y = b.tensor(op.name.lower(), shape, PART[dtype])
        b.op(op, [z], [y])
        outs.append(y)
    b.output(*outs)
    return b


# ------------------------------------------------------------------------------------------------
# inputs


F32_MAX = np.finfo(F32).max
F32_TINY = np.finfo(F32).tiny                     # smallest normal
F32_SUB = np.float32(1e-45)                       # smallest subnormal
SNAN32 = np.array([0x7FA00001], np.uint32).view(F32)[0]      # a signalling NaN with a payload
NEG_NAN32 = np.array([0xFFC00000], np.uint32).view(F32)[0]

SPECIALS32 = np.array([0.0, -0.0, 1.0, -1.0, 2.5, 3.0, 4.0, 1e30, -1e30, 1e-30, -1e-30, 3e38, F32_MAX, -F32_MAX,
                       F32_TINY, F32_SUB, -F32_SUB, 1e-40, 1e20, 1e-20, np.inf, -np.inf, np.nan, NEG_NAN32, SNAN32],
                      F32)


def spread(rng, n, lo, hi, dtype):
    """n values with random signs, mantissas and decimal exponents in [lo, hi] (inf beyond the type)."""
    with np.errstate(over="ignore"):
        return (rng.standard_normal(n) * 10.0 ** rng.integers(lo, hi + 1, n)).astype(dtype)


def grid(specials, rng, n_random, lo, hi, dtype):
    re, im = (a.ravel() for a in np.meshgrid(specials, specials))
    re = np.concatenate([re, spread(rng, n_random, lo, hi, re.dtype), rng.uniform(-2, 2, n_random).astype(re.dtype)])
    im = np.concatenate([im, spread(rng, n_random, lo, hi, re.dtype), rng.uniform(-2, 2, n_random).astype(re.dtype)])
    z = np.empty(re.size, dtype)
    z.real, z.imag = re, im                       # bit copies (NaN payloads kept)
    return z


def chain_input(kind, rng, shape):
    u = rng.uniform(-1, 1, shape)
    if kind == "ordinary":
        return u.astype(F32)
    if kind == "huge":
        return (u * 1e30).astype(F32)
    if kind == "tiny":
        return (u * 1e-30).astype(F32)
    if kind == "mixed":
        return (u * np.where(rng.random(shape) < 0.5, 1e30, 1e-30)).astype(F32)
    if kind == "subnormal":
        return (u * 1e-39).astype(F32)
    if kind == "extremes":                        # FFT sums of FLT_MAX overflow to ±inf
        return rng.choice(np.array([3e38, -3e38, F32_MAX, 1e38, -2e38], F32), size=shape)
    if kind == "inf_nan":         # one NaN sign: which NaN a sum of two keeps is RFFT2D's business
        return rng.choice(np.array([1e30, -1e30, 1e-30, 3e38, -3e38, 0.0, -0.0, 2.5, 1e-45, np.inf, -np.inf,
                                    np.nan], F32), size=shape)
    raise ValueError(kind)


CASES = {}


def chain_case(name, kind, shape, fft_length):
    def build(case):
        rng = rng_for(case)
        return chain_model(shape, fft_length), {"x": chain_input(kind, rng, shape)}
    CASES[name] = build


chain_case("rfft_ordinary", "ordinary", (3, 8, 16), (8, 16))
chain_case("rfft_huge", "huge", (3, 8, 16), (8, 16))
chain_case("rfft_tiny", "tiny", (3, 8, 16), (8, 16))
chain_case("rfft_mixed", "mixed", (2, 6, 20), (8, 16))          # cropped and zero-padded
chain_case("rfft_subnormal", "subnormal", (3, 4, 8), (4, 8))
chain_case("rfft_extremes", "extremes", (2, 4, 8), (4, 8))
chain_case("rfft_inf_nan_1x2", "inf_nan", (64, 1, 2), (1, 2))
chain_case("rfft_inf_nan_2x2", "inf_nan", (64, 2, 2), (2, 2))
chain_case("rfft_wide", "ordinary", (1, 4, 2048), (1, 2048))   # the keyword model's shape of FFT


def direct_case(name, dtype, lo, hi, n_random=4000):
    def build(case):
        rng = rng_for(case)
        with np.errstate(invalid="ignore"):      # the signalling NaN becomes a quiet one in float64
            specials = SPECIALS32 if dtype == C64 else np.concatenate(
                [SPECIALS32.astype(F64), np.array([1e300, -1e300, 1e-300, 5e-324, np.finfo(F64).max], F64)])
        z = grid(specials, rng, n_random, lo, hi, dtype)
        return direct_model(z.shape, dtype), {"z": z}
    CASES[name] = build


direct_case("direct_complex64", C64, -46, 39)
direct_case("direct_complex128", C128, -325, 309)


def build_case(name):
    builder, feed = CASES[name](name)
    return update_versions(builder.build()), feed


@pytest.fixture(scope="session")
def litert_results(tmp_path_factory):
    return litert_runner.run_built(tmp_path_factory.mktemp("litert_complex"), CASES, build_case, workers=2)


# ------------------------------------------------------------------------------------------------
# bit-exact against litert


def assert_bit_exact(name, ours, theirs):
    """Every element of |z|, REAL and IMAG bitwise equal to litert's, the −0.0 imaginary parts that
    TFLite's RFFT2D writes at the self-conjugate bins included."""
    assert_same(list(ours), list(theirs), name)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_kernels_bit_exact_with_litert(case, litert_results):
    model, feed = build_case(case)
    assert_bit_exact(case, run_ours(model, feed), litert_outputs(litert_results[case]))


@pytest.mark.parametrize("case", sorted(CASES))
def test_references_bit_exact_with_litert(case, litert_results):
    model, feed = build_case(case)
    assert_bit_exact(case, run_ours(model, feed, reference=True), litert_outputs(litert_results[case]))


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_equals_reference(case):
    model, feed = build_case(case)
    assert_same(run_ours(model, feed), run_ours(model, feed, reference=True), case)


def test_imag_is_a_bit_copy_of_our_spectrum():
    """In the RFFT2D chain IMAG and REAL copy exactly what our RFFT2D wrote (also its +0.0)."""
    model, feed = build_case("rfft_inf_nan_2x2")
    it = Interpreter(model=model, keep_intermediates=True)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], feed["x"])
    it.invoke()
    spectrum = next(it.get_tensor(t["index"]) for t in it.get_tensor_details() if t["name"] == "spectrum")
    _, real, imag = (it.get_tensor(d["index"]) for d in it.get_output_details())
    assert np.array_equal(real.view(np.uint32), np.ascontiguousarray(spectrum.real).view(np.uint32))
    assert np.array_equal(imag.view(np.uint32), np.ascontiguousarray(spectrum.imag).view(np.uint32))


# ------------------------------------------------------------------------------------------------
# the arithmetic by hand


def test_abs_is_hypot_not_numpy():
    """hypotf neither overflows nor underflows in the middle, lets inf beat NaN, and is not numpy's
    float32 |z| (which is one ulp off at 3 + 2.5j)."""
    z = np.array([1e30 + 1e30j, 1e-30 + 1e-30j, 3e38 + 3e38j, complex(np.inf, np.nan), complex(np.nan, -np.inf),
                  complex(np.nan, 1.0), 3 + 2.5j, -0.0 - 0.0j], C64)
    got = abs_reference(z)
    assert got.dtype == F32
    root2 = np.sqrt(2.0)
    assert got[0] == np.float32(root2 * np.float64(np.float32(1e30)))
    assert got[1] == np.float32(root2 * np.float64(np.float32(1e-30)))
    assert got[2] == np.inf and got[3] == np.inf and got[4] == np.inf and np.isnan(got[5])
    assert got[6] == np.float32(3.905125) and np.abs(z[6]) != got[6]
    assert got[7] == 0 and not np.signbit(got[7])


def test_opdata_says_what_computes_each_element():
    model, feed = build_case("direct_complex64")
    it = Interpreter(model=model)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], feed["z"])
    data = {e.op: e.data for e in it.steps()}
    assert data["COMPLEX_ABS"].function.startswith("hypotf") and data["COMPLEX_ABS"].output_dtype == "float32"
    assert "real" in data["REAL"].function and "imaginary" in data["IMAG"].function
    assert data["IMAG"].input_dtype == "complex64" and data["IMAG"].shape == feed["z"].shape


# ------------------------------------------------------------------------------------------------
# what is refused, at allocate


def one(op, in_dtype, out_dtype, version=1, n_outputs=1):
    b = ModelBuilder()
    z = b.input("z", (3,), in_dtype)
    ys = [b.tensor(f"y{k}", (3,), out_dtype) for k in range(n_outputs)]
    b.op(op, [z], ys, version=version)
    b.output(*ys)
    it = Interpreter(model=b.build())
    it.allocate_tensors()
    return it


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("in_dtype, out_dtype, match", [
    (C64, F64, "must be float32"),
    (C128, F32, "must be float64"),
    (F32, F32, "handles complex64/complex128"),
])
def test_wrong_types_are_refused(op, in_dtype, out_dtype, match):
    with pytest.raises(UnsupportedOpError, match=match) as e:
        one(op, in_dtype, out_dtype)
    assert op.name in str(e.value) and "node 0" in str(e.value)


@pytest.mark.parametrize("op", OPS)
def test_unregistered_version_is_refused(op):
    with pytest.raises(WorkbenchError, match=op.name):
        one(op, C64, F32, version=2)


def test_two_outputs_are_refused():
    with pytest.raises(UnsupportedOpError, match="1 input and 1 output"):
        one(B.REAL, C64, F32, n_outputs=2)


def test_versions_are_one_for_every_type():
    for dtype in (C64, C128):
        model = update_versions(direct_model((2,), dtype).build())
        assert {model.operator_codes[op.opcode_index].version for op in model.subgraphs[0].operators} == {1}
