"""What the element-wise activations share: one input, the same shape out.

Float32 kernels subclass :class:`UnaryKernel` and override ``invoke`` / ``invoke_reference``.

Quantized inputs (uint8, int8, int16; which ones an op takes is its ``qtypes``) go through
``prepare_quantized`` (→ an OpData with TensorFlow Lite Micro's field names) and
``reference_quantized`` (the plain numpy arithmetic of TFLite's kernel, on any array of input
values).  Because an element-wise op's output depends on the input *value* only, the fast path
is a table: ``prepare`` evaluates ``reference_quantized`` once on every value of the input type
(256 values for 8 bits, 65536 for int16) and ``invoke`` indexes that table with the input's bit
pattern.  ``invoke_reference`` runs ``reference_quantized`` on the tensor itself; the tests check
that the two agree and that both agree with ai-edge-litert.

Two families live here:

* LUT activations (LOGISTIC, TANH, ELU, GELU, EXP, LOG ... on 8-bit types): TFLite itself builds
  a 256-entry table in prepare with ``LUTPopulate`` (float32: d = in_scale·(v − in_zp);
  y = f(d); q = round(y/out_scale) + out_zp, clamped), see :func:`workbench.interpreter.quant.lut_8bit`
  (and :func:`~workbench.interpreter.quant.lut_float_to_8bit` for the infinities and NaNs of absurd scales).
  For int16 it builds a 513-entry table that is read with linear interpolation
  (:func:`~workbench.interpreter.quant.lut_int16`, :func:`~workbench.interpreter.quant.lut_lookup_int16`).
* the RELU family (RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1; ``activations.cc`` ReluPrepare /
  QuantizedReluX): output_multiplier / output_shift from in_scale/out_scale (a float32 division,
  then QuantizeMultiplier), q = clamp(MBQM(x − in_zp) + out_zp) to
  [max(type_min, out_zp + round(lo/out_scale)), min(type_max, out_zp + round(hi/out_scale))].
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import Kernel, OpData, opdata
from .. import quant
from ...perf.jit import native, njit
from ._common import F32

I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)
I16 = np.dtype(np.int16)
TYPE_RANGE = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767)}


# ----------------------------------------------------------------------------------------------
# value tables: the fast path of every quantized element-wise op


def all_values(dtype) -> np.ndarray:
    """Every value of an 8- or 16-bit integer type, at the index of its unsigned bit pattern."""
    dtype = np.dtype(dtype)
    unsigned = np.uint8 if dtype.itemsize == 1 else np.uint16
    return np.arange(1 << (8 * dtype.itemsize)).astype(unsigned).view(dtype)


def bit_pattern(x: np.ndarray) -> np.ndarray:
    """``x`` read as unsigned integers of the same width (the index into a value table)."""
    x = np.ascontiguousarray(x)
    return x.view(np.uint8 if x.dtype.itemsize == 1 else np.uint16)


def value_table(dtype, fn) -> np.ndarray:
    """``fn`` evaluated on every value of ``dtype`` (see :func:`all_values`)."""
    return np.asarray(fn(all_values(dtype)))


def lookup(x: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    np.take(table, bit_pattern(x), out=out)


def clamp_to(v, dtype) -> np.ndarray:
    lo, hi = TYPE_RANGE[np.dtype(dtype)]
    return np.clip(v, lo, hi).astype(dtype)


def check_same_type(context, node, dt) -> None:
    """TFLite's ``TF_LITE_ENSURE_TYPES_EQ(input->type, output->type)``."""
    y = node.outputs[0]
    if context.dtype(y) != dt:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): input is {dt} but output "
                                 f"'{context.name(y)}' is {context.dtype(y)}; TFLite needs them equal")


def require_zero_points(node, what: str, *pairs) -> None:
    """int16 kernels are symmetric: TFLite checks ``zero_point == 0`` (``TF_LITE_ENSURE_EQ``)."""
    for name, zp in pairs:
        if zp != 0:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): {what} {name} zero point is {zp}; "
                                     f"TFLite's int16 kernel needs 0 (symmetric quantization)")


