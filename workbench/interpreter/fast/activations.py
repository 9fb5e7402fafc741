"""Speed layer for the element-wise activations: LOGISTIC, TANH, GELU, HARD_SWISH, LEAKY_RELU, PRELU.

* Quantized inputs are tables.  An element-wise op's output depends on the input *value* only, so
  bind evaluates the teaching layer's function once on every value of the input type (256 values
  for 8 bits, 65536 for int16) and the fast path indexes that table with the input's bit pattern
  ("table", or "lut" for TFLite's own LUT activations); 8-bit PRELU has a table of every
  (x, alpha) pair.  The tables hold the teaching layer's own results, so they follow whichever
  variant the node was prepared under: these paths serve both variants.
* float32 LOGISTIC, TANH, GELU, HARD_SWISH run one numba loop (the last section): Eigen's packet and
  one-value code as litert's x86 build runs them, or the C library's functions one value at a
  time for the reference kernels (``Variant.float_activations``).
"""

from __future__ import annotations

import math

import numpy as np

from ...perf.jit import native, njit
from ...schema.enums import BuiltinOperator
from ..kernels._unary import LutData, UnaryData, all_values, lut_lookup
from ..kernels.gelu import GeluData
from ..kernels.hard_swish import HardSwishData, hard_swish_quantized
from ..kernels.leaky_relu import LeakyReluQuantizedData, leaky_relu_quantized
from ..kernels.logistic import LogisticInt16Data, int16_uses_table, logistic_int16_gemmlowp, logistic_int16_table
from ..kernels.prelu import PreluQuantizedData, prelu_quantized
from ..kernels.tanh import TanhInt16Data, tanh_int16_gemmlowp, tanh_int16_table
from ..variants import VARIANTS
from . import FastPath, fast_path
from .unary import ValueTable, _libm_scalar, bit_pattern, expf1

ALL = tuple(VARIANTS)


class PairTable(FastPath):
    """out = table[(pattern(x) << 8) | pattern(alpha)]: 8-bit PRELU for every (x, alpha) pair."""

    __slots__ = ("table",)
    name = "table"

    def __init__(self, dtype, fn):
        v = all_values(dtype)
        self.table = np.asarray(fn(np.repeat(v, 256), np.tile(v, 256)))

    def __call__(self, context, node, d) -> None:
        t = context.tensors
        x, a = np.broadcast_arrays(t[node.inputs[0]], t[node.inputs[1]])
        index = (bit_pattern(x).astype(np.intp) << 8) + bit_pattern(a).astype(np.intp)
        np.take(self.table, index, out=t[node.outputs[0]])


@fast_path(BuiltinOperator.PRELU, PreluQuantizedData, variants=ALL)
def bind_prelu_quantized(context, node, d):
    if np.dtype(d.dtype).itemsize != 1:
        return None                                       # int16: the teaching layer's numpy
    return PairTable(d.dtype, lambda v, w: prelu_quantized(v, w, d))


@fast_path(BuiltinOperator.LEAKY_RELU, LeakyReluQuantizedData, variants=ALL)
def bind_leaky_relu_quantized(context, node, d):
    return ValueTable("table", d.dtype, lambda v: leaky_relu_quantized(v, d))


@fast_path(BuiltinOperator.HARD_SWISH, HardSwishData, variants=ALL)
def bind_hard_swish_quantized(context, node, d):
    return ValueTable("table", d.dtype, lambda v: hard_swish_quantized(v, d))


@fast_path(BuiltinOperator.LOGISTIC, LutData, variants=ALL)
@fast_path(BuiltinOperator.TANH, LutData, variants=ALL)
@fast_path(BuiltinOperator.GELU, LutData, variants=ALL)
def bind_lut(context, node, d):
    return ValueTable("lut", d.dtype, lambda v: lut_lookup(v, d))


@fast_path(BuiltinOperator.LOGISTIC, LogisticInt16Data, variants=ALL)
def bind_logistic_int16(context, node, d):
    if int16_uses_table(context.variant, d.input_multiplier):
        return ValueTable("table", np.int16, lambda v: logistic_int16_table(v, d.input_multiplier, d.input_left_shift))
    return ValueTable("table", np.int16, logistic_int16_gemmlowp)


@fast_path(BuiltinOperator.TANH, TanhInt16Data, variants=ALL)
def bind_tanh_int16(context, node, d):
    if int16_uses_table(context.variant, d.input_multiplier):
        return ValueTable("table", np.int16, lambda v: tanh_int16_table(v, d.input_multiplier, d.input_left_shift))
    return ValueTable("table", np.int16, lambda v: tanh_int16_gemmlowp(v, d.input_left_shift))


# ----------------------------------------------------------------------------------------------
# float32: one numba loop, every operation rounded to float32 (the constants are float32 globals)
#
# numba's math.exp / math.tanh on a float32 call the C library's expf / tanhf.  Without JIT
# (WORKBENCH_JIT=0) the loop runs as Python, where math.exp would compute in double: there the
# ``native`` twins call the C library through ctypes instead.

