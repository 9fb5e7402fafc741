"""QUANTIZE: float32 → uint8 / int8 (v1) / int16 (v2), per tensor or per channel (v3); and
requantization between integer types: int8 → int8 / uint8, uint8 → uint8 / int8 (v1),
int16 → int8 (v1), int16 → int16 (v2, zero points 0), int16 → int32, int32 → int8 / int16
(the pairs ``quantize.cc`` accepts; int4 outputs (v4) are not implemented).

float → integer, per tensor: TFLite's reference kernel computes round_half_away(x / scale) +
zero_point (TFLITE_FACTS §4.11), but what litert runs on x86 is the optimized ``AffineQuantize``:
its NEON code (compiled for SSE through NEON_2_SSE) takes 8 values at a time and computes
round_half_to_EVEN(x * (1/scale)) in float32; the last ``size % 8`` values go through a scalar tail
loop that divides in double and rounds half away from zero.  This kernel reproduces both parts for
every output type (``rounding`` in the OpData says so) and the tests check it against litert.

float → integer, per channel (``reference_ops::PerChannelQuantize``): round_half_away(x /
scale[c]) + zero_point[c] with a float32 division, c the index along ``quantized_dimension``.

Both float paths convert the rounded value to int32 BEFORE adding the zero point and clamping, and
x86 turns a NaN, ±inf or a value outside int32 into INT32_MIN (the "integer indefinite" of
cvtps2dq / cvttsd2si); the zero point is then added with int32 wrap-around.  So, measured in
litert for int8 / uint8 / int16, per tensor (vector blocks and tail alike) and per channel:
NaN, ±inf and |x / scale| >= 2^31 give the type's MINIMUM when the zero point is >= 0 and its
MAXIMUM when it is < 0 (INT32_MIN + zp wraps to a large positive number), and an in-range value
whose sum with the zero point leaves int32 wraps too (2147483392 + 256 → −32768 in int16).
:func:`int32_then_add_zero_point` does this.

integer → integer (``Requantize``): effective_scale = (double)in_scale / (double)out_scale,
(output_multiplier, output_shift) = quantize_multiplier(effective_scale),
q = clamp(MBQM(x − input_zero_point, output_multiplier, output_shift) + output_zero_point).
Between 8-bit types (int8/uint8 → int8/uint8) litert runs ``optimized_ops::Requantize``, whose NEON
loop (16 values at a time) ends MBQM with a rounding shift that sends ties UP (vrshl: −2.5 → −2),
while the scalar loop for the last ``size % 16`` values rounds ties away from zero (−2.5 → −3).
int16 and int32 inputs go through the reference loop (ties away) only.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32
from ._unary import I8, I16, U8, all_values, bit_pattern, require_zero_points

I32 = np.dtype(np.int32)
RANGE = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767), I32: (quant.INT32_MIN, quant.INT32_MAX)}

# input type → the output types quantize.cc accepts
ALLOWED = {F32: (U8, I8, I16), I16: (I8, I16, I32), I32: (I8, I16), I8: (I8, U8), U8: (I8, U8)}


@opdata
class QuantizeData(OpData):
    mode: str                     # "float32→int8", "int16→int8", ...
    output_scale: object          # float, or float32 array (per channel)
    output_zero_point: object     # int, or int64 array (per channel)
    quantized_dimension: int = 0
    rounding: str = ""            # float per tensor: "8-wide ×(1/scale) ties-to-even, tail ÷scale ties-away"
    input_scale: float = 0.0
    input_zero_point: int = 0
    effective_scale: float = 0.0
    output_multiplier: int = 0
    output_shift: int = 0
    table: object = dataclasses.field(default=None, repr=False)     # requantizing 8/16-bit inputs
    vector_table: object = dataclasses.field(default=None, repr=False)   # 8-bit → 8-bit: the 16-wide blocks


def _split(mode: str):
    src, dst = mode.split("→")
    return np.dtype(src), np.dtype(dst)


def int32_then_add_zero_point(r: np.ndarray, zero_point) -> np.ndarray:
    """Rounded values ``r`` (float) → int32 as x86 converts them (NaN, ±inf and anything outside
    [-2^31, 2^31) become INT32_MIN), plus the zero point with int32 wrap-around; int64 result."""
    ok = (r >= -2.0 ** 31) & (r < 2.0 ** 31)             # False for NaN
    i = np.where(ok, r, -2.0 ** 31).astype(np.int64) + zero_point
    return (i + 2 ** 31) % 2 ** 32 - 2 ** 31


@np.errstate(over="ignore", invalid="ignore")           # inf / nan inputs: no numpy RuntimeWarning
def affine_quantize(x: np.ndarray, scale: float, zero_point: int, dtype) -> np.ndarray:
    """litert's per-tensor float → integer quantization (8-wide vector part + scalar tail)."""
    lo, hi = RANGE[np.dtype(dtype)]
    flat = np.asarray(x, np.float32).reshape(-1)
    n_vec = flat.size // 8 * 8
    inv = np.float32(1.0) / np.float32(scale)
    q = np.empty(flat.size, np.float64)
    q[:n_vec] = np.rint(flat[:n_vec] * inv)                          # ×(1/scale) in float32, ties to even
    q[n_vec:] = quant.round_half_away(flat[n_vec:].astype(np.float64) / np.float64(np.float32(scale)))
    return np.clip(int32_then_add_zero_point(q, zero_point), lo, hi).astype(dtype).reshape(np.shape(x))


