"""Speed layer for SOFTMAX and LOG_SOFTMAX: numba loops over the rows.

* float32, litert-x86 (``Variant.float_activations == "eigen"``): ``kernels/_softmax.py``'s Eigen
  arithmetic one value at a time — the packet exp's polynomial per lane, expf through numba's
  ``math.exp`` on a float32 (the C library), the packet reductions with their two accumulators.
  Without JIT (``WORKBENCH_JIT=0``) expf / logf go through ctypes, with the same bits.  SOFTMAX runs
  the same arithmetic in the kernel library's C (``softmax_f32``, sixteen lanes of the packet exp at
  once) where the library is there: :class:`FloatSoftmaxNative`.
* float32, reference (``"libm"``): the plain loops of ``reference_ops``.
* uint8 / int8 inputs on the float table (litert-x86): the table, the float32 sum and x86's
  conversions; the fixed-point reference kernel has no fast path (its numpy is the teaching layer).
int16 and float16 SOFTMAX run the teaching layer's numpy.
"""

from __future__ import annotations

import math

import numpy as np

from ...perf import elementwise as _ew
from ...perf.jit import library_call, native, njit
from ...schema.enums import BuiltinOperator
from ..kernels._softmax import LOWEST
from ..kernels._unary import TYPE_RANGE, libm_f32
from ..kernels.log_softmax import LogSoftmaxData
from ..kernels.softmax import SoftmaxData, SoftmaxInt8Data
from ..variants import LITERT_X86, VARIANTS
from . import FastPath, FlatCall, fast_path

_F0, _F1, _HALF = np.float32(0.0), np.float32(1.0), np.float32(0.5)
_LOWEST = np.float32(LOWEST)
_EXP_HI, _EXP_LO = np.float32(88.723), np.float32(-104.0)
_LOG2E = np.float32(1.44269504088896341)
_LN2_HI, _LN2_LO = np.float32(-0.693359375), np.float32(2.12194440e-4)
_EP6, _EP5, _EP4, _EP3, _EP2 = (np.float32(c) for c in (1.37449637986719608306884765625e-3,
                                                         8.36894474923610687255859375e-3,
                                                         4.166965186595916748046875e-2,
                                                         0.16666518151760101318359375,
                                                         0.49999988079071044921875))


# expf / logf: numba's math.exp / math.log on a float32 call the C library; without JIT the Python
# twins call it through ctypes.

@njit
def _expf_numba(v):
    return math.exp(v)


@njit
def _logf_numba(v):
    return math.log(v)


def _libm_one(name: str, v):
    return libm_f32(name, np.float32(v))[()]


@native(lambda: _expf_numba.compile())
def _expf(v):
    return _libm_one("expf", v)


@native(lambda: _logf_numba.compile())
def _logf(v):
    return _libm_one("logf", v)


_POW2 = np.array([2.0 ** j for j in range(-64, 65)], np.float32)    # exact: powers of two, all normal


@njit
def _pow2(k):
    """2^k as float32: from a table for |k| <= 64 (the packet exp's exponents: a call of pow for each
    of its three factors cost more than the rest of the softmax), else from pow."""
    if -64 <= k <= 64:
        return _POW2[k + 64]
    return np.float32(2.0 ** k)


@njit
def _exp_packet(v):
    """One lane of Eigen's packet exp (see ``_unary.eigen_exp_packet_f32``)."""
    if v != v:
        return v
    if v < _EXP_LO:
        return _F0
    x = v if v < _EXP_HI else _EXP_HI
    m = np.float32(math.floor(x * _LOG2E + _HALF))
    r = m * _LN2_HI + x
    r = m * _LN2_LO + r
    r2 = r * r
    even = r2 * (r2 * _EP6 + _EP4) + _EP2
    odd = r2 * _EP5 + _EP3
    y = r2 * (r * odd + even) + (r + _F1)
    k = int(m)
    b = k >> 2                                      # pldexp: 2^b three times, then 2^(k − 3b)
    c = _pow2(b)
    e = y * c * c * c * _pow2(k - 3 * b)
    return v if e < v else e                        # pmax(e, x): +inf stays +inf


@njit
def _fold(a, b, is_max):
    if is_max:
        return b if a < b else a
    return a + b