_f = np.float32
_F0, _F1, _F2, _F3, _F6, _HALF, _SIXTH = _f(0), _f(1), _f(2), _f(3), _f(6), _f(0.5), _f(1.0 / 6.0)
_F11, _FM11, _FM104, _FM9, _LOGISTIC_UPPER = _f(11), _f(-11), _f(-104), _f(-9), _f(16.619047164916992188)
_SPLIT = _f(4097)
_EXP_HI, _LOG2E, _LN2_HI, _LN2_LO = _f(88.723), _f(1.44269504088896341), _f(-0.693359375), _f(2.12194440e-4)
_P6, _P5, _P4, _P3, _P2 = (_f(c) for c in (1.37449637986719608306884765625e-3, 8.36894474923610687255859375e-3,
                                           4.166965186595916748046875e-2, 0.16666518151760101318359375,
                                           0.49999988079071044921875))
_S0, _S1, _S2, _S3, _S4, _S5 = (_f(c) for c in (5.61802298761904239654541015625e-04,
                                                -4.91381669417023658752441406250e-03,
                                                2.67075151205062866210937500000e-02,
                                                -1.12800106406211853027343750000e-01,
                                                3.76122951507568359375000000000e-01,
                                                -1.12837910652160644531250000000e+00))
_N0, _N1, _N2, _N3 = (_f(c) for c in (1.0208116471767425537109375e-01, 4.2920666933059692382812500e-01,
                                      3.2379078865051269531250000e-01, 5.3971976041793823242187500e-02))
_D0, _D1, _D2, _D3, _D4 = (_f(c) for c in (1.7251677811145782470703125e-02, 3.9137163758277893066406250e-01, 1.0,
                                           6.2173241376876831054687500e-01, 9.5662862062454223632812500e-02))
_TANH_CLAMP = _f(7.90738964080810547)
_TP0, _TP1, _TP2, _TP3 = (_f(c) for c in (1.394553628e-8, 2.102733560e-5, 3.520756727e-3, 1.340216100e-1))
_TQ0, _TQ1, _TQ2, _TQ3, _TQ4 = (_f(c) for c in (8.015776984e-7, 3.326951409e-4, 2.597254514e-2, 4.673548340e-1, 1.0))
_LG_HI = _f(16.6355324)
_LG_P2, _LG_P3, _LG_P4, _LG_P5 = _f(0.49999141693115234375), _f(0.16666877269744873046875), \
    _f(4.1898667812347412109375e-2), _f(8.33471305668354034423828125e-3)
_SQRT1_2_NEG = _f(-0.70710678118654752440)
_SQRT_2_OVER_PI = _f(1.12837916709551257390 * 0.70710678118654752440)
_GELU_CUBE = _f(0.044715)


@njit
def _tanhf_numba(v):
    return math.tanh(v)


@native(lambda: _tanhf_numba.compile())
def tanhf1(v):
    return _libm_scalar("tanhf", v)


@njit
def _pow2_f32(k):
    """2^k as a float32, for k in the normal range."""
    return np.float32(2.0 ** k)


@njit
def _exp_packet1(v):
    """One lane of ``_unary.eigen_exp_packet_f32`` (v finite and in [−121, 0] where GELU uses it)."""
    if v < _FM104:
        return _F0
    if v > _EXP_HI:
        v = _EXP_HI
    m = np.float32(math.floor(v * _LOG2E + _HALF))
    r = m * _LN2_HI + v
    r = m * _LN2_LO + r
    r2 = r * r
    even = r2 * (r2 * _P6 + _P4) + _P2
    odd = r2 * _P5 + _P3
    y = r2 * (r * odd + even) + (r + _F1)
    k = int(m)
    b = k >> 2                                      # pldexp: 2^b three times, then 2^(k − 3b)
    c = _pow2_f32(b)
    return y * c * c * c * _pow2_f32(k - 3 * b)


@njit
def _erfc1(v, packet):
    """One value of ``_unary.eigen_erfc_f32`` (``packet``: Eigen's polynomial exp, else expf)."""
    if v != v:
        return v + v
    x = v
    if x < _FM11:
        x = _FM11
    if x > _F11:
        x = _F11
    x2 = x * x
    if not (_F1 < x2):
        return x * (((((_S0 * x2 + _S1) * x2 + _S2) * x2 + _S3) * x2 + _S4) * x2 + _S5) + _F1
    g = _SPLIT * x                                   # Veltkamp split of x, then the error of x·x
    hi = (x - g) + g
    lo = x - hi
    err = lo * lo + (lo * hi + (hi * lo + (hi * hi - x2)))
    e = _exp_packet1(-x2) if packet else expf1(-x2)
    z = e - e * err
    q2 = _F1 / x2
    num = ((_N0 * q2 + _N1) * q2 + _N2) * q2 + _N3
    den = x * ((((_D0 * q2 + _D1) * q2 + _D2) * q2 + _D3) * q2 + _D4)
    two = _F2 if x < _F0 else _F0
    return z * (num / den) + two


