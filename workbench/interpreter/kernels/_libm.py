"""The C library's float functions as litert's x86-64 Linux build runs them, in numpy, bit for bit.

TFLite's float EXP, LOG, SIN, COS and ELU call ``std::exp`` / ``std::log`` / ``std::sin`` /
``std::cos`` / ``std::expm1`` on each float, in its reference and in its optimized kernels alike;
on Linux that is glibc's ``expf``, ``logf``, ``sinf``, ``cosf``, ``expm1f`` (TANH's reference
kernel: ``tanhf``; COMPLEX_ABS: ``hypotf`` / ``hypot``, in ``_complex.py``).  numpy's own float32
functions are different code and differ in the last bit for many inputs, so this module writes
glibc 2.36's algorithms out in numpy: the same operations on the same types in the same order give
the same bits.

* ``expf``, ``logf``, ``sinf``, ``cosf`` (the "optimized-routines" code) compute in double.  On a
  CPU with FMA, glibc runs a copy of them compiled for FMA, where the compiler fused every a·b + c
  into one rounding; :func:`fma` does that rounding in numpy (an exact product and sum, rounded once).
* ``expm1f`` and ``tanhf`` (fdlibm) compute in float32.

Checked against the C library (glibc 2.36, x86-64 with FMA) on every 61st float32 bit pattern, some
70 million values per function (expf, logf, expm1f, sinf, cosf), and on random values (tanhf);
``tests/interpreter/kernels/test_exp.py`` compares all six again.  On a CPU without FMA glibc runs
the unfused copy, whose last bit differs on a handful of inputs in 10^8.  NaN inputs come out
quieted with their payload, as the hardware does.
"""

from __future__ import annotations

import numpy as np

F32, F64, U32, U64 = np.float32, np.float64, np.uint32, np.uint64
_h = float.fromhex


def _bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, F32).view(U32)


def _float(bits: np.ndarray) -> np.ndarray:
    return np.asarray(bits, U32).view(F32)


# ----------------------------------------------------------------------------------------------
# fused multiply-add in double


def _split(a):
    """Veltkamp's split: a = hi + lo, each with at most 26 significant bits."""
    c = F64(134217729.0) * a
    hi = c - (c - a)
    return hi, a - hi


def _two_sum(a, b):
    """s + e = a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma(a, b, c):
    """a·b + c rounded once (what an FMA instruction computes), for float64 arrays: the product exact
    as p + e, c + p exact as t + u, then u + e rounded to odd and added to t (Boldo & Melquiond)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    t, u = _two_sum(c, p)
    w, err = _two_sum(u, e)
    wi = np.asarray(w, F64).view(np.int64)
    inexact_even = (err != 0) & ((wi & 1) == 0)
    wi = wi + inexact_even * np.where(np.signbit(err) == np.signbit(w), 1, -1)
    return t + wi.view(F64)


# ----------------------------------------------------------------------------------------------
# expf: 2^(k/32) from a table times a cubic in the remainder


_EXP2_TABLE = np.array([
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540], U64)       # 2^(i/32) with i·2^47 subtracted from the bits
_EXP_POLY = tuple(F64(_h(c)) for c in ("0x1.c6af84b912394p-20", "0x1.ebfce50fac4f3p-13", "0x1.62e42ff0c52d6p-6"))
_INV_LN2_32, _SHIFT = F64(_h("0x1.71547652b82fep+0") * 32), F64(_h("0x1.8p+52"))


@np.errstate(all="ignore")
def expf(x) -> np.ndarray:
    """glibc's expf: k = round(x·32/ln 2), exp(x) = 2^(k/32) · (1 + r·(c2 + r·(c1 + r·c0)))."""
    x = np.asarray(x, F32)
    xd = x.astype(F64)
    kd = fma(_INV_LN2_32, xd, _SHIFT)            # k in the low bits of kd
    ki = kd.view(U64)
    r = fma(_INV_LN2_32, xd, -(kd - _SHIFT))
    s = (_EXP2_TABLE[ki % U64(32)] + (ki << U64(47))).view(F64)
    c0, c1, c2 = _EXP_POLY
    y = fma(fma(c0, r, c1), r * r, fma(c2, r, F64(1)))
    out = (y * s).astype(F32)
    out = np.where(x > F32(_h("0x1.62e42ep6")), F32(np.inf), out)       # overflow
    out = np.where(x < F32(_h("-0x1.9fe368p6")), F32(0), out)           # underflow, −inf
    return np.where(np.isnan(x), x + x, out).astype(F32)


