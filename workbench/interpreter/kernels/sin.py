"""SIN: float32 (v1) and float16 (v2).

float32 (``reference_ops::Sin``, the builtin's too): ``std::sin`` on float, glibc's sinf —
:func:`._libm.sinf`, its arithmetic in numpy (numpy's float32 sin differs in the last bit).

float16 is computed in float32 and rounded to half (every one of the 65536 half values checked
against litert, bit for bit).  NaN results come out as Eigen's float → half conversion writes them,
0x7e00 with a sign: a NaN input keeps its sign (its payload is dropped), ±inf gives x86's default
NaN, which is negative (0xfe00).  The speed layer: ``fast/unary.py``."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F16, F32
from ._elementwise import MathUnaryKernel
from ._libm import sinf


def half_result(x: np.ndarray, y32: np.ndarray) -> np.ndarray:
    """``y32`` (computed in float32 from the half input ``x``) rounded to half, with litert's NaNs."""
    bits = np.asarray(y32).astype(F16).view(np.uint16)
    xb = x.view(np.uint16)
    bits = np.where(np.isnan(x), (xb & 0x8000) | 0x7E00, np.where(np.isinf(x), 0xFE00, bits))
    return bits.astype(np.uint16).view(F16)


def sin_float(x: np.ndarray) -> np.ndarray:
    """``reference_ops::Sin``: sinf on every element; half inputs through float32."""
    y = sinf(x.astype(np.float32))
    return half_result(x, y) if x.dtype == F16 else y



@kernel(BuiltinOperator.SIN, versions=(1, 2))
class Sin(MathUnaryKernel):
    name = "sin"
    dtypes = (F32, F16)
    fn = staticmethod(sin_float)
