"""The requantization recipes of :mod:`workbench.interpreter.quant`, compiled: the same integer
arithmetic as the numpy functions there (``multiply_by_quantized_multiplier``, ``requantize_rows``,
``requantize_int64_rows``, ``requantize_int32_rows``, ``symmetric/asymmetric_quantize_rows``,
``multiply_by_quantized_multiplier_int64``), as numba loops the speed layer calls row by row.
Tests check each against its numpy twin.
"""

from __future__ import annotations

import numpy as np

from ...perf.jit import njit
from ...perf.vnni import shift_parts


@njit
def mbqm_jit(x, multiplier, shift):
    """:func:`workbench.interpreter.quant.multiply_by_quantized_multiplier` for int64 scalars inside numba loops."""
    if shift > 0:
        x = x << shift
    a = x
    b = np.int64(multiplier)
    if a == -2147483648 and b == -2147483648:
        h = np.int64(2147483647)
    else:
        p = a * b
        if p >= 0:
            v = p + 1073741824
            h = v >> 31
        else:
            v = p + (1 - 1073741824)
            h = -((-v) >> 31)
    if shift < 0:
        e = -shift
        mask = (np.int64(1) << e) - 1
        rem = h & mask
        thr = mask >> 1
        if h < 0:
            thr += 1
        h = h >> e
        if rem > thr:
            h += 1
    return h


@njit
def requantize_rows_jit(acc, bias, mult, shift, out_zp, lo, hi, out, half_up):
    """out[r, c] = clamp(MBQM(acc[r, c] + bias[c], mult[c], shift[c]) + out_zp) for 2-D acc (any
    numeric dtype holding exact integers) and a 2-D int8 ``out``.  ``half_up`` selects the final
    rounding shift of ruy / NEON code (ties toward +inf) instead of gemmlowp's (ties away from zero).

    Written without branches in the inner loop so that it vectorizes: for a multiplier ≥ 0,
    SRDHM(x, m) = (x·m + 2^30) >> 31 exactly (the nudge 1 − 2^30 and C's truncating division give
    the same floor), and the rounding shift becomes adds, masks and compares.
    """
    rows, cols = acc.shape
    left, right, mask, nudge = shift_parts(shift)
    for r in range(rows):
        for c in range(cols):
            x = (np.int64(acc[r, c]) + bias[c]) << left[c]
            h = (x * mult[c] + 1073741824) >> 31
            if half_up:
                h = (h + nudge[c]) >> right[c]
            else:
                m = mask[c]
                rem = h & m
                thr = (m >> 1) + (h < 0)
                h = (h >> right[c]) + (rem > thr)
            v = h + out_zp
            v = min(max(v, lo), hi)
            out[r, c] = v