# ----------------------------------------------------------------------------------------------
# logf: log(c) from a table plus a cubic in z/c − 1


_LOG_TABLE = [(_h(a), _h(b)) for a, b in (
    ("0x1.661ec79f8f3bep+0", "-0x1.57bf7808caadep-2"), ("0x1.571ed4aaf883dp+0", "-0x1.2bef0a7c06ddbp-2"),
    ("0x1.49539f0f010bp+0", "-0x1.01eae7f513a67p-2"), ("0x1.3c995b0b80385p+0", "-0x1.b31d8a68224e9p-3"),
    ("0x1.30d190c8864a5p+0", "-0x1.6574f0ac07758p-3"), ("0x1.25e227b0b8eap+0", "-0x1.1aa2bc79c81p-3"),
    ("0x1.1bb4a4a1a343fp+0", "-0x1.a4e76ce8c0e5ep-4"), ("0x1.12358f08ae5bap+0", "-0x1.1973c5a611cccp-4"),
    ("0x1.0953f419900a7p+0", "-0x1.252f438e10c1ep-5"), ("0x1p+0", "0x0p+0"),
    ("0x1.e608cfd9a47acp-1", "0x1.aa5aa5df25984p-5"), ("0x1.ca4b31f026aap-1", "0x1.c5e53aa362eb4p-4"),
    ("0x1.b2036576afce6p-1", "0x1.526e57720db08p-3"), ("0x1.9c2d163a1aa2dp-1", "0x1.bc2860d22477p-3"),
    ("0x1.886e6037841edp-1", "0x1.1058bc8a07ee1p-2"), ("0x1.767dcf5534862p-1", "0x1.4043057b6ee09p-2"))]
_INV_C = np.array([a for a, _ in _LOG_TABLE])
_LOG_C = np.array([b for _, b in _LOG_TABLE])
_LOG_POLY = tuple(F64(_h(c)) for c in ("-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2", "-0x1.ffffef20a4123p-2"))
_LN2 = F64(_h("0x1.62e42fefa39efp-1"))


@np.errstate(all="ignore")
def logf(x) -> np.ndarray:
    """glibc's logf: x = 2^k·z with z near one of 16 centres c, log x = log c + k·ln 2 + log1p(z/c − 1)."""
    x = np.asarray(x, F32)
    u = _bits(x)
    ix = u.astype(np.int64)
    subnormal = (ix > 0) & (ix < 0x00800000)
    ix = np.where(subnormal, _bits(x * F32(2.0 ** 23)).astype(np.int64) - (23 << 23), ix)
    tmp = ix - 0x3f330000
    i = (tmp >> 19) % 16
    z = _float((ix - (tmp & (0x1ff << 23))).astype(U32)).astype(F64)
    r = fma(z, _INV_C[i], F64(-1))
    y0 = fma((tmp >> 23).astype(F64), _LN2, _LOG_C[i])
    r2 = r * r
    a0, a1, a2 = _LOG_POLY
    y = fma(fma(a0, r2, fma(a1, r, a2)), r2, y0 + r)
    out = y.astype(F32)
    out = np.where(u == 0x3f800000, F32(0), out)
    out = np.where((u & 0x7fffffff) == 0, F32(-np.inf), out)
    out = np.where(u == 0x7f800000, x, out)
    invalid = ((u > 0x80000000) | ((u & 0x7fffffff) > 0x7f800000))
    return np.where(invalid, (x - x) / (x - x), out).astype(F32)       # x86's default NaN, or x's


# ----------------------------------------------------------------------------------------------
# sinf, cosf: reduce to [−π/4, π/4] (one multiply below 120, 4/π to 192 bits above), then a polynomial


_COS_POLY = tuple(F64(_h(c)) for c in ("0x1p0", "-0x1.ffffffd0c621cp-2", "0x1.55553e1068f19p-5",
                                       "-0x1.6c087e89a359dp-10", "0x1.99343027bf8c3p-16"))
