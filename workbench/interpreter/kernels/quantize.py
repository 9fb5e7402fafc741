"""QUANTIZE: float32 → int8 (version 1), or int8 → int8 with new scale / zero point (requantize).

float → int8: TFLite's reference kernel computes round_half_away(x / scale) + zero_point
(TFLITE_FACTS §4.11), but what litert runs on x86 is the optimized ``AffineQuantize``: its NEON code
(compiled for SSE through NEON_2_SSE) takes 8 values at a time and computes
round_half_to_EVEN(x * (1/scale)) in float32; the last ``size % 8`` values go through a scalar tail
loop that divides in double and rounds half away from zero.  This kernel reproduces both parts
(``vector_rounding`` in the OpData says so) and the test suite checks it against litert.
int8 → int8 (``quantize.cc`` Requantize): effective_scale = (double)in_scale / (double)out_scale,
    (output_multiplier, output_shift) = quantize_multiplier(effective_scale),
    q = clamp(MBQM(x − input_zero_point, output_multiplier, output_shift) + output_zero_point).
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32

I8 = np.dtype(np.int8)


@opdata
class QuantizeData(OpData):
    mode: str                     # "float32→int8" | "int8→int8"
    output_scale: float
    output_zero_point: int
    input_scale: float = 0.0
    input_zero_point: int = 0
    effective_scale: float = 0.0
    output_multiplier: int = 0
    output_shift: int = 0


def reference(x, d) -> np.ndarray:
    if d.mode == "float32→int8":
        flat = np.asarray(x, np.float32).reshape(-1)
        n_vec = flat.size // 8 * 8
        inv = np.float32(1.0) / np.float32(d.output_scale)
        q = np.empty(flat.size, np.float64)
        q[:n_vec] = np.rint(flat[:n_vec] * inv)                      # 8-wide: ×(1/scale), ties to even
        q[n_vec:] = quant.round_half_away(flat[n_vec:].astype(np.float64) / np.float64(np.float32(d.output_scale)))
        q += d.output_zero_point
        return np.clip(q, -128, 127).astype(np.int8).reshape(np.shape(x))
    v = quant.multiply_by_quantized_multiplier_array(x.astype(np.int64) - d.input_zero_point, d.output_multiplier,
                                                     d.output_shift) + d.output_zero_point
    return np.clip(v, -128, 127).astype(np.int8)


@kernel(BuiltinOperator.QUANTIZE, versions=(1, 2))
class Quantize(Kernel):
    name = "quantize"

    def prepare(self, context, node):
        x_t, y_t = node.inputs[0], node.outputs[0]
        dt = context.expect_dtype(node, x_t, (F32, I8), "input")
        if context.dtype(y_t) != I8:
            raise UnsupportedOpError(f"QUANTIZE (node {node.index}): output type {context.dtype(y_t)}; this kernel "
                                     f"produces int8")
        scales, _, _ = quant.quant_params(context, y_t)
        if len(scales) != 1:
            raise UnsupportedOpError(f"QUANTIZE (node {node.index}): per-channel output quantization is not "
                                     f"implemented")
        out_s, out_zp = quant.tensor_scale_zp(context, y_t)
        context.set_output(y_t, context.shape(x_t), I8)
        if dt == F32:
            return QuantizeData("float32→int8", out_s, out_zp)
        in_s, in_zp = quant.tensor_scale_zp(context, x_t)
        eff = float(np.float64(np.float32(in_s)) / np.float64(np.float32(out_s)))
        m, s = quant.quantize_multiplier(eff)
        return QuantizeData("int8→int8", out_s, out_zp, in_s, in_zp, eff, m, s)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = reference(x, d)