@njit
def quantize_rows_jit(x2d, asymmetric, q, sf, zp):
    """:func:`symmetric_quantize_rows` / :func:`asymmetric_quantize_rows` in one compiled loop,
    writing into ``q`` (int8 [rows, K]), ``sf`` (float32 [rows]) and ``zp`` (int32 [rows])."""
    rows, k = x2d.shape
    n_vec = (k // 8) * 8
    for r in range(rows):
        sf[r] = np.float32(1.0)
        zp[r] = 0
        if k == 0:
            continue
        mn = x2d[r, 0]
        mx = x2d[r, 0]
        for i in range(1, k):
            v = x2d[r, i]
            if v < mn:
                mn = v
            if v > mx:
                mx = v
        if asymmetric:
            rmin = mn if mn < np.float32(0.0) else np.float32(0.0)
            rmax = mx if mx > np.float32(0.0) else np.float32(0.0)
            if rmin == rmax:
                for i in range(k):
                    q[r, i] = 0
                continue
            scale = np.float64(np.float32(rmax - rmin)) / 255.0
            from_min = -128.0 - np.float64(rmin) / scale
            from_max = 127.0 - np.float64(rmax) / scale
            err_min = 128.0 + abs(np.float64(rmin) / scale)
            err_max = 127.0 + abs(np.float64(rmax) / scale)
            zd = from_min if err_min < err_max else from_max
            if zd <= -128.0:
                z = -128
            elif zd >= 127.0:
                z = 127
            else:
                a = abs(zd)
                fl = np.floor(a)
                if a - fl >= 0.5:
                    fl += 1.0
                z = int(fl) if zd >= 0 else -int(fl)
            sf[r] = np.float32(scale)
            zp[r] = z
            inv = np.float32(1.0 / np.float64(sf[r]))
            lo = -128
            hi = 127
        else:
            amn = -mn if mn < np.float32(0.0) else mn
            amx = -mx if mx < np.float32(0.0) else mx
            rng = amx if amx > amn else amn
            if rng == np.float32(0.0):
                for i in range(k):
                    q[r, i] = 0
                continue
            sf[r] = rng / np.float32(127.0)
            inv = np.float32(127.0) / rng
            z = 0
            lo = -127
            hi = 127
        for i in range(k):
            t = x2d[r, i] * inv
            if i < n_vec:
                if t < np.float32(0.0):
                    s = t + np.float32(-0.5)
                else:
                    s = t + np.float32(0.5)
                v = int(s)
            else:
                a = abs(np.float64(t))
                fl = np.floor(a + 0.5)
                v = int(fl) if t >= 0 else -int(fl)
            v += z
            if v < lo:
                v = lo
            if v > hi:
                v = hi
            q[r, i] = v


@njit
def requantize_int64_rows_jit(acc, bias, mult, shift, out_zp, lo, hi, out):
    """:func:`requantize_int64_rows` compiled: ``acc`` 2-D (int64, or floats holding exact integers
    from a BLAS product), ``bias`` int64 [C], ``out`` 2-D int16 (or int8)."""
    rows, cols = acc.shape
    reduced = np.empty(cols, np.int64)
    total = np.empty(cols, np.int64)
    nudge = np.empty(cols, np.int64)
    for c in range(cols):
        m = np.int64(mult[c])
        reduced[c] = (m + 32768) >> 16 if m < 0x7FFF0000 else np.int64(0x7FFF)
        total[c] = 15 - np.int64(shift[c])
        nudge[c] = np.int64(1) << (total[c] - 1)
    for r in range(rows):
        for c in range(cols):
            x = np.int64(acc[r, c]) + bias[c]
            v = (x * reduced[c] + nudge[c]) >> total[c]
            v = ((v + 2147483648) & 0xFFFFFFFF) - 2147483648 + out_zp
            out[r, c] = min(max(v, lo), hi)


@njit
def requantize_int32_rows_jit(acc, bias, mult, shift, out_zp, lo, hi, out, up_channels):
    """:func:`requantize_int32_rows` compiled (same arguments; ``acc`` int64 or exact floats).

    For a multiplier ≥ 0, SRDHM(x, m) = (x·m + 2^30) >> 31 (see :func:`requantize_rows_jit`); the
    left shift of a multiplier > 1 is done on int32 and wraps, as in TFLite."""
    rows, cols = acc.shape
    left = np.empty(cols, np.int64)
    right = np.empty(cols, np.int64)
    mask = np.empty(cols, np.int64)
    for c in range(cols):
        sh = np.int64(shift[c])
        left[c] = sh if sh > 0 else 0
        right[c] = -sh if sh < 0 else 0
        mask[c] = (np.int64(1) << right[c]) - 1
    for r in range(rows):
        for c in range(cols):
            x = np.int64(acc[r, c]) + bias[c]
            x = ((x + 2147483648) & 0xFFFFFFFF) - 2147483648
            x = x << left[c]
            x = ((x + 2147483648) & 0xFFFFFFFF) - 2147483648
            h = (x * np.int64(mult[c]) + 1073741824) >> 31
            m = mask[c]
            if c < up_channels:
                h = (h + (m - (m >> 1))) >> right[c]
            else:
                rem = h & m
                thr = (m >> 1) + (h < 0)
                h = (h >> right[c]) + (rem > thr)
            v = h + out_zp
            out[r, c] = min(max(v, lo), hi)


@njit
def mbqm_int64_jit(x, multiplier, shift):
    """:func:`multiply_by_quantized_multiplier_int64` inside numba loops (int64 scalars)."""
    if multiplier < 0x7FFF0000:
        reduced = (np.int64(multiplier) + 32768) >> 16
    else:
        reduced = np.int64(0x7FFF)
    total = 15 - shift
    v = (np.int64(x) * reduced + (np.int64(1) << (total - 1))) >> total
    return ((v + 2147483648) & 0xFFFFFFFF) - 2147483648