# ----------------------------------------------------------------------------------------------
# OpData


@opdata
class LutData(OpData):
    """A LUT activation on a quantized type (TFLite's ``OpData.lut_uint8 / lut_int8 / lut_int16``)."""

    shape: tuple
    dtype: str
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    function: str = ""                                              # what the table holds
    lut: object = dataclasses.field(default=None, repr=False)      # 256 (8-bit) or 513 (int16) entries
    table: object = dataclasses.field(default=None, repr=False)    # value table (fast path)
    impl: str = "lut"


@opdata
class ReluData(OpData):
    """RELU / RELU6 / RELU_N1_TO_1 / RELU_0_TO_1 on a quantized type (``ReluOpData`` + ``ReluParams``)."""

    shape: tuple
    dtype: str
    input_zero_point: int
    output_zero_point: int
    effective_scale: float          # input_scale / output_scale (float32 division, as TFLite)
    output_multiplier: int
    output_shift: int
    output_activation_min: int
    output_activation_max: int
    table: object = dataclasses.field(default=None, repr=False)
    impl: str = "table"


@opdata
class UnaryData(OpData):
    shape: tuple


QUANTIZED_DATA = (LutData, ReluData)


# ----------------------------------------------------------------------------------------------
# the LUT family


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def lut_reference(x: np.ndarray, d: LutData, transform) -> np.ndarray:
    """What a LUT entry holds, computed for the given values (8-bit) or read from the 513-entry
    table with interpolation (int16)."""
    dt = np.dtype(d.dtype)
    if dt == I16:
        return quant.lut_lookup_int16(x, d.lut).astype(I16)
    v = x.astype(np.int64)
    deq = (np.float32(d.input_scale) * (v - d.input_zero_point).astype(np.float32)).astype(np.float32)
    y = np.asarray(transform(deq), np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        r = quant.round_half_away((y * (np.float32(1.0) / np.float32(d.output_scale))).astype(np.float32))
        qf = (r.astype(np.float32) + np.float32(d.output_zero_point)).astype(np.float32)
    return quant.lut_float_to_8bit(qf, dt).astype(dt)


def prepare_lut(context, node, dt, transform, transform16=None, function: str = "") -> LutData:
    """The LUT for ``transform`` (8-bit: :func:`quant.lut_8bit`; int16: :func:`quant.lut_int16`
    with ``transform16``, a float32 function of float32 arrays, or ``transform``)."""
    x, y = node.inputs[0], node.outputs[0]
    in_s, in_zp = quant.tensor_scale_zp(context, x)
    out_s, out_zp = quant.tensor_scale_zp(context, y)
    if dt == I16:
        lut = quant.lut_int16(in_s, in_zp, out_s, out_zp, transform16 or transform)
    else:
        lut = quant.lut_8bit(in_s, in_zp, out_s, out_zp, transform, dt)
    return LutData(context.shape(x), str(dt), in_s, in_zp, out_s, out_zp, function or node.op_name.lower(), lut)


# ----------------------------------------------------------------------------------------------
# the RELU family


def relu_reference(x: np.ndarray, d: ReluData) -> np.ndarray:
    v = quant.multiply_by_quantized_multiplier_array(x.astype(np.int64) - d.input_zero_point, d.output_multiplier,
                                                     d.output_shift) + d.output_zero_point
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(d.dtype)


def prepare_relu(context, node, dt, lo_real: float, hi_real) -> ReluData:
    """ReluPrepare + QuantizedReluX: ``hi_real`` None is RELU's open upper end (the type maximum)."""
    x, y = node.inputs[0], node.outputs[0]
    in_s, in_zp = quant.tensor_scale_zp(context, x)
    out_s, out_zp = quant.tensor_scale_zp(context, y)
    if dt == I16:
        require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
    qmin, qmax = TYPE_RANGE[dt]
    lo = max(qmin, out_zp + int(quant.round_half_away(np.float32(lo_real) / np.float32(out_s))))
    hi = qmax if hi_real is None else min(qmax, out_zp + int(quant.round_half_away(np.float32(hi_real) /
                                                                                   np.float32(out_s))))
    eff = float(np.float32(in_s) / np.float32(out_s))
    m, sh = quant.quantize_multiplier(eff)
    return ReluData(context.shape(x), str(dt), in_zp, out_zp, eff, m, sh, lo, hi)


# ----------------------------------------------------------------------------------------------
# the kernel base class


class UnaryKernel(Kernel):
    """One input, one output of the same shape.

    Subclasses set ``dtypes`` (float types, handled by their own ``invoke``), ``qtypes`` (the
    quantized types TFLite's kernel takes) and, for quantized types, either ``lut`` (a float32
    transform: the LUT family) or ``relu_range`` ((lo, hi) in real numbers, hi None = open: the
    RELU family), or override ``prepare_quantized`` / ``reference_quantized``.
    """

    dtypes = (F32,)
    qtypes = ()
    lut = None            # float32 transform for the 8-bit / int16 LUT
    lut16 = None          # transform for the int16 LUT when it differs from ``lut``
    relu_range = None     # (act_min, act_max) in real numbers

    # -- quantized hooks -------------------------------------------------------------------------
    def prepare_quantized(self, context, node, dt):
        if self.lut is not None:
            return prepare_lut(context, node, dt, type(self).lut, type(self).lut16)
        if self.relu_range is not None:
            return prepare_relu(context, node, dt, *self.relu_range)
        raise NotImplementedError

    def reference_quantized(self, x: np.ndarray, d) -> np.ndarray:
        if type(d) is LutData:
            return lut_reference(x, d, type(self).lut)
        if type(d) is ReluData:
            return relu_reference(x, d)
        raise NotImplementedError

    def check_quantized_output(self, context, node, dt) -> np.dtype:
        """The output type for a quantized input (TFLite: the same type)."""
        check_same_type(context, node, dt)
        return dt

    # -- the Kernel interface --------------------------------------------------------------------
    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, tuple(self.dtypes) + tuple(self.qtypes))
        if dt in tuple(np.dtype(q) for q in self.qtypes):
            out_dt = self.check_quantized_output(context, node, dt)
            d = self.prepare_quantized(context, node, dt)
            if getattr(d, "table", False) is None:
                d = dataclasses.replace(d, table=value_table(dt, lambda v: self.reference_quantized(v, d)))
            context.set_output(node.outputs[0], context.shape(x), out_dt)
            return d
        context.set_output(node.outputs[0], context.shape(x), dt)
        return self.prepare_float(context, node, dt)

    def prepare_float(self, context, node, dt):
        return UnaryData(context.shape(node.inputs[0]))