@njit
def eigen_redux(v, head, is_max):
    """Eigen's sum / max of a contiguous float32 vector, ``head`` values before its first packet
    (``kernels/_softmax.eigen_sums``)."""
    n = v.size
    if head > n:
        head = n
    body = (n - head) // 4 * 4
    if body == 0:
        r = v[0]
        for k in range(1, n):
            r = _fold(r, v[k], is_max)
        return r
    body2 = (n - head) // 8 * 8
    a0, a1, a2, a3 = v[head], v[head + 1], v[head + 2], v[head + 3]
    if body > 4:
        b0, b1, b2, b3 = v[head + 4], v[head + 5], v[head + 6], v[head + 7]
        for i in range(head + 8, head + body2, 8):
            a0 = _fold(a0, v[i], is_max)
            a1 = _fold(a1, v[i + 1], is_max)
            a2 = _fold(a2, v[i + 2], is_max)
            a3 = _fold(a3, v[i + 3], is_max)
            b0 = _fold(b0, v[i + 4], is_max)
            b1 = _fold(b1, v[i + 5], is_max)
            b2 = _fold(b2, v[i + 6], is_max)
            b3 = _fold(b3, v[i + 7], is_max)
        a0 = _fold(a0, b0, is_max)
        a1 = _fold(a1, b1, is_max)
        a2 = _fold(a2, b2, is_max)
        a3 = _fold(a3, b3, is_max)
        if body > body2:
            i = head + body2
            a0 = _fold(a0, v[i], is_max)
            a1 = _fold(a1, v[i + 1], is_max)
            a2 = _fold(a2, v[i + 2], is_max)
            a3 = _fold(a3, v[i + 3], is_max)
    if is_max:
        t0 = a0 if a0 > a2 else a2
        t1 = a1 if a1 > a3 else a3
        r = t0 if t0 > t1 else t1
    else:
        r = (a0 + a2) + (a1 + a3)
    for k in range(head):
        r = _fold(r, v[k], is_max)
    for k in range(head + body, n):
        r = _fold(r, v[k], is_max)
    return r


@njit
def softmax_f32_numba(x2, beta, out2):
    """SOFTMAX float32 (Eigen) over the rows of x2 (2-D, contiguous) into out2 (may be x2 itself)."""
    rows, n = x2.shape
    packet_end = rows * n - rows * n % 4
    for r in range(rows):
        base = r * n
        head = (4 - base % 4) % 4
        m = eigen_redux(x2[r], head, True)
        for j in range(n):
            z = (x2[r, j] - m) * beta
            out2[r, j] = _exp_packet(z) if base + j < packet_end else _expf(z)
        inv = _F1 / eigen_redux(out2[r], head, False)
        for j in range(n):
            out2[r, j] = out2[r, j] * inv


@njit
def log_softmax_f32_numba(x2, out2):
    """LOG_SOFTMAX float32 (Eigen) over the rows of x2 (2-D, contiguous) into out2 (may be x2 itself)."""
    rows, n = x2.shape
    packet_end = n - n % 4
    e = np.empty(n, np.float32)
    for r in range(rows):
        m = eigen_redux(x2[r], (4 - r * n % 4) % 4, True)
        for j in range(n):
            z = x2[r, j] - m
            e[j] = _exp_packet(z) if j < packet_end else _expf(z)
        log_sum = _logf(eigen_redux(e, 0, False))
        for j in range(n):
            out2[r, j] = (x2[r, j] - m) - log_sum


@njit
def softmax_libm_numba(x2, beta, out2):
    """SOFTMAX float32 as ``reference_ops::Softmax``: expf, a left-to-right sum, e / sum."""
    rows, n = x2.shape
    for r in range(rows):
        m = _LOWEST
        for j in range(n):
            m = x2[r, j] if m < x2[r, j] else m
        s = _F0
        for j in range(n):
            e = _expf((x2[r, j] - m) * beta)
            out2[r, j] = e
            s += e
        for j in range(n):
            out2[r, j] = out2[r, j] / s


@njit
def log_softmax_libm_numba(x2, out2):
    """LOG_SOFTMAX float32 as ``reference_ops::LogSoftmax``: (x − m) − logf(Σ expf(x − m))."""
    rows, n = x2.shape
    for r in range(rows):
        m = _LOWEST
        for j in range(n):
            m = x2[r, j] if m < x2[r, j] else m
        s = _F0
        for j in range(n):
            s += _expf(x2[r, j] - m)
        log_sum = _logf(s)
        for j in range(n):
            out2[r, j] = (x2[r, j] - m) - log_sum


@njit
def float_to_int32_x86_scalar(v):
    """(int32)v as x86 converts a float: truncation; NaN and values beyond int32 give INT32_MIN."""
    if v != v or v <= -2147483649.0 or v >= 2147483648.0:
        return np.int64(-2147483648)
    return np.int64(v)


@njit
def softmax_8bit_numba(x2, table, out_scale, out_zp, add_half, in_min, lo, hi, out2):
    rows, n = x2.shape
    for r in range(rows):
        mx = in_min
        for j in range(n):
            if x2[r, j] > mx:
                mx = np.int64(x2[r, j])
        off = 255 - mx
        s = np.float32(0.0)
        for j in range(n):
            s += table[off + x2[r, j]]
        inv = np.float32(1.0) / (s * out_scale)
        for j in range(n):
            p = table[off + x2[r, j]] * inv
            if add_half:
                q = float_to_int32_x86_scalar(np.float64(np.float32(p + np.float32(0.5))))
            else:
                a = np.floor(np.abs(np.float64(p)) + 0.5)
                q = float_to_int32_x86_scalar(a if p >= 0 else -a)
                q = ((q + out_zp + 2147483648) & 0xFFFFFFFF) - 2147483648     # int32 addition
            if q < lo:
                q = lo
            if q > hi:
                q = hi
            out2[r, j] = q


