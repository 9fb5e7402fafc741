"""Eigen's float32 approximations as litert's x86 build runs them (no FMA), in numpy, bit for bit.

The optimized float LOGISTIC, TANH, GELU and SOFTMAX kernels are Eigen expressions over the whole
tensor.  Eigen works on packets of 4 floats; a tensor buffer is 16-byte aligned, so the first
4·⌊n/4⌋ values take the packet code and the last n mod 4 values Eigen's one-value code
(:func:`split_packets`).  Only two functions differ between the two: logistic (packet: its own
exp(x/2)² polynomial; one value: expf, see quant's "recurrent" section) and erfc (packet: Eigen's
polynomial exp; one value: expf).  TANH is Eigen's rational [9/8] approximation on both paths.
Every product and sum is rounded to float32 separately (no fused multiply-add).  A NaN input comes
out as the same NaN, quieted.  (Moved here from ``_unary.py``, which still exports these names.)
"""

from __future__ import annotations

import numpy as np

from .. import quant
from ._libm import expf

F32_LANES = 4                         # floats per SSE packet


def packet_end(n: int) -> int:
    """Elements [0, packet_end(n)) take Eigen's 4-float packet code, the rest its one-value code."""
    return n - n % F32_LANES


_f = np.float32


def _mul_add(a, b, c):
    """Eigen's ``pmadd`` without FMA: a·b rounded to float32, then + c rounded."""
    return ((a * b).astype(np.float32) + c).astype(np.float32)


def _polevl(x, coefficients):
    """Horner's rule with ``_mul_add``, highest coefficient first (Eigen's ``ppolevl``)."""
    p = np.full(np.shape(x), _f(coefficients[0]), np.float32)
    for c in coefficients[1:]:
        p = _mul_add(p, x, _f(c))
    return p


def _veltkamp(x):
    """(hi, lo) with hi + lo = x and hi holding 12 significant bits (Veltkamp's split, factor 2^12 + 1)."""
    g = (_f(4097) * x).astype(np.float32)
    hi = ((x - g).astype(np.float32) + g).astype(np.float32)
    return hi, (x - hi).astype(np.float32)


def twoprod_low_f32(x, y, xy):
    """The rounding error of the float32 product xy = fl(x·y), without FMA (Eigen's ``twoprod_low``)."""
    xh, xl = _veltkamp(x)
    yh, yl = _veltkamp(y)
    t = ((xh * yh).astype(np.float32) - xy).astype(np.float32)
    t = ((xh * yl).astype(np.float32) + t).astype(np.float32)
    t = ((xl * yh).astype(np.float32) + t).astype(np.float32)
    return ((xl * yl).astype(np.float32) + t).astype(np.float32)


_EXP_P = (1.37449637986719608306884765625e-3, 8.36894474923610687255859375e-3, 4.166965186595916748046875e-2,
          0.16666518151760101318359375, 0.49999988079071044921875)      # x^6 … x^2 coefficients
_LOG2E = 1.44269504088896341
_LN2_HI, _LN2_LO = -0.693359375, 2.12194440e-4


@np.errstate(all="ignore")
def eigen_exp_packet_f32(x) -> np.ndarray:
    """Eigen's float ``pexp`` (packet code): m = ⌊x·log2(e) + ½⌋, r = x − m·ln 2 in two steps,
    exp(r) by a degree-6 polynomial, times 2^m; 0 below −104, x clamped to 88.723 above.
    (Eigen's ``pldexp`` multiplies by 2^⌊m/4⌋ three times and then by the rest: exact until the
    last product, so it rounds once, as ``np.ldexp`` does.)"""
    x = np.asarray(x, np.float32)
    xc = np.minimum(x, _f(88.723))
    m = np.floor(_mul_add(xc, _f(_LOG2E), _f(0.5)))
    r = _mul_add(m, _f(_LN2_HI), xc)
    r = _mul_add(m, _f(_LN2_LO), r)
    r2 = (r * r).astype(np.float32)
    p6, p5, p4, p3, p2 = (_f(c) for c in _EXP_P)
    even = _mul_add(r2, _mul_add(r2, p6, p4), p2)
    odd = _mul_add(r2, p5, p3)
    y = _mul_add(r2, _mul_add(r, odd, even), (r + _f(1)).astype(np.float32))
    e = np.ldexp(y, np.nan_to_num(m, nan=0.0, posinf=255, neginf=-255).astype(np.int64)).astype(np.float32)
    e = np.where(np.isnan(x), x, np.maximum(e, x))
    return np.where(x < _f(-104), _f(0), e).astype(np.float32)