def invoke_quantized(kernel, context, node, d, reference: bool = False) -> bool:
    """Run the quantized variant if ``d`` is one (value table, or ``reference_quantized``);
    returns True when it did."""
    if getattr(d, "table", None) is None:
        return False
    x = context.tensors[node.inputs[0]]
    out = context.tensors[node.outputs[0]]
    if reference:
        out[...] = kernel.reference_quantized(x, d)
    else:
        lookup(x, d.table, out)
    return True


# ----------------------------------------------------------------------------------------------
# float32 math: what the float paths of EXP, ELU, LOG, SIN, COS, LOGISTIC, TANH, GELU, HARD_SWISH
# compute, bit for bit as litert's x86 build (measured on ai-edge-litert 2.3.0, SSE build without FMA)
#
# * EXP, ELU, LOG, SIN, COS call the C library per element (``std::exp(float)`` is glibc's expf,
#   ELU's negative side is expm1f).  numpy's float32 exp / log / sin have their own SIMD code and
#   differ in the last bit for many inputs; numba's ``math.exp`` on a float32 calls expf itself,
#   so the fast path is a numba loop and the reference a ctypes call per element
#   (:func:`libm_f32`); the tests check the two against each other and against litert.
# * LOGISTIC, TANH and GELU are Eigen expressions over the whole tensor.  Eigen works on packets of
#   4 floats; a tensor buffer is 16-byte aligned, so the first 4·⌊n/4⌋ values take the packet code
#   and the last n mod 4 values Eigen's one-value code.  Only two functions differ between the two:
#   logistic (packet: its own exp(x/2)² polynomial; one value: expf, see quant's "recurrent"
#   section) and erfc (packet: Eigen's polynomial exp; one value: expf).  TANH is Eigen's rational
#   [9/8] approximation on both paths.
# * HARD_SWISH runs a 4-lane loop, (x·(1/6))·relu6(x + 3), then one value at a time
#   (x·relu6(x + 3))·(1/6): the two orders round differently.
# Every product and sum is rounded to float32 separately (no fused multiply-add).  A NaN input
# comes out as the same NaN, quieted.

