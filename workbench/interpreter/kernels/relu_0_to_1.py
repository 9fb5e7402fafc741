"""RELU_0_TO_1: clamp to [0, 1] — float32, uint8 and int8 (all version 1; TFLite has no int16).

Quantized: requantize by in_scale/out_scale and clamp to the output's quantized [0, 1] (the RELU
family in ``_unary.py``; TFLite's ``Relu0to1Eval``).  The speed layer: ``fast/unary.py``."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I8, U8
from ._unary import ReluData, UnaryKernel, relu_reference


def relu_0_to_1_float(x: np.ndarray) -> np.ndarray:
    """``reference_ops::Relu0To1`` per element."""
    return np.asarray(np.clip(x, np.float32(0), np.float32(1)), dtype=x.dtype)


@kernel(BuiltinOperator.RELU_0_TO_1, versions=(1,))
class Relu0To1(UnaryKernel):
    name = "relu_0_to_1"
    dtypes = (F32,)
    qtypes = (U8, I8)
    relu_range = (0.0, 1.0)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = relu_reference(x, d) if type(d) is ReluData else relu_0_to_1_float(x)
