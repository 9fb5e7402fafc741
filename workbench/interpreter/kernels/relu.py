"""RELU: max(x, 0) — float32 (v1), uint8 / int8 (v2), int16 (v3, zero points 0).

float32 (``reference_ops::Relu``): x < 0 ? 0 : x, so NaN and −0.0 pass unchanged, as in litert.
Quantized (``activations.cc`` ReluEval → QuantizedReluX): requantize by in_scale/out_scale and clamp
at the output's quantized 0 (the RELU family in ``_unary.py``).  The speed layer: ``fast/unary.py``."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import I8, I16, U8
from ._unary import ReluData, UnaryKernel, relu_reference


def relu_float(x: np.ndarray) -> np.ndarray:
    """``reference_ops::Relu`` per element."""
    return np.where(x < 0, np.float32(0), x)


@kernel(BuiltinOperator.RELU, versions=(1, 2, 3))
class Relu(UnaryKernel):
    name = "relu"
    qtypes = (U8, I8, I16)
    relu_range = (0.0, None)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = relu_reference(x, d) if type(d) is ReluData else relu_float(x)