_SIN_POLY = tuple(F64(_h(c)) for c in ("-0x1.555545995a603p-3", "0x1.1107605230bc4p-7", "-0x1.994eb3774cf24p-13"))
_INV_PIO4 = np.array([
    0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529, 0x441529fc, 0x1529fc27,
    0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0, 0x34ddc0db, 0xddc0db62, 0xc0db6295,
    0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041], U64)       # 4/π, 8 new bits per entry
_SIGN = np.array([1.0, -1.0, -1.0, 1.0])
_TOP_PIO4, _TOP_120, _TOP_TINY = 0x3f4, 0x42f, 0x398        # (bits >> 20) & 0x7ff of π/4, 120, 2^-12


def _reduce_large(u):
    """(r, n): x = n·π/2 + r for |x| >= 120, from the 96 bits of 4/π that matter (exact integer product)."""
    xi = u.astype(U64)
    at = (xi >> U64(26)) & U64(15)
    m = ((((xi & U64(0xffffff)) | U64(0x800000)) << ((xi >> U64(23)) & U64(7))) & U64(0xffffffff))
    high = (m * _INV_PIO4[at]) & U64(0xffffffff)
    res = ((m * _INV_PIO4[at + U64(8)]) >> U64(32)) | (high << U64(32))
    res = res + m * _INV_PIO4[at + U64(4)]
    n = (res + U64(1 << 61)) >> U64(62)
    res = res - (n << U64(62))
    return res.view(np.int64).astype(F64) * F64(_h("0x1.921FB54442D18p-62")), n.astype(np.int64)


def _sin_cos(x, x2, odd, negate):
    """sin (``odd`` False) or cos of the reduced x; ``negate``: the negated cosine polynomial."""
    s1, s2, s3 = _SIN_POLY
    sine = fma(x * x2 * x2, fma(x2, s3, s2), fma(x * x2, s1, x))
    c0, c1, c2, c3, c4 = (np.where(negate, -c, c) for c in _COS_POLY)
    x4 = x2 * x2
    cosine = fma(x4 * x2, fma(x2, c4, c3), fma(x4, c2, fma(x2, c1, c0)))
    return np.where(odd, cosine, sine)


@np.errstate(all="ignore")
def _sinf_cosf(y, cosine: bool) -> np.ndarray:
    y = np.asarray(y, F32)
    u = _bits(y)
    top = (u >> 20) & 0x7ff
    x = y.astype(F64)
    r = x * F64(_h("0x1.45F306DC9C883p+23"))                     # x·2/π·2^24
    n_fast = (np.where(np.abs(r) < 2.0 ** 31, r, 0).astype(np.int64) + 0x800000) >> 24
    x_fast = fma(-n_fast.astype(F64), F64(_h("0x1.921FB54442D18p0")), x)
    x_large, n_large = _reduce_large(u)
    sign = (u >> 31).astype(np.int64)
    small, fast = top < _TOP_PIO4, top < _TOP_120
    n = np.where(small, 0, np.where(fast, n_fast, n_large))
    quadrant = np.where(small, 0, np.where(fast, n_fast, n_large + sign))      # picks signs and table
    xr = np.where(small, x, np.where(fast, x_fast, x_large))
    s = np.where(small, F64(1), _SIGN[quadrant & 3])
    odd = ((n ^ 1 if cosine else n) & 1) == 1
    out = _sin_cos(xr * s, xr * xr, odd, ~small & ((quadrant & 2) != 0)).astype(F32)
    out = np.where(top < _TOP_TINY, F32(1) if cosine else y, out)
    return np.where(top >= 0x7f8, (y - y) / (y - y), out).astype(F32)


def sinf(x) -> np.ndarray:
    """glibc's sinf."""
    return _sinf_cosf(x, False)


def cosf(x) -> np.ndarray:
    """glibc's cosf."""
    return _sinf_cosf(x, True)


# ----------------------------------------------------------------------------------------------
# expm1f, tanhf: fdlibm in float32


_EXPM1_Q = tuple(F32(c) for c in (-3.3333335072e-02, 1.5873016091e-03, -7.9365076090e-05, 4.0082177293e-06,
                                  -2.0109921195e-07))
_LN2_HI, _LN2_LO, _INV_LN2 = F32(6.9313812256e-01), F32(9.0580006145e-06), F32(1.4426950216e+00)


def _scale(y, k):
    """y·2^k by adding k to the exponent field (fdlibm's SET_FLOAT_WORD)."""
    return _float(((_bits(y).astype(np.int64) + (k << 23)) & 0xffffffff).astype(U32))


