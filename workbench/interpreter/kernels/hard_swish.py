"""HARD_SWISH: x · min(6, max(0, x + 3)) / 6 — float32, uint8 and int8 (all version 1).

uint8 / int8 (``activations.cc`` HardSwishPrepare, ``reference_ops::HardSwish``; litert's x86 build
gives the reference results for every element, so there is no variant): a 16-bit fixed-point
kernel.  The input is moved to a "hi-res" scale (·2^7), multiplied by an int16 output multiplier,
and by a "relu-ish" factor in [0, 1] (x rescaled so that 3.0 ↦ 32768, saturated, mapped to
[0, 1]); then shifted to the output scale and moved by the output zero point.

Absurd scales, as litert's x86 build computes them (measured on 2.3.0, every uint8 / int8 value,
scales from 1e-45 to 3e38): an infinite multiplier is (0, 0) (QuantizeMultiplier's undefined
conversions), so the output is the zero point; ``SaturatingLeftShift`` by 31 multiplies by
1 << 31 = INT32_MIN and by 32 or more by 0; gemmlowp's int16 ``RoundingDivideByPOT`` by 16 or
more gives ±1 (:func:`quant.rounding_divide_by_pot_int16`); the output zero point is added in int16.
An output multiplier exponent above 0 is refused, as TFLite refuses it.

float32 — ``Variant.float_activations``: ``reference_ops::HardSwish`` computes x·relu6(x + 3) / 6;
litert's x86 build (``optimized_ops::HardSwish``) runs a 4-lane loop (x·(1/6))·relu6(x + 3), then
the last n mod 4 values as (x·relu6(x + 3))·(1/6) — three orders that round differently.

The speed layer: ``workbench/interpreter/fast/activations.py``.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, U8
from ._unary import UnaryData, check_same_type, clamp_to, split_packets

_SIXTH = np.float32(1.0 / 6.0)


@opdata
class HardSwishData(OpData):
    """``HardSwishParams`` (uint8 / int8)."""

    shape: tuple
    dtype: str
    input_zero_point: int
    output_zero_point: int
    output_multiplier_fixedpoint_int16: int
    output_multiplier_exponent: int
    reluish_multiplier_fixedpoint_int16: int
    reluish_multiplier_exponent: int


def _int16_multiplier(real: float) -> tuple[int, int]:
    """QuantizeMultiplier (x86: an infinite real gives (0, 0)), then DownScaleInt32ToInt16Multiplier:
    (m32 + 2^15) >> 16, saturating."""
    m, e = quant.quantize_multiplier_x86(real)
    if m >= 2 ** 31 - 1 - (1 << 15):
        return 32767, e
    return (m + (1 << 15)) >> 16, e


def _sat16(v):
    return np.clip(v, -32768, 32767)


def _saturating_left_shift16(v, amount: int):
    """``SaturatingLeftShift`` on int16: v·(1 << amount) in int64, saturated to int16.  ``1 << amount``
    is an int32: 1 << 31 is INT32_MIN, and litert's x86 build makes it 0 for counts of 32 and more
    (measured: absurd input scales give a relu-ish factor of exactly 1/2)."""
    amount = int(amount)
    factor = int(quant.wrap_bits(np.int64(1) << amount, 32)) if amount < 32 else 0
    return _sat16(np.asarray(v, np.int64) * factor)


def _srdhm16(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul on int16 (ties toward +inf, like the int32 one)."""
    p = a * b
    v = p + np.where(p >= 0, 1 << 14, 1 - (1 << 14))
    q = np.where(v >= 0, v >> 15, -((-v) >> 15))
    return np.where((a == -32768) & (b == -32768), 32767, q)