def _run_rows(fn, x: np.ndarray, out: np.ndarray, *args) -> None:
    n = x.shape[-1] if x.ndim else 1
    if x.size == 0 or n == 0:
        return
    x2 = np.ascontiguousarray(x, np.float32).reshape(-1, n)
    with np.errstate(all="ignore"):         # WORKBENCH_JIT=0: numpy scalars warn about inf and NaN
        if out.flags.c_contiguous and out.dtype == np.float32:
            fn(x2, *args, out.reshape(-1, n))
        else:
            res = np.empty(x2.shape, np.float32)
            fn(x2, *args, res)
            out[...] = res.reshape(out.shape)


def softmax_f32(x: np.ndarray, beta: float, out: np.ndarray) -> None:
    """The SOFTMAX float32 fast path (Eigen's arithmetic) into ``out``."""
    _run_rows(softmax_f32_numba, x, out, np.float32(beta))


def log_softmax_f32(x: np.ndarray, out: np.ndarray) -> None:
    """The LOG_SOFTMAX float32 fast path (Eigen's arithmetic) into ``out``."""
    _run_rows(log_softmax_f32_numba, x, out)


class FloatRows(FastPath):
    """A float32 row loop: ``fn(rows, *args, out_rows)``."""

    __slots__ = ("fn", "args")
    name = "numba"

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __call__(self, context, node, d) -> None:
        _run_rows(self.fn, context.tensors[node.inputs[0]], context.tensors[node.outputs[0]], *self.args)


class FloatSoftmaxNative(FlatCall):
    """``native``: the kernel library's ``softmax_f32`` over rows of the last axis (threads, x, out, [n],
    [beta]), the bits of :func:`softmax_f32_numba`; ``fallback`` (that loop's :class:`FloatRows`) where it
    is not taken.  One library call: it joins the runs of library calls
    (:mod:`workbench.interpreter.fused`)."""

    __slots__ = ()

    def __init__(self, fn, fallback: FloatRows, n: int, beta):
        super().__init__(fn, fallback, (np.array([n], np.int64), np.array([beta], np.float32)), 1, False)


class Softmax8Bit(FastPath):
    __slots__ = ("args",)
    name = "numba"

    def __init__(self, d: SoftmaxInt8Data):
        lo, hi = TYPE_RANGE[np.dtype(d.output_dtype)]
        self.args = (d.table, np.float32(d.output_scale), d.output_zero_point, d.output_dtype == "uint8",
                     TYPE_RANGE[np.dtype(d.dtype)][0], lo, hi)

    def native_call(self, context, node):
        """One call of the library's :func:`softmax_8bit_numba`: a network's last node joins the run of
        library calls before it (:mod:`..fused`)."""
        x, out = context.tensors[node.inputs[0]], context.tensors[node.outputs[0]]
        if x.size == 0 or not (x.flags.c_contiguous and out.flags.c_contiguous):
            return None
        n = x.shape[-1]
        return library_call(softmax_8bit_numba, x.reshape(-1, n), *self.args, out.reshape(-1, n))

    def __call__(self, context, node, d) -> None:
        x = context.tensors[node.inputs[0]]
        if x.size == 0:
            return
        n = x.shape[-1]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):   # WORKBENCH_JIT=0: NaN betas
            softmax_8bit_numba(x.reshape(-1, n), *self.args, context.tensors[node.outputs[0]].reshape(-1, n))


@fast_path(BuiltinOperator.SOFTMAX, SoftmaxData, variants=tuple(VARIANTS))
def bind_softmax_float(context, node, d):
    if context.variant.float_activations == "eigen":
        rows = FloatRows(softmax_f32_numba, np.float32(d.beta))
        shape = context.shape(node.inputs[0])
        fn = _ew.softmax_function() if len(shape) and shape[-1] > 0 else None
        return rows if fn is None else FloatSoftmaxNative(fn, rows, shape[-1], d.beta)
    return FloatRows(softmax_libm_numba, np.float32(d.beta))


@fast_path(BuiltinOperator.LOG_SOFTMAX, LogSoftmaxData, variants=tuple(VARIANTS))
def bind_log_softmax_float(context, node, d):
    return FloatRows(log_softmax_f32_numba if context.variant.float_activations == "eigen" else log_softmax_libm_numba)


@fast_path(BuiltinOperator.SOFTMAX, SoftmaxInt8Data, variants=(LITERT_X86.name,))
def bind_softmax_8bit(context, node, d):
    return Softmax8Bit(d)
