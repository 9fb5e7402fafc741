"""LOG: natural logarithm — float32 (v1; NaN below 0, -inf at 0), int8 and int16 (v2).

Quantized (``elementwise.cc`` LogLUTPrepare): a lookup table built in prepare — 256 entries for
int8, 513 interpolated entries for int16 (zero points 0) — of value <= 0 ? output_min : logf(value), where
output_min = (type_min − output_zero_point)·output_scale, the smallest output (float32).

float32: ``std::log`` per element, the C library's logf (numpy's float32 log differs in the last
bit).  Fast path: a numba loop on ``math.log`` (which calls logf); reference: ctypes calls."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from .. import quant
from ._common import F32
from ._unary import (I8, I16, TYPE_RANGE, UnaryKernel, invoke_quantized, libm_f32, lut_reference, prepare_lut,
                     require_zero_points, run_float_unary)


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def log_transform(dtype, output_scale: float, output_zero_point: int):
    """The float32 function LogLUTPrepare tabulates for this output quantization."""
    output_min = np.float32(np.float32(TYPE_RANGE[np.dtype(dtype)][0] - int(output_zero_point)) *
                            np.float32(output_scale))

    def f(d):
        d = np.asarray(d, np.float32)
        safe = np.where((d > 0) | np.isnan(d), d, np.float32(1))       # a NaN stays NaN (absurd scales)
        return np.where(d <= 0, output_min, quant.libm_apply("logf", safe)).astype(np.float32)
    return f


def reference(x: np.ndarray) -> np.ndarray:
    """logf on every element (NaN below 0, −inf at ±0)."""
    return libm_f32("logf", x)


@kernel(BuiltinOperator.LOG, versions=(1, 2))
class Log(UnaryKernel):
    name = "log"
    dtypes = (F32,)
    qtypes = (I8, I16)

    def prepare_quantized(self, context, node, dt):
        out_s, out_zp = quant.tensor_scale_zp(context, node.outputs[0])
        if dt == I16:
            _, in_zp = quant.tensor_scale_zp(context, node.inputs[0])
            require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
        return prepare_lut(context, node, dt, log_transform(dt, out_s, out_zp))

    def reference_quantized(self, x, d):
        return lut_reference(x, d, log_transform(d.dtype, d.output_scale, d.output_zero_point))

    def invoke(self, context, node, d):
        if invoke_quantized(self, context, node, d):
            return
        run_float_unary("log", context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