def hard_swish_quantized(x, d: HardSwishData) -> np.ndarray:
    """``reference_ops::HardSwish`` for uint8 / int8 (rounding shifts with ties away from zero, the
    final product divided by 2^15 truncating toward zero)."""
    v = x.astype(np.int64) - d.input_zero_point
    hires = v * (1 << 7)
    pre_out = _srdhm16(hires, d.output_multiplier_fixedpoint_int16)
    rel = hires
    e = d.reluish_multiplier_exponent
    if e > 0:
        rel = _saturating_left_shift16(rel, e - 1)
    rel = _srdhm16(rel, d.reluish_multiplier_fixedpoint_int16)
    if e > 0:
        rel = _sat16(rel * 2)
    if e < 0:
        rel = quant.rounding_divide_by_pot_int16(rel, -e)
    rel = (rel + (1 << 15)) >> 1
    p = rel * pre_out
    pre = np.where(p >= 0, p >> 15, -((-p) >> 15))       # C division: toward zero
    oe = -d.output_multiplier_exponent
    out = quant.rounding_divide_by_pot_int16(pre, oe) if oe > 0 else pre
    return clamp_to(quant.wrap_bits(out + d.output_zero_point, 16), d.dtype)     # an int16 addition


@np.errstate(all="ignore")        # float inf / NaN silently, as TFLite
def _relu6_plus3(x):
    return np.minimum(np.float32(6), np.maximum(np.float32(0), (x + np.float32(3)).astype(np.float32)))


@np.errstate(all="ignore")
def hard_swish_float(x) -> np.ndarray:
    """``reference_ops::HardSwish`` on float32: x·relu6(x + 3) / 6, left to right."""
    x = np.asarray(x, np.float32)
    return ((x * _relu6_plus3(x)).astype(np.float32) / np.float32(6)).astype(np.float32)


@np.errstate(all="ignore")
def hard_swish_lanes_f32(x) -> np.ndarray:
    """``optimized_ops::HardSwish``'s 4-lane loop: (x·(1/6))·relu6(x + 3)."""
    x = np.asarray(x, np.float32)
    return ((x * _SIXTH).astype(np.float32) * _relu6_plus3(x)).astype(np.float32)


@np.errstate(all="ignore")
def hard_swish_scalar_f32(x) -> np.ndarray:
    """``optimized_ops::HardSwish``'s one-value loop after the lanes: (x·relu6(x + 3))·(1/6)."""
    x = np.asarray(x, np.float32)
    return ((x * _relu6_plus3(x)).astype(np.float32) * _SIXTH).astype(np.float32)


def hard_swish_float_x86(x) -> np.ndarray:
    """``optimized_ops::HardSwish`` on float32: the lanes on the first 4·⌊n/4⌋ values, the rest one by one."""
    return split_packets(x, hard_swish_lanes_f32, hard_swish_scalar_f32)


@kernel(BuiltinOperator.HARD_SWISH, versions=(1,))
class HardSwish(Kernel):
    name = "hard_swish"

    def prepare(self, context, node):
        x, y = node.inputs[0], node.outputs[0]
        dt = context.expect_dtype(node, x, (F32, U8, I8))
        shape = context.shape(x)
        if dt == F32:
            context.set_output(y, shape, F32)
            return UnaryData(shape)
        check_same_type(context, node, dt)
        in_s, in_zp = quant.tensor_scale_zp(context, x)
        out_s, out_zp = quant.tensor_scale_zp(context, y)
        hires = np.float32(np.float32(1.0 / 128.0) * np.float32(in_s))
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            real_output = float(np.float32(hires / np.float32(out_s)))
            real_reluish = float(np.float32(hires / np.float32(3.0 / 32768.0)))
        om, oe = _int16_multiplier(real_output)
        if oe > 0:
            raise UnsupportedOpError(f"HARD_SWISH (node {node.index}): output multiplier exponent {oe} > 0 "
                                     f"(TFLite refuses it too)")
        rm, re = _int16_multiplier(real_reluish)
        context.set_output(y, shape, dt)
        return HardSwishData(shape, str(dt), in_zp, out_zp, om, oe, rm, re)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is HardSwishData:
            out[...] = hard_swish_quantized(x, d)
        elif context.variant.float_activations == "eigen":
            out[...] = hard_swish_float_x86(x)
        else:
            out[...] = hard_swish_float(x)
