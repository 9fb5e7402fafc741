"""QUANTIZE: float32 → uint8 / int8 (v1) / int16 (v2), per tensor or per channel (v3); and
requantization between integer types: int8 → int8 / uint8, uint8 → uint8 / int8 (v1),
int16 → int8 (v1), int16 → int16 (v2, zero points 0), int16 → int32, int32 → int8 / int16
(the pairs ``quantize.cc`` accepts; int4 outputs (v4) are not implemented).

float → integer (``reference_ops::AffineQuantize``, ``PerChannelQuantize``): round_half_away(x / scale)
+ zero_point with a float32 division (per channel: scale[c], zero_point[c] along ``quantized_dimension``),
clamped to the type (``reference/quantize.h``).  The rounded value becomes an int32 BEFORE the zero point is
added, and x86 turns NaN, ±inf and anything outside int32 into INT32_MIN (cvtps2dq / cvttsd2si's
"integer indefinite"); the zero point is then added with int32 wrap-around.  So NaN, ±inf and
|x / scale| ≥ 2^31 give the type's MINIMUM when the zero point is ≥ 0 and its MAXIMUM when it is < 0
(:func:`int32_then_add_zero_point`; measured in litert, both resolvers).

integer → integer (``reference_ops::Requantize``): effective_scale = (double)in_scale / (double)out_scale,
(output_multiplier, output_shift) = QuantizeMultiplier(effective_scale),
q = clamp(MultiplyByQuantizedMultiplier(x − input_zero_point) + output_zero_point), ties away.

Variant ``litert-x86``: the optimized kernels take blocks of values with NEON (NEON_2_SSE on x86).
Float per tensor (``Variant.quantize_block`` = 8): round_half_to_EVEN(x · (1/scale)) in float32 for the
blocks of 8, the last size % 8 values x / scale in double, ties away.  Between 8-bit types
(``Variant.requantize_block`` = 16): blocks of 16 whose final rounding shift sends ties UP (−2.5 → −2),
the tail ties away.  The speed layer: ``workbench/interpreter/fast/quantize.py``.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, I32, U8
from ._unary import require_zero_points

RANGE = {I8: (-128, 127), U8: (0, 255), I16: (-32768, 32767), I32: (quant.INT32_MIN, quant.INT32_MAX)}

# input type → the output types quantize.cc accepts
ALLOWED = {F32: (U8, I8, I16), I16: (I8, I16, I32), I32: (I8, I16), I8: (I8, U8), U8: (I8, U8)}


@opdata
class QuantizeData(OpData):
    mode: str                     # "float32→int8", "int16→int8", ...
    output_scale: object          # float, or float32 array (per channel)
    output_zero_point: object     # int, or int64 array (per channel)
    quantized_dimension: int = 0
    rounding: str = ""            # the rule, as the variant chose it (see ``block``)
    input_scale: float = 0.0
    input_zero_point: int = 0
    effective_scale: float = 0.0
    output_multiplier: int = 0
    output_shift: int = 0
    block: int = 0                # values per NEON block (variant litert-x86); 0: every value the reference way


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
def affine_quantize(x: np.ndarray, scale: float, zero_point: int, dtype, block: int = 0) -> np.ndarray:
    """``reference_ops::AffineQuantize``: round_half_away(x / scale) + zero point, float32 division.
    ``block`` > 0 (``Variant.quantize_block``): ``optimized_ops::AffineQuantize`` — the first
    ⌊size/block⌋·block values round_half_to_even(x · (1/scale)) in float32, the tail x / scale in double."""
    flat = np.asarray(x, np.float32).reshape(-1)
    s = np.float32(scale)
    n_vec = flat.size // block * block if block else 0
    q = np.empty(flat.size, np.float64)
    q[:n_vec] = np.rint(flat[:n_vec] * (np.float32(1.0) / s))         # the NEON blocks
    tail = flat[n_vec:]
    q[n_vec:] = quant.round_half_away(tail.astype(np.float64) / np.float64(s) if block else (tail / s))
    lo, hi = RANGE[np.dtype(dtype)]
    return np.clip(int32_then_add_zero_point(q, zero_point), lo, hi).astype(dtype).reshape(np.shape(x))


@np.errstate(over="ignore", invalid="ignore")
def per_channel_quantize(x: np.ndarray, scales, zero_points, axis: int, dtype) -> np.ndarray:
    """``reference_ops::PerChannelQuantize``: round_half_away(x / scale[c]) + zero_point[c] (both builds)."""
    lo, hi = RANGE[np.dtype(dtype)]
    shape = [1] * x.ndim
    shape[axis] = -1
    s = np.asarray(scales, np.float32).reshape(shape)
    z = np.asarray(zero_points, np.int64).reshape(shape)
    q = quant.round_half_away((np.asarray(x, np.float32) / s).astype(np.float32))
    return np.clip(int32_then_add_zero_point(q, z), lo, hi).astype(dtype)


def requantize(x: np.ndarray, d: QuantizeData, half_up: bool = False) -> np.ndarray:
    """``reference_ops::Requantize`` per value (``half_up``: the NEON loop's final shift, ties up)."""
    lo, hi = RANGE[_split(d.mode)[1]]
    v = quant.multiply_by_quantized_multiplier_array(np.asarray(x).astype(np.int64) - d.input_zero_point,
                                                     d.output_multiplier, d.output_shift, half_up)
    return np.clip(v + d.output_zero_point, lo, hi).astype(_split(d.mode)[1])


def requantize_blocks(x: np.ndarray, d: QuantizeData) -> np.ndarray:
    """Requantize with ``d.block`` (``Variant.requantize_block``): ``optimized_ops::Requantize``'s NEON
    blocks round ties up, the scalar tail ties away; 0: the reference everywhere."""
    flat = np.asarray(x).reshape(-1)
    out = requantize(flat, d)
    n_vec = flat.size // d.block * d.block if d.block else 0
    out[:n_vec] = requantize(flat[:n_vec], d, half_up=True)
    return out.reshape(np.shape(x))


def quantize(x, d: QuantizeData) -> np.ndarray:
    """QUANTIZE by ``d.mode``: integer input → requantized; float → per channel or per tensor."""
    src, dst = _split(d.mode)
    if src != F32:
        return requantize_blocks(x, d)
    if np.ndim(d.output_scale) > 0:
        return per_channel_quantize(x, d.output_scale, d.output_zero_point, d.quantized_dimension, dst)
    return affine_quantize(x, d.output_scale, d.output_zero_point, dst, d.block)


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
            return QuantizeData(mode, scales.astype(np.float32), z.astype(np.int64), axis, "÷scale[c], ties away")
        out_s, out_zp = float(scales[0]), int(zps[0])
        if dt == F32:
            block = context.variant.quantize_block
            rounding = (f"{block}-wide ×(1/scale) ties to even, scalar tail ÷scale ties away" if block else
                        "÷scale, ties away")
            return QuantizeData(mode, out_s, out_zp, axis, rounding, block=block)
        in_s, in_zp = quant.tensor_scale_zp(context, x_t)
        if dt == I16 and out_dt == I16:
            require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
        eff = float(np.float64(np.float32(in_s)) / np.float64(np.float32(out_s)))
        m, s = quant.quantize_multiplier(eff)
        block = context.variant.requantize_block if dt.itemsize == 1 and out_dt.itemsize == 1 else 0
        rounding = f"{block}-wide blocks ties up, scalar tail ties away" if block else "ties away"
        return QuantizeData(mode, out_s, out_zp, axis, rounding, in_s, in_zp, eff, m, s, block)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = quantize(context.tensors[node.inputs[0]], d)
