"""DIV: a / b with numpy broadcasting and a fused activation — float32 (v1; v2 when the inputs
differ in shape beyond rank 4), and quantized uint8, int8 and int16 (v1).

Quantized (``div.cc``): a divisor equal to its zero point (a real 0) stops litert ("data[i] !=
zero_point was not true"), and this kernel raises :class:`~workbench.errors.KernelError`.  float32: x/0 is ±inf and
0/0 nan, silently as in TFLite (no numpy RuntimeWarning).
output_multiplier / output_shift come from s1 / (s2·s_out) (float32 arithmetic).

Per element (``DivElementwise``, for every type and with or without broadcasting): a = x − zp1,
b = y − zp2 (both negated when b < 0); 1/b = ``GetReciprocal(b, 31)`` (Q0.31, times
2^-recip_shift); headroom = CountLeadingSignBits(a); q = SRDHM(a·2^headroom, 1/b) (the quotient,
unscaled); out = RoundingDivideByPOT(SRDHM(q, output_multiplier), recip_shift + headroom −
output_shift) + out_zp, clamped to the activation range.  For a small |a| the shift exceeds 31,
which is undefined behaviour in C; litert's x86 build then shifts by the count modulo 32 with a
32-bit mask, and so does this kernel (:func:`quant.rounding_divide_by_pot_x86`) — such outputs can
be far from the real quotient (e.g. 255 for 0.05).  (Newer TFLite sources compute int16 without
broadcasting in float instead; the litert tested here uses the fixed-point path.)

Both builds of TFLite compute the same bits here (no variant).  The speed layer: ``fast/binary.py``.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import OpData, kernel, opdata
from ._binary import BinaryData, BinaryKernel, float_binary
from ._common import F32, I8, I16, U8, activation_name
from ._elementwise import fail
from ._unary import TYPE_RANGE


@opdata
class DivQuantizedData(OpData):
    output_shape: tuple
    broadcast: bool
    activation: str
    dtype: str
    input1_offset: int
    input2_offset: int
    output_offset: int
    output_activation_min: int
    output_activation_max: int
    real_multiplier: float          # s1 / (s2 · s_out), float32
    output_multiplier: int
    output_shift: int
    input1_scale: float
    input2_scale: float
    output_scale: float


def div_quantized(a, b, d) -> np.ndarray:
    """``reference_ops::Div`` / ``BroadcastDivSlow`` on uint8 / int8 / int16 (``DivElementwise`` per
    element) on broadcastable arrays; the divisor must not be its zero point."""
    x = np.asarray(a).astype(np.int64) + d.input1_offset
    y = np.asarray(b).astype(np.int64) + d.input2_offset
    x, y = np.broadcast_arrays(x, y)
    neg = y < 0
    x = np.where(neg, -x, x)
    y = np.where(neg, -y, np.where(y == 0, 1, y))
    inv, recip_shift = quant.get_reciprocal(y, 31)
    headroom = quant.count_leading_sign_bits32(x)
    unscaled = quant.srdhm_array(quant.wrap_bits(x << headroom, 32), inv)
    total = d.output_shift - recip_shift - headroom
    v = quant.rounding_divide_by_pot_x86(quant.srdhm_array(unscaled, d.output_multiplier), -total)
    return np.clip(v + d.output_offset, d.output_activation_min, d.output_activation_max).astype(d.dtype)


def check_divisor(node, b: np.ndarray, zero_point: int) -> None:
    if (b == zero_point).any():
        fail(node, f"a divisor equals its zero point {zero_point} (a division by 0); TFLite stops too")


@kernel(BuiltinOperator.DIV, versions=(1, 2))
class Div(BinaryKernel):
    name = "div"
    ufunc = np.divide
    dtypes = (F32,)
    qtypes = (U8, I8, I16)

    def prepare(self, context, node):
        a, b, y = node.inputs[0], node.inputs[1], node.outputs[0]
        dt = context.dtype(a)
        if dt not in (U8, I8, I16):
            return super().prepare(context, node)
        if context.dtype(b) != dt or context.dtype(y) != dt:
            raise UnsupportedOpError(f"DIV (node {node.index}): quantized DIV needs equal input and output types, "
                                     f"got {dt}, {context.dtype(b)} → {context.dtype(y)}")
        sa, sb = context.shape(a), context.shape(b)
        try:
            out = tuple(np.broadcast_shapes(sa, sb))
        except ValueError:
            raise UnsupportedOpError(f"DIV (node {node.index}): shapes {list(sa)} and {list(sb)} do not "
                                     f"broadcast") from None
        s1, z1 = quant.tensor_scale_zp(context, a)
        s2, z2 = quant.tensor_scale_zp(context, b)
        so, zo = quant.tensor_scale_zp(context, y)
        code = node.params.get("fused_activation_function", 0)
        lo, hi = quant.activation_range_quantized(code, so, zo, *TYPE_RANGE[dt])
        real = float(np.float32(s1) / np.float32(np.float32(s2) * np.float32(so)))
        m, sh = quant.quantize_multiplier(real)
        context.set_output(y, out, dt)
        return DivQuantizedData(out, sa != sb, activation_name(code), str(dt), -z1, -z2, zo, lo, hi, real, m, sh,
                                s1, s2, so)

    def invoke(self, context, node, d):
        t = context.tensors
        a, b, out = t[node.inputs[0]], t[node.inputs[1]], t[node.outputs[0]]
        if type(d) is BinaryData:
            float_binary(np.divide, a, b, d, out)       # x/0 = ±inf and 0/0 = nan, silently as in TFLite
            return
        check_divisor(node, b, -d.input2_offset)
        out[...] = div_quantized(a, b, d)