_ERFC_SMALL = (5.61802298761904239654541015625e-04, -4.91381669417023658752441406250e-03,
               2.67075151205062866210937500000e-02, -1.12800106406211853027343750000e-01,
               3.76122951507568359375000000000e-01, -1.12837910652160644531250000000e+00)
_ERFC_NUM = (1.0208116471767425537109375e-01, 4.2920666933059692382812500e-01, 3.2379078865051269531250000e-01,
             5.3971976041793823242187500e-02)
_ERFC_DEN = (1.7251677811145782470703125e-02, 3.9137163758277893066406250e-01, 1.0, 6.2173241376876831054687500e-01,
             9.5662862062454223632812500e-02)


@np.errstate(all="ignore")
def eigen_erfc_f32(x, packet: bool = True) -> np.ndarray:
    """Eigen's float erfc (``generic_fast_erfc<float>``): x clamped to ±11; for x² ≤ 1
    1 + x·S(x²); above, exp(−x²)·(1 − lo(x²))·P(1/x²)/(x·Q(1/x²)) (+2 for x < 0), where lo(x²)
    is the rounding error of x² and exp is Eigen's polynomial (``packet``) or the C library's
    expf (the one-value code)."""
    xin = np.asarray(x, np.float32)
    xc = np.where(np.isnan(xin), xin, np.minimum(np.maximum(xin, _f(-11)), _f(11))).astype(np.float32)
    x2 = (xc * xc).astype(np.float32)
    small = _mul_add(xc, _polevl(x2, _ERFC_SMALL), _f(1))
    lo = twoprod_low_f32(xc, xc, x2)
    neg = (-x2).astype(np.float32)
    e = eigen_exp_packet_f32(neg) if packet else expf(neg)
    z = (e - (e * lo).astype(np.float32)).astype(np.float32)
    q2 = (_f(1) / x2).astype(np.float32)
    r = (_polevl(q2, _ERFC_NUM) / (xc * _polevl(q2, _ERFC_DEN)).astype(np.float32)).astype(np.float32)
    large = _mul_add(z, r, np.where(xc < 0, _f(2), _f(0)).astype(np.float32))
    return np.where(_f(1) < x2, large, small).astype(np.float32)


def eigen_logistic_f32(x) -> np.ndarray:
    """Eigen's logistic on a whole tensor: packets, then the last n mod 4 values one by one."""
    x = np.asarray(x, np.float32)
    with np.errstate(all="ignore"):
        return quant.eigen_apply_f32("logistic", x.reshape(-1), 0).reshape(x.shape)


def eigen_tanh_f32(x) -> np.ndarray:
    """Eigen's float tanh (the same arithmetic on packets and on single values)."""
    with np.errstate(all="ignore"):
        return quant.eigen_tanh_f32(x)


def split_packets(x: np.ndarray, packet_fn, scalar_fn) -> np.ndarray:
    """``packet_fn`` on the first 4·⌊n/4⌋ values of the flat ``x``, ``scalar_fn`` on the rest."""
    flat = np.asarray(x, np.float32).reshape(-1)
    k = packet_end(flat.size)
    return np.concatenate([packet_fn(flat[:k]), scalar_fn(flat[k:])]).astype(np.float32).reshape(np.shape(x))

