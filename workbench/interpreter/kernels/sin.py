"""SIN: float32 (v1) and float16 (v2).  float16 is computed in float32 and rounded to half (every
one of the 65536 half values checked against litert, bit for bit).  NaN results come out as Eigen's
float → half conversion writes them, 0x7e00 with a sign: a NaN input keeps its sign (its payload
is dropped), ±inf gives x86's default NaN, which is negative (0xfe00).

The float32 values are ``std::sin`` on float, the C library's sinf (numpy's float32 sin differs in
the last bit).  Fast path: a numba loop on ``math.sin`` (which calls sinf); reference
(``invoke_reference``): ctypes calls, one per element."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel
from ._unary import libm_f32, run_float_unary


F16 = np.dtype(np.float16)


def half_result(x: np.ndarray, y32: np.ndarray) -> np.ndarray:
    """``y32`` (computed in float32 from the half input ``x``) rounded to half, with litert's NaNs."""
    bits = np.asarray(y32).astype(F16).view(np.uint16)
    xb = x.view(np.uint16)
    bits = np.where(np.isnan(x), (xb & 0x8000) | 0x7E00, np.where(np.isinf(x), 0xFE00, bits))
    return bits.astype(np.uint16).view(F16)


def reference(x: np.ndarray) -> np.ndarray:
    y = libm_f32("sinf", x.astype(np.float32))
    return half_result(x, y) if x.dtype == F16 else y


def fast(name: str, x: np.ndarray, out: np.ndarray) -> None:
    """The numba loop (``name`` "sin" or "cos") on float32, or on half values widened to float32."""
    if x.dtype == F16:
        y = np.empty(x.shape, np.float32)
        run_float_unary(name, x.astype(np.float32), y)
        out[...] = half_result(x, y)
    else:
        run_float_unary(name, x, out)


@kernel(BuiltinOperator.SIN, versions=(1, 2))
class Sin(MathUnaryKernel):
    name = "sin"
    dtypes = (F32, F16)
    fn = staticmethod(reference)

    def invoke(self, context, node, d):
        fast("sin", context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
