"""ELU: x for x >= 0, exp(x) − 1 below — float32 and int8 (version 1 both).

float32 (``reference_ops::Elu`` and ``optimized_ops::Elu`` alike): value < 0 ? expm1f(value) : value
per element, glibc's expm1f (:func:`._libm.expm1f`; numpy's expm1 differs in the last bit); a NaN
input comes out unchanged.

int8: a 256-entry LUT built in prepare (``activations.cc`` EluPrepare: ``LUTPopulate<int8_t>`` of
the same float32 function), read by ``LUTLookup``.  TFLite has no uint8 / int16 ELU.
The speed layer: ``fast/unary.py``."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I8
from ._libm import expm1f
from ._unary import LutData, UnaryKernel, lut_lookup


def elu_f32(d: np.ndarray) -> np.ndarray:
    """value < 0 ? expm1f(value) : value, in float32."""
    d = np.asarray(d, np.float32)
    return np.where(d < 0, expm1f(np.minimum(d, 0)), d).astype(np.float32)


def elu_float(x: np.ndarray) -> np.ndarray:
    """``reference_ops::Elu`` on every element."""
    return elu_f32(x)


def elu_quantized(x: np.ndarray, d: LutData) -> np.ndarray:
    """``LUTLookup`` in the table EluPrepare filled."""
    return lut_lookup(x, d)


@kernel(BuiltinOperator.ELU, versions=(1,))
class Elu(UnaryKernel):
    name = "elu"
    dtypes = (F32,)
    qtypes = (I8,)
    lut = staticmethod(elu_f32)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = elu_quantized(x, d) if type(d) is LutData else elu_float(x)
