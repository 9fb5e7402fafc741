"""RSQRT: 1 / sqrt(x) — float32 (v1), int8 (v2), int16 (v3).

Both quantized kernels (``elementwise.cc``) first check that every input stands for a
non-negative number (x >= input zero point; litert stops with "Rsqrt is only defined for
positive values", and so does this kernel).

int8 (``RsqrtEvalQuantizedInt8``): prepare turns 1/(sqrtf(in_scale)·out_scale) into
output_multiplier / output_shift.  Per element v = x − in_zp: v = 0 gives 127; otherwise
``GetInvSqrtQuantizedMultiplierExp(v)`` writes 1/sqrt(v) as (multiplier, shift) by Newton-Raphson
in fixed point; data = MBQM(1, that multiplier, shift + 20) (1/sqrt(v) with 20 fraction bits) and
out = MBQM(data, output_multiplier, output_shift − 20) + out_zp, clamped.

int16: a 513-entry interpolated LUT (``LUTPopulate<int16_t>``, float32) of
value <= 0 ? 32767·out_scale : 1/sqrtf(value), read by ``LUTLookup``.

float32: 1 / sqrtf(x) per element.  Both builds of TFLite compute the same here.  The speed layer:
``fast/unary.py``.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import OpData, kernel, opdata
from ._common import F32, I8, I16
from ._unary import LutData, UnaryKernel, clamp_to, lut_lookup, prepare_lut, require_zero_points
from .sqrt import check_non_negative


@opdata
class RsqrtInt8Data(OpData):
    shape: tuple
    input_zero_point: int
    output_zero_point: int
    real_multiplier: float          # 1 / (sqrt(input_scale) · output_scale)
    output_multiplier: int
    output_shift: int


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def rsqrt_int16_transform(output_scale: float):
    top = np.float32(np.float32(32767) * np.float32(output_scale))

    def f(d):
        d = np.asarray(d, np.float32)
        # a NaN (absurd input scales: −inf + inf) is no "≤ 0" and goes through 1/sqrtf as NaN
        root = np.sqrt(np.where((d > 0) | np.isnan(d), d, np.float32(1)))
        with np.errstate(divide="ignore"):
            return np.where(d <= 0, top, (np.float32(1) / root).astype(np.float32)).astype(np.float32)
    return f


def rsqrt_int8(x: np.ndarray, d: RsqrtInt8Data) -> np.ndarray:
    """RsqrtEvalQuantizedInt8, computed once for each distinct input value (at most 256)."""
    values, where = np.unique(x.astype(np.int64) - d.input_zero_point, return_inverse=True)
    out = np.empty(values.shape, np.int64)
    for i, value in enumerate(values.tolist()):
        if value == 0:
            out[i] = 127
            continue
        m, s = quant.inv_sqrt_quantized_multiplier_exp(max(value, 0), -1)
        data = quant.multiply_by_quantized_multiplier(1, m, s + 20)
        # x86 arithmetic for absurd scales: a left shift of 32 or more counts modulo 32, int32 wraps
        out[i] = quant.wrap_bits(int(quant.multiply_by_quantized_multiplier_x86_array(
            data, d.output_multiplier, d.output_shift - 20)) + d.output_zero_point, 32)
    return clamp_to(out[where.reshape(-1)].reshape(x.shape), I8)


def rsqrt_int16(x: np.ndarray, d: LutData) -> np.ndarray:
    """``LUTLookup`` in the interpolated table of 1/sqrtf."""
    return lut_lookup(x, d)


def rsqrt_float(x: np.ndarray) -> np.ndarray:
    """1 / ``std::sqrt`` per element (inf at 0, NaN below)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.float32(1) / np.sqrt(x), dtype=x.dtype)


@kernel(BuiltinOperator.RSQRT, versions=(1, 2, 3))
class Rsqrt(UnaryKernel):
    name = "rsqrt"
    dtypes = (F32,)
    qtypes = (I8, I16)

    def prepare_quantized(self, context, node, dt):
        x, y = node.inputs[0], node.outputs[0]
        in_s, in_zp = quant.tensor_scale_zp(context, x)
        out_s, out_zp = quant.tensor_scale_zp(context, y)
        if dt == I16:
            require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
            return prepare_lut(context, node, dt, rsqrt_int16_transform(out_s))
        root = np.sqrt(np.float32(in_s))
        with np.errstate(over="ignore", under="ignore"):
            denominator = float(np.float32(root * np.float32(out_s)))
        real = 1.0 / denominator if denominator else float("inf")
        m, s = quant.quantize_multiplier_x86(real)          # an infinite real (absurd scales) is (0, 0)
        return RsqrtInt8Data(context.shape(x), in_zp, out_zp, real, m, s)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is RsqrtInt8Data:
            check_non_negative(node, x, d.input_zero_point, "Rsqrt")
            out[...] = rsqrt_int8(x, d)
        elif type(d) is LutData:
            check_non_negative(node, x, d.input_zero_point, "Rsqrt")
            out[...] = rsqrt_int16(x, d)
        else:
            out[...] = rsqrt_float(x)
