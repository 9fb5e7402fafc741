"""One-op cases for the element-wise unary kernels (EXP, LOG, ELU, SIN, COS, SQRT, RSQRT, ABS, NEG, the
RELU family) and the complex ones (COMPLEX_ABS, REAL, IMAG), in every type their kernels take, for
tests/interpreter/kernels/test_<op>.py.  Each table maps a case name to ``build(name) ->
(ModelBuilder, {input name: array})`` (what :class:`op_layers.OpLayers` runs).

Float inputs sweep float32 widely: ±0, ±inf, NaNs with payloads, subnormals, random bit patterns
(every exponent), ordinary ranges, and runs of neighbouring floats around the thresholds of the C
library's code paths (88.72, −103.97, ±0.3466 = ln 2 / 2, ±1.0397, ±π/4, ±120 ...); an odd size, so
the values also sit in the last n mod 4 positions.  Integer inputs are every value of the type."""

from __future__ import annotations

import zlib

import numpy as np

from workbench.schema import ModelBuilder

F32, F16, U8, I8, I16, I32, I64 = np.float32, np.float16, np.uint8, np.int8, np.int16, np.int32, np.int64
C64, C128 = np.complex64, np.complex128
THRESHOLDS = (88.72283, 88.7216796875, -87.33654, -103.97208, -103.27893, 0.34657359, -0.34657359, 1.03972077,
              -1.03972077, 18.714973, -18.714973, 0.78539819, -0.78539819, 120.0, -120.0, 2.0 ** -12, 2.0 ** -25,
              1.0, -1.0, 2.0, 0.5, 3.0, 6.0, -6.0, 22.0, 1.4142135, 3e-39, 1.1754944e-38, 0.0)
NAN_PAYLOADS = np.array([0x7F800001, 0xFF800001, 0x7FC12345, 0xFFC00001, 0x7FBFFFFF], np.uint32).view(np.float32)


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def q(qp):
    return None if qp is None else {"scale": qp[0], "zero_point": qp[1]}


def neighbours(t: float, k: int = 12) -> np.ndarray:
    """t and its k float32 neighbours on either side."""
    v = np.float32(t)
    bits = v.view(np.uint32).astype(np.int64) + np.arange(-k, k + 1)
    return np.clip(bits, 0, 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def float_sweep(rng, n: int = 6007, lo: float = -130.0, hi: float = 130.0) -> np.ndarray:
    """Specials, NaN payloads, threshold neighbourhoods (both signs), random bit patterns and uniform
    values in [lo, hi) and [−2, 2): ``n`` values at least (an odd size)."""
    thresholds = np.concatenate([neighbours(t) for t in THRESHOLDS] + [-neighbours(t) for t in THRESHOLDS])
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 3.4028235e38, -3.4028235e38,
                         1e30, -1e30, 1e5, -1e5, 4e4, 823.5], np.float32)
    bits = rng.integers(0, 2 ** 32, n // 3, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([specials, NAN_PAYLOADS, thresholds, bits, rng.uniform(lo, hi, n // 3).astype(np.float32),
                        rng.uniform(-2, 2, n // 3).astype(np.float32)])
    return x[: len(x) - (len(x) % 2 == 0)]


def every_value(dt, rng, tail: int = 37, lo=None) -> np.ndarray:
    """Every value of an integer type (from ``lo``), then ``tail`` random ones (an odd total size)."""
    info = np.iinfo(dt)
    start = info.min if lo is None else lo
    v = np.arange(start, info.max + 1)
    return np.concatenate([v, rng.integers(start, info.max + 1, tail)]).astype(dt).reshape(1, -1)


def _one_op(op, x, out_dt, qi=None, qo=None, options=None):
    b = ModelBuilder()
    t = b.input("x", x.shape, x.dtype, quantization=q(qi))
    y = b.tensor("y", x.shape, out_dt, quantization=q(qo))
    b.op(op, [t], [y], options)
    b.output(y)
    return b, {"x": x}


def float_case(op, dt=F32, lo: float = -130.0, hi: float = 130.0, n: int = 6007, shape=None):
    """A float32 sweep (:func:`float_sweep`), or every float16 value for ``dt`` float16."""
    def build(name):
        if np.dtype(dt) == np.float16:
            x = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
        else:
            x = float_sweep(rng_for(name), n, lo, hi)
        return _one_op(op, x.reshape(shape or x.shape), dt)
    return build


def int_case(op, dt, qi=None, qo=None, lo=None, out_dt=None):
    """Every value of ``dt`` (from ``lo``) with the quantization (scale, zero point) ``qi`` → ``qo``."""
    def build(name):
        return _one_op(op, every_value(dt, rng_for(name), lo=lo), out_dt or dt, qi, qo)
    return build


def values_case(op, dt, values, qi=None, qo=None):
    """Exactly these input values."""
    def build(name):
        return _one_op(op, np.array(values, dt), dt, qi, qo)
    return build


COMPLEX_SPECIALS32 = np.array([0.0, -0.0, 1.0, -1.0, 1e30, -1e30, 1e-30, 3e38, 3.4028235e38, 1.1754944e-38, 1e-45,
                               np.inf, -np.inf, np.nan, -np.nan], np.float32)
SIGNALLING32 = np.array([0x7FA00000], np.uint32).view(np.float32)


def complex_values(dt, rng, n: int = 2001) -> np.ndarray:
    """Every pairing of the specials (a signalling NaN among them), then random values with exponents
    over the whole range of the part type."""
    part = np.float32 if np.dtype(dt) == np.complex64 else np.float64
    sp = np.concatenate([COMPLEX_SPECIALS32, SIGNALLING32]).astype(part) if part == np.float32 else \
        np.concatenate([COMPLEX_SPECIALS32.astype(np.float64), [1e300, -1e-310, 2.0 ** 520, 2.0 ** -470]])
    top = 38 if part == np.float32 else 307
    with np.errstate(over="ignore"):
        rand = (rng.uniform(-2, 2, (n, 2)) * 10.0 ** rng.uniform(-top, top, (n, 2))).astype(part)
    pairs = np.concatenate([np.stack([np.repeat(sp, sp.size), np.tile(sp, sp.size)], 1), rand])
    z = np.empty(len(pairs), dt)
    z.view(part).reshape(-1, 2)[...] = pairs         # bit for bit: the signalling NaN stays signalling
    return z


def complex_case(op, dt):
    """A complex64 / complex128 input of :func:`complex_values` → its float32 / float64 part."""
    part = np.float32 if np.dtype(dt) == np.complex64 else np.float64

    def build(name):
        return _one_op(op, complex_values(dt, rng_for(name)), part)
    return build


def differing_bits(layers, name: str) -> int:
    """How many output elements the two variants compute differently, floats compared bit for bit
    (``OpLayers.differing_variants`` compares values, and NaN never equals NaN)."""
    a, b = layers.run(name), layers.run(name, variant="reference")
    view = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
    return sum(int((np.ascontiguousarray(x).view(view[x.dtype.itemsize]) !=
                    np.ascontiguousarray(y).view(view[y.dtype.itemsize])).sum()) if x.dtype.kind in "fc" else
               int((x != y).sum()) for x, y in zip(a, b))


def builtin_ref_outcome(layers, name: str) -> tuple[str, object]:
    """LiteRT's BUILTIN_REF resolver on case ``name``: ("ok", outputs), ("error", message) or ("crash", ...)."""
    from helpers import litert_batch
    from workbench import dump

    model, inputs = layers.build(name)
    return litert_batch.run_many([(dump(model), inputs)], resolver="BUILTIN_REF")[0]
