"""RELU6: min(max(x, 0), 6) — float32 and uint8 (v1), int8 (v2), int16 (v3, zero points 0).

float32 (``reference_ops::Relu6``): NaN passes unchanged, as in litert.  Quantized: requantize by
in_scale/out_scale and clamp to the output's quantized [0, 6] (the RELU family in ``_unary.py``).
A uint8 RELU6 stays version 1 (op_version.cc has no uint8 rule).  The speed layer: ``fast/unary.py``."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import I8, I16, U8
from ._unary import ReluData, UnaryKernel, relu_reference


def relu6_float(x: np.ndarray) -> np.ndarray:
    """``reference_ops::Relu6`` per element: x < 0 ? 0 : (x > 6 ? 6 : x)."""
    return np.where(x < 0, 0, np.where(x > 6, 6, x)).astype(np.float32)


@kernel(BuiltinOperator.RELU6, versions=(1, 2, 3))
class Relu6(UnaryKernel):
    name = "relu6"
    qtypes = (U8, I8, I16)
    relu_range = (0.0, 6.0)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = relu_reference(x, d) if type(d) is ReluData else relu6_float(x)
