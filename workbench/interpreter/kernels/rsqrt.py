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
value <= 0 ? 32767·out_scale : 1/sqrtf(value).
"""

import dataclasses

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import OpData, kernel, opdata
from .. import quant
from ._common import F32
from ._unary import (I8, I16, UnaryKernel, clamp_to, invoke_quantized, lut_reference, prepare_lut,
                     require_zero_points)
from .sqrt import check_non_negative


@opdata
class RsqrtInt8Data(OpData):
    shape: tuple
    input_zero_point: int
    output_zero_point: int
    real_multiplier: float          # 1 / (sqrt(input_scale) · output_scale)
    output_multiplier: int
    output_shift: int
    table: object = dataclasses.field(default=None, repr=False)
    impl: str = "table"


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def rsqrt_int16_transform(output_scale: float):
    top = np.float32(np.float32(32767) * np.float32(output_scale))

    def f(d):
        d = np.asarray(d, np.float32)
        # a NaN (absurd input scales: −inf + inf) is no "≤ 0" and goes through 1/sqrtf as NaN
        root = quant.libm_apply("sqrtf", np.where((d > 0) | np.isnan(d), d, np.float32(1)))
        with np.errstate(divide="ignore"):
            return np.where(d <= 0, top, (np.float32(1) / root).astype(np.float32)).astype(np.float32)
    return f


def rsqrt_int8_reference(x: np.ndarray, d: RsqrtInt8Data) -> np.ndarray:
    v = x.astype(np.int64) - d.input_zero_point
    out = np.empty(v.shape, np.int64)
    flat, res = v.reshape(-1), out.reshape(-1)
    for i, value in enumerate(flat.tolist()):
        if value == 0:
            res[i] = 127
            continue
        m, s = quant.inv_sqrt_quantized_multiplier_exp(max(value, 0), -1)
        data = quant.multiply_by_quantized_multiplier(1, m, s + 20)
        # x86 arithmetic for absurd scales: a left shift of 32 or more counts modulo 32, int32 wraps
        res[i] = quant.wrap_bits(int(quant.multiply_by_quantized_multiplier_x86_array(
            data, d.output_multiplier, d.output_shift - 20)) + d.output_zero_point, 32)
    return clamp_to(out, I8)


def reference(x: np.ndarray) -> np.ndarray:
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
        root = np.float32(quant.libm_apply("sqrtf", [in_s])[0])
        with np.errstate(over="ignore", under="ignore"):
            denominator = float(np.float32(root * np.float32(out_s)))
        real = 1.0 / denominator if denominator else float("inf")
        m, s = quant.quantize_multiplier_x86(real)          # an infinite real (absurd scales) is (0, 0)
        return RsqrtInt8Data(context.shape(x), in_zp, out_zp, real, m, s)

    def reference_quantized(self, x, d):
        if type(d) is RsqrtInt8Data:
            return rsqrt_int8_reference(x, d)
        return lut_reference(x, d, rsqrt_int16_transform(d.output_scale))

    def invoke(self, context, node, d):
        if getattr(d, "table", None) is not None:
            check_non_negative(node, context.tensors[node.inputs[0]], d.input_zero_point, "Rsqrt")
        if invoke_quantized(self, context, node, d):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])

    def invoke_reference(self, context, node, d):
        if getattr(d, "table", None) is not None:
            check_non_negative(node, context.tensors[node.inputs[0]], d.input_zero_point, "Rsqrt")
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
