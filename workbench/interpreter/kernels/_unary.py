"""What the elementwise activations share: same shape and dtype out, no options.

int8 LOGISTIC / TANH (version 2) are a 256-entry lookup table built in prepare
(:func:`workbench.interpreter.quant.lut_int8`, TFLITE_FACTS §4.10); int8 RELU / RELU6 requantize
with input_scale/output_scale and clamp (``activations.cc`` QuantizedReluX).
"""

from __future__ import annotations

from ..registry import Kernel, OpData, opdata
import numpy as np

from .. import quant
from ._common import F32

I8 = np.dtype(np.int8)


@opdata
class LutInt8Data(OpData):
    shape: tuple
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    table: object                  # int8 [256], indexed by the input byte read as uint8


@opdata
class ReluInt8Data(OpData):
    shape: tuple
    input_zero_point: int
    output_zero_point: int
    effective_scale: float         # input_scale / output_scale (double)
    output_multiplier: int
    output_shift: int
    output_activation_min: int
    output_activation_max: int


@opdata
class UnaryData(OpData):
    shape: tuple


class UnaryKernel(Kernel):
    dtypes = (F32,)
    lut = None            # LOGISTIC / TANH: float32 transform for the int8 table
    relu_range = None     # RELU / RELU6: (act_min, act_max) in real numbers for int8

    def prepare(self, context, node):
        x = node.inputs[0]
        int8_ok = self.lut is not None or self.relu_range is not None
        dt = context.expect_dtype(node, x, self.dtypes + ((I8,) if int8_ok else ()))
        if dt == I8:
            y = node.outputs[0]
            in_s, in_zp = quant.tensor_scale_zp(context, x)
            out_s, out_zp = quant.tensor_scale_zp(context, y)
            context.set_output(y, context.shape(x), I8)
            if self.lut is not None:
                table = quant.lut_int8(in_s, in_zp, out_s, out_zp, type(self).lut)
                return LutInt8Data(context.shape(x), in_s, in_zp, out_s, out_zp, table)
            lo_r, hi_r = self.relu_range
            lo = max(-128, out_zp + int(quant.round_half_away(np.float32(lo_r) / np.float32(out_s))))
            hi = 127 if hi_r is None else min(127, out_zp + int(quant.round_half_away(np.float32(hi_r) /
                                                                                      np.float32(out_s))))
            eff = float(np.float64(np.float32(in_s)) / np.float64(np.float32(out_s)))
            m, sh = quant.quantize_multiplier(eff)
            return ReluInt8Data(context.shape(x), in_zp, out_zp, eff, m, sh, lo, hi)
        context.set_output(node.outputs[0], context.shape(x), dt)
        return UnaryData(context.shape(x))


def invoke_int8(context, node, d) -> bool:
    """Run the int8 variant if ``d`` is one; returns True when it did."""
    if type(d) is LutInt8Data:
        x = context.tensors[node.inputs[0]]
        np.take(d.table, x.view(np.uint8), out=context.tensors[node.outputs[0]])
        return True
    if type(d) is ReluInt8Data:
        context.tensors[node.outputs[0]][...] = relu_int8(context.tensors[node.inputs[0]], d)
        return True
    return False


def relu_int8(x, d) -> np.ndarray:
    v = quant.multiply_by_quantized_multiplier_array(x.astype(np.int64) - d.input_zero_point, d.output_multiplier,
                                                     d.output_shift) + d.output_zero_point
    return np.clip(v, d.output_activation_min, d.output_activation_max).astype(np.int8)
