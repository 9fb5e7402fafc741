"""COS: float32 (v1) and float16 (v2).  float16 is computed in float32 and rounded to half, NaNs as
litert writes them (see ``sin.py``); every one of the 65536 half values checked against litert.
The float32 values are the C library's cosf (numba's ``math.cos`` on the fast path, ctypes calls
in the reference)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32  # noqa: F401
from ._elementwise import MathUnaryKernel
from ._unary import libm_f32
from .sin import F16, fast, half_result


def reference(x: np.ndarray) -> np.ndarray:
    y = libm_f32("cosf", x.astype(np.float32))
    return half_result(x, y) if x.dtype == F16 else y


@kernel(BuiltinOperator.COS, versions=(1, 2))
class Cos(MathUnaryKernel):
    name = "cos"
    dtypes = (F32, F16)
    fn = staticmethod(reference)

    def invoke(self, context, node, d):
        fast("cos", context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