@np.errstate(all="ignore")
def expm1f(x) -> np.ndarray:
    """glibc's expm1f (fdlibm): x = k·ln 2 + r, expm1(r) by a rational approximation, then 2^k."""
    f = F32
    x = np.asarray(x, F32)
    hx = _bits(x) & U32(0x7fffffff)
    neg = np.signbit(x)
    reduced, near = hx > 0x3eb17218, (hx > 0x3eb17218) & (hx < 0x3F851592)      # |x| > ln2/2, < 1.5·ln2
    k_far = (_INV_LN2 * x + np.where(neg, f(-0.5), f(0.5))).astype(F32)
    k_far = np.where(np.isfinite(k_far), k_far, 0).astype(np.int64)            # C's truncation
    k = np.where(near, np.where(neg, -1, 1), np.where(reduced, k_far, 0))
    t = k.astype(F32)
    hi = np.where(near, np.where(neg, x + _LN2_HI, x - _LN2_HI), x - t * _LN2_HI)
    lo = np.where(near, np.where(neg, -_LN2_LO, _LN2_LO), t * _LN2_LO)
    r = np.where(reduced, hi - lo, x)
    c = np.where(reduced, (hi - r) - lo, f(0))
    hfx = f(0.5) * r
    hxs = r * hfx
    q1, q2, q3, q4, q5 = _EXPM1_Q
    r1 = f(1) + hxs * (q1 + hxs * (q2 + hxs * (q3 + hxs * (q4 + hxs * q5))))
    t = f(3) - r1 * hfx
    e = hxs * ((r1 - t) / (f(6) - r * t))
    k0 = r - (r * e - hxs)
    e = (r * (e - c) - c) - hxs
    k_minus1 = f(0.5) * (r - e) - f(0.5)
    k_plus1 = np.where(r < f(-0.25), -f(2) * (e - (r + f(0.5))), f(1) + f(2) * (r - e))
    k_far = _scale(f(1) - (e - r), k) - f(1)
    k_mid = _scale(_float((0x3f800000 - (0x1000000 >> np.clip(k, 0, 31))).astype(U32)) - (e - r), k)
    k_high = _scale((r - (e + _float(((0x7f - np.clip(k, 0, 127)) << 23).astype(U32)))) + f(1), k)
    out = np.where((k <= -2) | (k > 56), k_far, np.where(k < 23, k_mid, k_high))
    out = np.where(k == 1, k_plus1, np.where(k == -1, k_minus1, np.where(k == 0, k0, out)))
    out = np.where(hx < 0x33000000, x, out)                                      # |x| < 2^-25
    out = np.where((hx >= 0x4195b844) & neg, f(-1), out)                         # x < −27·ln 2
    out = np.where((hx >= 0x42b17218) & ~neg & (x > f(8.8721679688e+01)), f(np.inf), out)
    return np.where(hx > 0x7f800000, x + x, out).astype(F32)


@np.errstate(all="ignore")
def tanhf(x) -> np.ndarray:
    """glibc's tanhf (fdlibm): 1 − 2/(expm1(2|x|) + 2) from 1 up, −t/(t + 2) with t = expm1(−2|x|) below."""
    f = F32
    x = np.asarray(x, F32)
    ix = _bits(x) & U32(0x7fffffff)
    ax = np.abs(x)
    t_big, t_small = expm1f(f(2) * ax), expm1f(-f(2) * ax)
    z = np.where(ix >= 0x3f800000, f(1) - f(2) / (t_big + f(2)), -t_small / (t_small + f(2)))
    z = np.where(ix >= 0x41b00000, f(1) - f(1e-30), z)                           # |x| >= 22
    z = np.where(np.signbit(x), -z, z)
    z = np.where(ix < 0x24000000, x * (f(1) + x), z)                             # |x| < 2^-55, ±0
    return np.where(ix >= 0x7f800000, np.where(np.signbit(x), f(1) / x - f(1), f(1) / x + f(1)), z).astype(F32)


FUNCTIONS = {"expf": expf, "expm1f": expm1f, "logf": logf, "sinf": sinf, "cosf": cosf, "tanhf": tanhf,
             "sqrtf": lambda x: np.sqrt(np.asarray(x, F32))}       # IEEE square roots round correctly
