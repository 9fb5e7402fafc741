"""LEAKY_RELU: x if x > 0 else alpha * x — float32, uint8 and int8 (v1), int16 (v2, zero points 0).

``alpha`` comes from LeakyReluOptions (0 when the table is absent).  Both builds compute the same
bits (a comparison, one product, and for integers the reference requantization): no variant.

Quantized (``activations.cc`` LeakyReluPrepare, ``reference_ops::QuantizeLeakyRelu``): two
multipliers, both float32 products turned into (multiplier, shift) by QuantizeMultiplier —
identity = in_scale/out_scale and alpha = in_scale·alpha/out_scale.  Per element v = x − in_zp:
out = out_zp + MBQM(v, identity) for v >= 0, out_zp ± MBQM(v, |alpha|) otherwise (the sign of a
negative alpha applied after the multiplication), clamped to the type.  A NaN or infinite alpha
(measured on ai-edge-litert 2.3.0, which accepts it) makes the alpha multiplier NaN / ±inf, which
QuantizeMultiplier on x86 turns into (0, 0): every negative input gives the output zero point
(tests/interpreter/quant/test_quantized_edge_parameters.py).

Absurd scales (1e30 and more, 1e-30 and less): a multiplier of 2^31 or more makes TFLite shift an
int32 left by 32 or more, and an infinite one goes through QuantizeMultiplier's undefined
conversions.  litert's x86 build (measured on 2.3.0, every value of uint8 / int8 / int16, scales
from 1e-45 to 3e38, both signs of alpha) takes the shift count modulo 32 and makes an infinite
multiplier (0, 0); the additions are int32 arithmetic.  This kernel does the same
(:func:`quant.quantize_multiplier_x86`, :func:`quant.multiply_by_quantized_multiplier_x86_array`).

The speed layer (``workbench/interpreter/fast/activations.py``) reads quantized inputs from a table
of every input value.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, U8
from ._unary import check_same_type, clamp_to, require_zero_points


@opdata
class LeakyReluData(OpData):
    alpha: float


@opdata
class LeakyReluQuantizedData(OpData):
    """TFLM's ``LeakyReluOpData`` (uint8 / int8 / int16)."""

    shape: tuple
    dtype: str
    alpha: float
    input_zero_point: int
    output_zero_point: int
    output_multiplier_alpha: int
    output_shift_alpha: int
    output_multiplier_identity: int
    output_shift_identity: int


def leaky_relu_float(x: np.ndarray, alpha: float, out: np.ndarray) -> None:
    """``reference_ops::LeakyRelu`` into ``out``: x > 0 ? x : x·alpha."""
    with np.errstate(over="ignore", invalid="ignore"):
        np.multiply(x, np.float32(alpha), out=out)
    np.copyto(out, x, where=x > 0)


def leaky_relu_quantized(x: np.ndarray, d: LeakyReluQuantizedData) -> np.ndarray:
    """``reference_ops::QuantizeLeakyRelu`` (shift counts above 31 taken modulo 32, as x86 runs them)."""
    v = x.astype(np.int64) - d.input_zero_point
    mbqm = quant.multiply_by_quantized_multiplier_x86_array
    ident = mbqm(v, d.output_multiplier_identity, d.output_shift_identity)
    scaled = mbqm(v, abs(d.output_multiplier_alpha), d.output_shift_alpha)
    if d.output_multiplier_alpha < 0:
        scaled = -scaled
    return clamp_to(quant.wrap_bits(d.output_zero_point + np.where(v >= 0, ident, scaled), 32), d.dtype)


@kernel(BuiltinOperator.LEAKY_RELU, versions=(1, 2))
class LeakyRelu(Kernel):
    name = "leaky_relu"

    def prepare(self, context, node):
        x, y = node.inputs[0], node.outputs[0]
        dt = context.expect_dtype(node, x, (F32, U8, I8, I16))
        shape = context.shape(x)
        if dt == F32:
            context.set_output(y, shape, F32)
            return LeakyReluData(float(node.params["alpha"]))
        check_same_type(context, node, dt)
        in_s, in_zp = quant.tensor_scale_zp(context, x)
        out_s, out_zp = quant.tensor_scale_zp(context, y)
        if dt == I16:
            require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            alpha = np.float32(node.params["alpha"])            # TFLite keeps it as a float
            real_alpha = float(np.float32(np.float32(np.float32(in_s) * alpha) / np.float32(out_s)))
            real_identity = float(np.float32(in_s) / np.float32(out_s))
        # absurd scales: QuantizeMultiplier and the shifts as litert's x86 build computes them
        # (an infinite multiplier is (0, 0), shifts above 31 count modulo 32)
        ma, sa = quant.quantize_multiplier_x86(real_alpha)
        mi, si = quant.quantize_multiplier_x86(real_identity)
        context.set_output(y, shape, dt)
        return LeakyReluQuantizedData(shape, str(dt), float(alpha), in_zp, out_zp, ma, sa, mi, si)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        if type(d) is LeakyReluQuantizedData:
            context.tensors[node.outputs[0]][...] = leaky_relu_quantized(x, d)
        else:
            leaky_relu_float(x, d.alpha, context.tensors[node.outputs[0]])
