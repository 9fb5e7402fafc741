"""ELU: x for x >= 0, exp(x) - 1 below — float32 (expm1, as TFLite's optimized kernel) and int8
(version 1 both).

int8: a 256-entry LUT built in prepare (``activations.cc`` EluPrepare: ``LUTPopulate<int8_t>`` of
value < 0 ? expm1f(value) : value, float32).  TFLite has no uint8 / int16 ELU.

float32 (``optimized_ops::Elu``): the same value < 0 ? expm1f(value) : value per element, with the
C library's expm1f (numpy's expm1 differs in the last bit); a NaN input comes out unchanged.
Fast path: a numba loop on ``math.expm1`` (which calls expm1f); reference: ctypes calls."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from .. import quant
from ._common import F32
from ._unary import I8, UnaryKernel, invoke_quantized, run_float_unary


def elu_f32(d: np.ndarray) -> np.ndarray:
    """value < 0 ? expm1f(value) : value, in float32."""
    d = np.asarray(d, np.float32)
    return np.where(d < 0, quant.libm_apply("expm1f", np.minimum(d, 0)), d).astype(np.float32)


def reference(x: np.ndarray) -> np.ndarray:
    return elu_f32(x)


@kernel(BuiltinOperator.ELU, versions=(1,))
class Elu(UnaryKernel):
    name = "elu"
    dtypes = (F32,)
    qtypes = (I8,)
    lut = staticmethod(elu_f32)

    def invoke(self, context, node, d):
        if invoke_quantized(self, context, node, d):
            return
        run_float_unary("elu", context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
