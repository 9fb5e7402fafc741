"""ABS: |x| — float32 (v1), int8 (v2), int16 quantized (v3, zero points 0), int16 plain (v4),
int32 (v5; INT32_MIN stays INT32_MIN, as in C).  TFLite has no uint8 ABS.

Quantized (``elementwise.cc`` AbsEvalQuantized, the same in both builds): v = |x − in_zp|; when
the scales are equal (float compare) out = v + out_zp, otherwise out = MBQM(v, output_multiplier,
output_shift) + out_zp with the multiplier from in_scale/out_scale (float32 division); clamped to
the type.  An int16 tensor without quantization parameters is plain integer data: |x| wraps like C
(|−32768| = −32768).  The speed layer: ``fast/unary.py``."""

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import OpData, kernel, opdata
from ._common import F32, I8, I16, I32
from ._unary import UnaryKernel, clamp_to, require_zero_points


@opdata
class AbsData(OpData):
    shape: tuple
    dtype: str
    quantized: bool
    input_zero_point: int = 0
    output_zero_point: int = 0
    needs_rescale: bool = False
    output_multiplier: int = 0
    output_shift: int = 0


def abs_plain(x: np.ndarray) -> np.ndarray:
    """``std::abs`` per element (float32, int32, plain int16: integers wrap like C)."""
    return np.asarray(np.abs(x), dtype=x.dtype)


def abs_quantized(x: np.ndarray, d: AbsData) -> np.ndarray:
    """AbsEvalQuantized: |x − in_zp|, rescaled unless the scales are equal, + out_zp, clamped."""
    if not d.quantized:
        return abs_plain(x)
    v = np.abs(x.astype(np.int64) - d.input_zero_point)
    if d.needs_rescale:
        v = quant.multiply_by_quantized_multiplier_array(v, d.output_multiplier, d.output_shift)
    return clamp_to(v + d.output_zero_point, d.dtype)


def has_scale(context, t: int) -> bool:
    """TFLite treats a tensor as quantized when its quantization has at least one scale."""
    q = context.tensor_meta(t).quantization
    return q is not None and len(tuple(q.scale or ())) > 0


@kernel(BuiltinOperator.ABS, versions=(1, 2, 3, 4, 5))
class Abs(UnaryKernel):
    name = "abs"
    dtypes = (F32, I32)
    qtypes = (I8, I16)

    def prepare_quantized(self, context, node, dt):
        x, y = node.inputs[0], node.outputs[0]
        if dt == I16 and not has_scale(context, x):
            return AbsData(context.shape(x), str(dt), False)
        in_s, in_zp = quant.tensor_scale_zp(context, x)
        out_s, out_zp = quant.tensor_scale_zp(context, y)
        if dt == I16:
            require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
        rescale = np.float32(in_s) != np.float32(out_s)
        m, s = quant.quantize_multiplier(float(np.float32(in_s) / np.float32(out_s))) if rescale else (0, 0)
        return AbsData(context.shape(x), str(dt), True, in_zp, out_zp, bool(rescale), m, s)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = abs_quantized(x, d) if type(d) is AbsData else abs_plain(x)