@np.errstate(over="ignore", invalid="ignore")
def per_channel_quantize(x: np.ndarray, scales, zero_points, axis: int, dtype) -> np.ndarray:
    lo, hi = RANGE[np.dtype(dtype)]
    shape = [1] * x.ndim
    shape[axis] = -1
    s = np.asarray(scales, np.float32).reshape(shape)
    z = np.asarray(zero_points, np.int64).reshape(shape)
    q = quant.round_half_away((np.asarray(x, np.float32) / s).astype(np.float32))
    return np.clip(int32_then_add_zero_point(q, z), lo, hi).astype(dtype)


def requantize(x: np.ndarray, d: QuantizeData, half_up: bool = False) -> np.ndarray:
    lo, hi = RANGE[_split(d.mode)[1]]
    v = quant.multiply_by_quantized_multiplier_array(x.astype(np.int64) - d.input_zero_point, d.output_multiplier,
                                                     d.output_shift, half_up) + d.output_zero_point
    return np.clip(v, lo, hi).astype(_split(d.mode)[1])


def vector_blocks(d: QuantizeData) -> bool:
    """True when litert requantizes in 16-wide NEON blocks (both types 8-bit)."""
    src, dst = _split(d.mode)
    return src.itemsize == 1 and dst.itemsize == 1


def requantize_litert(x: np.ndarray, d: QuantizeData) -> np.ndarray:
    """Requantize as litert does: ties up in the 16-wide blocks (8-bit → 8-bit), away in the tail."""
    flat = np.asarray(x).reshape(-1)
    out = requantize(flat, d)
    if vector_blocks(d):
        n_vec = flat.size // 16 * 16
        out[:n_vec] = requantize(flat[:n_vec], d, half_up=True)
    return out.reshape(np.shape(x))


def reference(x, d) -> np.ndarray:
    src, dst = _split(d.mode)
    if src == F32:
        if np.ndim(d.output_scale) > 0:
            return per_channel_quantize(x, d.output_scale, d.output_zero_point, d.quantized_dimension, dst)
        return affine_quantize(x, d.output_scale, d.output_zero_point, dst)
    return requantize_litert(x, d)


@kernel(BuiltinOperator.QUANTIZE, versions=(1, 2, 3))
class Quantize(Kernel):
    name = "quantize"

    def prepare(self, context, node):
        x_t, y_t = node.inputs[0], node.outputs[0]
        dt = context.expect_dtype(node, x_t, tuple(ALLOWED), "input")
        out_dt = context.dtype(y_t)
        if out_dt not in ALLOWED[dt]:
            raise UnsupportedOpError(f"QUANTIZE (node {node.index}): {dt} → {out_dt} is not a conversion TFLite's "
                                     f"kernel makes (from {dt} it makes "
                                     f"{', '.join(str(t) for t in ALLOWED[dt])})")
        scales, zps, axis = quant.quant_params(context, y_t)
        if len(scales) == 0:
            raise UnsupportedOpError(f"QUANTIZE (node {node.index}): output '{context.name(y_t)}' has no "
                                     f"quantization parameters")
        if not (scales > 0).all():
            raise UnsupportedOpError(f"QUANTIZE (node {node.index}): output scale {scales.tolist()[:4]} must be > 0")
        context.set_output(y_t, context.shape(x_t), out_dt)
        mode = f"{dt}→{out_dt}"
        if len(scales) > 1:
            shape = context.shape(x_t)
            if dt != F32:
                raise UnsupportedOpError(f"QUANTIZE (node {node.index}): per-channel output quantization needs a "
                                         f"float32 input (TFLite requantizes per tensor only)")
            if not 0 <= axis < len(shape) or shape[axis] != len(scales):
                raise UnsupportedOpError(f"QUANTIZE (node {node.index}): {len(scales)} output scales for axis "
                                         f"{axis} of an input of shape {list(shape)}")
            z = zps if len(zps) == len(scales) else np.full(len(scales), zps[0], np.int64)
            return QuantizeData(mode, scales.astype(np.float32), z.astype(np.int64), axis)
        out_s, out_zp = float(scales[0]), int(zps[0])
        if dt == F32:
            return QuantizeData(mode, out_s, out_zp, axis,
                                rounding="8-wide ×(1/scale) ties to even, scalar tail ÷scale ties away")
        in_s, in_zp = quant.tensor_scale_zp(context, x_t)
        if dt == I16 and out_dt == I16:
            require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
        eff = float(np.float64(np.float32(in_s)) / np.float64(np.float32(out_s)))
        m, s = quant.quantize_multiplier(eff)
        d = QuantizeData(mode, out_s, out_zp, axis, "", in_s, in_zp, eff, m, s)
        if vector_blocks(d):
            d = dataclasses.replace(d, rounding="16-wide blocks ties up, scalar tail ties away",
                                    vector_table=requantize(all_values(dt), d, half_up=True))
        else:
            d = dataclasses.replace(d, rounding="ties away")
        if dt in (I8, U8, I16):
            d = dataclasses.replace(d, table=requantize(all_values(dt), d))
        return d

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if d.table is not None:
            np.take(d.table, bit_pattern(x), out=out)
            if d.vector_table is not None:
                flat_in, flat_out = x.reshape(-1), out.reshape(-1)
                n_vec = flat_in.size // 16 * 16
                np.take(d.vector_table, bit_pattern(flat_in[:n_vec]), out=flat_out[:n_vec])
            return
        out[...] = reference(x, d)

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d)
