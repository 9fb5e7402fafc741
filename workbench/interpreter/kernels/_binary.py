"""What ADD, SUB, MUL and DIV share: numpy broadcasting, then the fused activation clamp.

int8 ADD / SUB (TFLITE_FACTS §4.6): both inputs are moved to a common fixed-point scale with
``left_shift`` = 20 and per-input multipliers (real = s_i / (2·max(s1, s2))), added (or subtracted),
then requantized to the output (real = 2·max(s1, s2) / (2^20 · s_out)), + output zero point, clamped.
int8 MUL (§4.7): (x − zp1)·(y − zp2) requantized with real = s1·s2/s_out computed in float32.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import Kernel, OpData, opdata
from .. import quant
from ._common import F32, activation_name, activation_range, apply_activation

I8 = np.dtype(np.int8)


@opdata
class BinaryInt8Data(OpData):
    output_shape: tuple
    broadcast: bool
    activation: str
    input1_offset: int             # −input1 zero point
    input2_offset: int
    output_offset: int             # +output zero point
    output_activation_min: int
    output_activation_max: int
    left_shift: int = 0            # ADD / SUB: 20
    input1_multiplier: int = 0
    input1_shift: int = 0
    input2_multiplier: int = 0
    input2_shift: int = 0
    output_multiplier: int = 0
    output_shift: int = 0
    real_input1_multiplier: float = 0.0
    real_input2_multiplier: float = 0.0
    real_output_multiplier: float = 0.0


def add_sub_int8(a, b, d, sign: int) -> np.ndarray:
    """Elementwise int8 ADD (sign +1) or SUB (sign −1), exactly as reference_integer_ops::Add."""
    mb = quant.multiply_by_quantized_multiplier_array
    x = (a.astype(np.int64) + d.input1_offset) << d.left_shift
    y = (b.astype(np.int64) + d.input2_offset) << d.left_shift
    sx = mb(x, d.input1_multiplier, d.input1_shift)
    sy = mb(y, d.input2_multiplier, d.input2_shift)
    raw = mb(sx + sign * sy, d.output_multiplier, d.output_shift) + d.output_offset
    return np.clip(raw, d.output_activation_min, d.output_activation_max).astype(np.int8)


def mul_int8(a, b, d) -> np.ndarray:
    prod = (a.astype(np.int64) + d.input1_offset) * (b.astype(np.int64) + d.input2_offset)
    raw = quant.multiply_by_quantized_multiplier_array(prod, d.output_multiplier, d.output_shift) + d.output_offset
    return np.clip(raw, d.output_activation_min, d.output_activation_max).astype(np.int8)


def prepare_int8(kernel, context, node, out, sa, sb) -> BinaryInt8Data:
    a, b, y = node.inputs[0], node.inputs[1], node.outputs[0]
    s1, z1 = quant.tensor_scale_zp(context, a)
    s2, z2 = quant.tensor_scale_zp(context, b)
    so, zo = quant.tensor_scale_zp(context, y)
    code = node.params.get("fused_activation_function", 0)
    lo, hi = quant.activation_range_quantized(code, so, zo)
    context.set_output(y, out, I8)
    common = dict(output_shape=out, broadcast=sa != sb, activation=activation_name(code), input1_offset=-z1,
                  input2_offset=-z2, output_offset=zo, output_activation_min=lo, output_activation_max=hi)
    if kernel.int8_kind == "mul":
        real = float(np.float32(np.float32(s1) * np.float32(s2)) / np.float32(so))   # float32, then widened
        m, sh = quant.quantize_multiplier(real)
        return BinaryInt8Data(**common, output_multiplier=m, output_shift=sh, real_output_multiplier=real)
    left = 20
    twice_max = float(2 * max(np.float32(s1), np.float32(s2)))
    r1 = float(np.float32(s1)) / twice_max
    r2 = float(np.float32(s2)) / twice_max
    ro = twice_max / float(np.float32((1 << left) * np.float32(so)))
    m1, sh1 = quant.quantize_multiplier_smaller_than_one_exp(r1)
    m2, sh2 = quant.quantize_multiplier_smaller_than_one_exp(r2)
    mo, sho = quant.quantize_multiplier(ro)
    return BinaryInt8Data(**common, left_shift=left, input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2,
                          input2_shift=sh2, output_multiplier=mo, output_shift=sho, real_input1_multiplier=r1,
                          real_input2_multiplier=r2, real_output_multiplier=ro)


@opdata
class BinaryData(OpData):
    output_shape: tuple
    broadcast: bool
    activation: str
    output_activation_min: float
    output_activation_max: float


class BinaryKernel(Kernel):
    """Subclasses set ``ufunc`` (np.add, ...) and ``dtypes``."""

    ufunc = None
    dtypes = (F32,)
    int8_kind = None     # "add" | "sub" | "mul": the kernel also takes int8

    def prepare(self, context, node):
        a, b = node.inputs[0], node.inputs[1]
        dt = context.expect_dtype(node, a, self.dtypes + ((I8,) if self.int8_kind else ()), "input 0")
        if context.dtype(b) != dt:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): inputs have types {dt} and "
                                     f"{context.dtype(b)}")
        sa, sb = context.shape(a), context.shape(b)
        try:
            out = tuple(np.broadcast_shapes(sa, sb))
        except ValueError:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): shapes {list(sa)} and {list(sb)} do "
                                     f"not broadcast") from None
        if dt == I8:
            return prepare_int8(self, context, node, out, sa, sb)
        code = node.params.get("fused_activation_function", 0)
        lo, hi = activation_range(code)
        if dt != F32 and code in (1, 2, 3):
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): fused activation on {dt} is not "
                                     f"implemented")
        context.set_output(node.outputs[0], out, dt)
        return BinaryData(out, sa != sb, activation_name(code), lo, hi)

    def invoke(self, context, node, d):
        t = context.tensors
        out = t[node.outputs[0]]
        if type(d) is BinaryInt8Data:
            a, b = t[node.inputs[0]], t[node.inputs[1]]
            if self.int8_kind == "mul":
                out[...] = mul_int8(a, b, d)
            else:
                out[...] = add_sub_int8(a, b, d, 1 if self.int8_kind == "add" else -1)
            return
        self.ufunc(t[node.inputs[0]], t[node.inputs[1]], out=out)
        apply_activation(out, d.output_activation_min, d.output_activation_max)
