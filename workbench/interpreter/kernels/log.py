"""LOG: natural logarithm — float32 (v1; NaN below 0, −inf at 0), int8 and int16 (v2).

float32 (``reference_ops::Log``, which the builtin LOG runs too): ``std::log`` per element, glibc's
logf — :func:`._libm.logf`, its arithmetic in numpy (numpy's float32 log differs in the last bit).

Quantized (``elementwise.cc`` LogLUTPrepare): a lookup table built in prepare — 256 entries for
int8, 513 interpolated entries for int16 (zero points 0) — of value <= 0 ? output_min : logf(value),
where output_min = (type_min − output_zero_point)·output_scale, the smallest output (float32);
``LUTLookup`` reads it.  The speed layer: ``fast/unary.py``."""

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import kernel
from ._common import F32, I8, I16
from ._libm import logf
from ._unary import TYPE_RANGE, LutData, UnaryKernel, lut_lookup, prepare_lut, require_zero_points


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def log_transform(dtype, output_scale: float, output_zero_point: int):
    """The float32 function LogLUTPrepare tabulates for this output quantization."""
    output_min = np.float32(np.float32(TYPE_RANGE[np.dtype(dtype)][0] - int(output_zero_point)) *
                            np.float32(output_scale))

    def f(d):
        d = np.asarray(d, np.float32)
        safe = np.where((d > 0) | np.isnan(d), d, np.float32(1))       # a NaN stays NaN (absurd scales)
        return np.where(d <= 0, output_min, logf(safe)).astype(np.float32)
    return f


def log_float(x: np.ndarray) -> np.ndarray:
    """``reference_ops::Log``: logf on every element (NaN below 0, −inf at ±0)."""
    return logf(x)


def log_quantized(x: np.ndarray, d: LutData) -> np.ndarray:
    """``LUTLookup`` in the table LogLUTPrepare filled."""
    return lut_lookup(x, d)


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

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = log_quantized(x, d) if type(d) is LutData else log_float(x)
