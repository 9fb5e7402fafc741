"""SQRT: element-wise square root — float32 (v1; NaN for negative inputs, as std::sqrt), int8 and
int16 (v2; int16 zero points 0).

Quantized: every input must stand for a non-negative number (x >= input zero point; litert stops
with "Sqrt is only defined for non-negative values" otherwise, and so does this kernel).  Then,
in float32: r = sqrtf(in_scale·(x − in_zp)); q = (int32)(r / out_scale) + out_zp, clamped — the
cast TRUNCATES (no rounding, no lookup table) and the addition is int32 arithmetic: with absurd scales
a quotient beyond int32 or infinite becomes INT32_MIN (x86), and INT32_MIN + a negative zero point wraps
to a large positive value (so the clamp gives the type maximum, a zero point ≥ 0 gives the minimum) —
measured on litert for scales from 1e-45 to 3e38.  The quantized SQRT is newer than the TFLite sources
read for this project; this arithmetic was established against litert (every int8 value and
every non-negative int16 value agree).  Both builds of TFLite compute the same here.
The speed layer: ``fast/unary.py``.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import OpData, kernel, opdata
from ._common import F32, I8, I16
from ._elementwise import fail
from ._unary import UnaryKernel, clamp_to, require_zero_points


@opdata
class SqrtQuantizedData(OpData):
    shape: tuple
    dtype: str
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int


def sqrt_float(x: np.ndarray) -> np.ndarray:
    """``std::sqrt`` per element (IEEE: correctly rounded, as numpy's; NaN below 0)."""
    with np.errstate(invalid="ignore"):
        return np.asarray(np.sqrt(x), dtype=x.dtype)


@np.errstate(all="ignore")        # IEEE inf / NaN from absurd scales are intended
def sqrt_quantized(x: np.ndarray, d: SqrtQuantizedData) -> np.ndarray:
    """sqrtf of the dequantized value, divided by the output scale, truncated, + out_zp, clamped."""
    v = np.maximum(x.astype(np.int64) - d.input_zero_point, 0)
    deq = (np.float32(d.input_scale) * v.astype(np.float32)).astype(np.float32)
    r = np.sqrt(deq)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        f = (r / np.float32(d.output_scale)).astype(np.float32)
    # int32 arithmetic: a quotient beyond int32 (or inf) converts to INT32_MIN, and adding the zero
    # point to that wraps (INT32_MIN − 7 is a large positive number, clamped to the type maximum)
    q = quant.wrap_bits(quant.float_to_int32(f) + d.output_zero_point, 32)
    return clamp_to(q, d.dtype)


def check_non_negative(node, x: np.ndarray, zero_point: int, what: str) -> None:
    if x.size and int(x.min()) < zero_point:
        fail(node, f"{what} is only defined for non-negative values: an input is {int(x.min())}, below the "
                   f"zero point {zero_point} (TFLite stops too)")


@kernel(BuiltinOperator.SQRT, versions=(1, 2))
class Sqrt(UnaryKernel):
    name = "sqrt"
    dtypes = (F32,)
    qtypes = (I8, I16)

    def prepare_quantized(self, context, node, dt):
        x, y = node.inputs[0], node.outputs[0]
        in_s, in_zp = quant.tensor_scale_zp(context, x)
        out_s, out_zp = quant.tensor_scale_zp(context, y)
        if dt == I16:
            require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
        return SqrtQuantizedData(context.shape(x), str(dt), in_s, in_zp, out_s, out_zp)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is SqrtQuantizedData:
            check_non_negative(node, x, d.input_zero_point, "Sqrt")
            out[...] = sqrt_quantized(x, d)
        else:
            out[...] = sqrt_float(x)