@njit
def _tanh1(v):
    """Eigen's float tanh of one value (see quant.eigen_tanh_f32)."""
    if v != v:
        return v + v
    x = v
    if x > _TANH_CLAMP:
        x = _TANH_CLAMP
    if x < -_TANH_CLAMP:
        x = -_TANH_CLAMP
    x2 = x * x
    x3 = x2 * x
    p = ((_TP0 * x2 + _TP1) * x2 + _TP2) * x2 + _TP3
    q = (((_TQ0 * x2 + _TQ1) * x2 + _TQ2) * x2 + _TQ3) * x2 + _TQ4
    return (x3 * p + x) / q


@njit
def _logistic1(v, packet):
    """Eigen's logistic of one value: the packet code (exp(x/2)² by a degree-5 polynomial) or the
    one-value code (expf)."""
    if v != v:
        return v + v
    if not packet:
        e = expf1(v if v < _LG_HI else _LG_HI)
        return e / (_F1 + e)
    if v < _FM104:
        return _F0
    h = (v if v < _LG_HI else _LG_HI) * _HALF
    m = np.float32(math.floor(h * _LOG2E + _HALF))
    r = m * _LN2_HI + h
    r = m * _LN2_LO + r
    r2 = r * r
    p = r * (r2 * _LG_P5 + _LG_P3) + (r2 * _LG_P4 + _LG_P2)
    p = r2 * p + (r + _F1)
    e = p * _pow2_f32(int(m))
    e = e * e
    return e / (_F1 + e)


@njit
def float_activation_loop(x, out, op, eigen, approximate):
    """``out[i] = f(x[i])`` over flat float32 arrays.  ``op``: 0 LOGISTIC, 1 TANH, 2 GELU
    (``approximate``: the tanh form), 3 HARD_SWISH; ``eigen``: litert-x86's arithmetic (packets of 4
    and a one-value tail), else the reference kernels' (C library, plain order)."""
    n = x.size
    body = n - n % 4
    for i in range(n):
        v = x[i]
        packet = i < body
        if op == 0:
            if eigen:
                out[i] = _logistic1(v, packet)
            elif v > _LOGISTIC_UPPER:
                out[i] = _F1
            elif v < _FM9:
                out[i] = expf1(v)
            else:
                out[i] = _F1 / (_F1 + expf1(-v))
        elif op == 1:
            out[i] = _tanh1(v) if eigen else tanhf1(v)
        elif op == 2:
            half = _HALF * v
            if approximate:
                inner = _SQRT_2_OVER_PI * (v + _GELU_CUBE * (v * v * v))
                out[i] = half * (_F1 + _tanh1(inner))
            else:
                out[i] = half * _erfc1(v * _SQRT1_2_NEG, packet)
        else:
            if v != v:
                out[i] = v + v
                continue
            r6 = v + _F3
            if r6 < _F0:
                r6 = _F0
            if r6 > _F6:
                r6 = _F6
            if eigen:
                out[i] = (v * _SIXTH) * r6 if packet else (v * r6) * _SIXTH
            else:
                out[i] = (v * r6) / _F6


class FloatLoop(FastPath):
    __slots__ = ("op", "eigen", "approximate")
    name = "numba"

    def __init__(self, op: int, eigen: bool, approximate: bool = False):
        self.op, self.eigen, self.approximate = op, eigen, approximate

    def __call__(self, context, node, d) -> None:
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        xf = np.ascontiguousarray(x, np.float32).reshape(-1)
        with np.errstate(all="ignore"):         # WORKBENCH_JIT=0: numpy scalars warn about inf and NaN
            if out.flags.c_contiguous and out.dtype == np.float32:
                float_activation_loop(xf, out.reshape(-1), self.op, self.eigen, self.approximate)
            else:
                res = np.empty(xf.size, np.float32)
                float_activation_loop(xf, res, self.op, self.eigen, self.approximate)
                out[...] = res.reshape(out.shape)


FLOAT_OPS = {BuiltinOperator.LOGISTIC: 0, BuiltinOperator.TANH: 1, BuiltinOperator.HARD_SWISH: 3}


@fast_path(BuiltinOperator.LOGISTIC, UnaryData, variants=ALL)
@fast_path(BuiltinOperator.TANH, UnaryData, variants=ALL)
@fast_path(BuiltinOperator.HARD_SWISH, UnaryData, variants=ALL)
def bind_float(context, node, d):
    return FloatLoop(FLOAT_OPS[node.op], context.variant.float_activations == "eigen")


@fast_path(BuiltinOperator.GELU, GeluData, variants=ALL)
def bind_gelu_float(context, node, d):
    return FloatLoop(2, True, d.approximate)            # one GELU kernel in both builds