F32_LANES = 4                         # floats per SSE packet


def packet_end(n: int) -> int:
    """Elements [0, packet_end(n)) take Eigen's 4-float packet code, the rest its one-value code."""
    return n - n % F32_LANES


@np.errstate(all="ignore")
def libm_f32(name: str, x) -> np.ndarray:
    """The C library's float function ``name`` (``expf``, ``expm1f``, ``logf``, ``sinf``, ``cosf``)
    on every element of a float32 array (ctypes, one call per element: the plain reference)."""
    x = np.asarray(x, np.float32)
    return quant.libm_apply(name, x.reshape(-1)).astype(np.float32).reshape(x.shape)


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
    e = eigen_exp_packet_f32(neg) if packet else libm_f32("expf", neg)
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


# -- the fast paths: numba loops over flat float32 arrays, the same arithmetic one value at a time.
# The constants are float32 globals (numba keeps them float32), so every operation rounds to float32.

_F0, _F1, _F2, _HALF, _SIXTH = _f(0), _f(1), _f(2), _f(0.5), _f(1.0 / 6.0)
_F3, _F6, _F11, _FM11, _FM104 = _f(3), _f(6), _f(11), _f(-11), _f(-104)
_SPLIT = _f(4097)
_EXP_HI, _LOG2E_F, _LN2_HI_F, _LN2_LO_F = _f(88.723), _f(_LOG2E), _f(_LN2_HI), _f(_LN2_LO)
_P6, _P5, _P4, _P3, _P2 = (_f(c) for c in _EXP_P)
_S0, _S1, _S2, _S3, _S4, _S5 = (_f(c) for c in _ERFC_SMALL)
_N0, _N1, _N2, _N3 = (_f(c) for c in _ERFC_NUM)
_D0, _D1, _D2, _D3, _D4 = (_f(c) for c in _ERFC_DEN)
_TANH_CLAMP = _f(quant.recurrent._EIGEN_TANH_CLAMP)
_TP0, _TP1, _TP2, _TP3 = (_f(c) for c in quant.recurrent._EIGEN_TANH_P)
_TQ0, _TQ1, _TQ2, _TQ3, _TQ4 = (_f(c) for c in quant.recurrent._EIGEN_TANH_Q)
_LG_HI = _f(16.6355324)
_LG_P2, _LG_P3, _LG_P4, _LG_P5 = _f(0.49999141693115234375), _f(0.16666877269744873046875), \
    _f(4.1898667812347412109375e-2), _f(8.33471305668354034423828125e-3)
_SQRT1_2_NEG = _f(-0.70710678118654752440)
_SQRT_2_OVER_PI = _f(1.12837916709551257390 * 0.70710678118654752440)
_GELU_CUBE = _f(0.044715)


def _libm_scalar(name: str, v):
    """The C library's float function on one float32 value (ctypes), numpy float64 if libm is missing."""
    fn = quant.prepare.libm_float(name)
    if fn is not None:
        return np.float32(fn(float(v)))
    with np.errstate(all="ignore"):
        return np.float32(getattr(np, name[:-1])(np.float64(v)))


# numba's math.exp / expm1 / log / sin / cos on a float32 call the C library's expf, expm1f, logf,
# sinf, cosf.  Without JIT (WORKBENCH_JIT=0) the loops below run as Python, where math.exp would
# compute in double: there the ``native`` twins call the C library through ctypes instead.

@njit
def _expf_numba(v):
    return math.exp(v)


@njit
def _expm1f_numba(v):
    return math.expm1(v)


@njit
def _logf_numba(v):
    return math.log(v)


@njit
def _sinf_numba(v):
    return math.sin(v)


@njit
def _cosf_numba(v):
    return math.cos(v)


@native(lambda: _expf_numba.compile())
def expf1(v):
    return _libm_scalar("expf", v)


@native(lambda: _expm1f_numba.compile())
def expm1f1(v):
    return _libm_scalar("expm1f", v)


@native(lambda: _logf_numba.compile())
def logf1(v):
    return _libm_scalar("logf", v)


@native(lambda: _sinf_numba.compile())
def sinf1(v):
    return _libm_scalar("sinf", v)


@native(lambda: _cosf_numba.compile())
def cosf1(v):
    return _libm_scalar("cosf", v)


@njit
def _pow2_f32(k):
    """2^k as a float32, for k in the normal range."""
    return np.float32(2.0 ** k)


@njit
def _exp_packet1(v):
    """One lane of :func:`eigen_exp_packet_f32` (v finite and in [−121, 0] where GELU uses it)."""
    if v < _FM104:
        return _F0
    if v > _EXP_HI:
        v = _EXP_HI
    m = np.float32(math.floor(v * _LOG2E_F + _HALF))
    r = m * _LN2_HI_F + v
    r = m * _LN2_LO_F + r
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
    """One value of :func:`eigen_erfc_f32` (``packet``: Eigen's polynomial exp, else expf)."""
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
    m = np.float32(math.floor(h * _LOG2E_F + _HALF))
    r = m * _LN2_HI_F + h
    r = m * _LN2_LO_F + r
    r2 = r * r
    p = r * (r2 * _LG_P5 + _LG_P3) + (r2 * _LG_P4 + _LG_P2)
    p = r2 * p + (r + _F1)
    e = p * _pow2_f32(int(m))
    e = e * e
    return e / (_F1 + e)


@njit
def float_unary_loop(x, out, op, approximate):
    """``out[i] = f(x[i])`` over flat float32 arrays; ``op`` picks f:
    0 expf, 1 ELU (expm1f below 0), 2 logf, 3 sinf, 4 cosf, 5 Eigen tanh, 6 Eigen logistic,
    7 GELU (Eigen; ``approximate``: the tanh form), 8 HARD_SWISH."""
    n = x.size
    body = n - n % 4
    for i in range(n):
        v = x[i]
        packet = i < body
        if op == 0:
            out[i] = expf1(v)
        elif op == 1:
            out[i] = expm1f1(v) if v < _F0 else v
        elif op == 2:
            out[i] = logf1(v)
        elif op == 3:
            out[i] = sinf1(v)
        elif op == 4:
            out[i] = cosf1(v)
        elif op == 5:
            out[i] = _tanh1(v)
        elif op == 6:
            out[i] = _logistic1(v, packet)
        elif op == 7:
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
            out[i] = (v * _SIXTH) * r6 if packet else (v * r6) * _SIXTH


FLOAT_OPS = {"exp": 0, "elu": 1, "log": 2, "sin": 3, "cos": 4, "tanh": 5, "logistic": 6, "gelu": 7, "hard_swish": 8}


def run_float_unary(name: str, x: np.ndarray, out: np.ndarray, approximate: bool = False) -> None:
    """The fast path: :func:`float_unary_loop` on float32 ``x`` into ``out`` (same shape)."""
    xf = np.ascontiguousarray(x, np.float32).reshape(-1)
    with np.errstate(all="ignore"):         # WORKBENCH_JIT=0: numpy scalars warn about inf and NaN
        if out.flags.c_contiguous and out.dtype == np.float32:
            float_unary_loop(xf, out.reshape(-1), FLOAT_OPS[name], bool(approximate))
        else:
            res = np.empty(xf.size, np.float32)
            float_unary_loop(xf, res, FLOAT_OPS[name], bool(approximate))
            out[...] = res.reshape(out.shape)
