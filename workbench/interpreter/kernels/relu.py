"""RELU: max(x, 0) — float32 (v1), uint8 / int8 (v2), int16 (v3, zero points 0).

Quantized: requantize by in_scale/out_scale and clamp at the output's quantized 0 (see the RELU
family in ``_unary.py``)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._unary import I8, I16, U8, UnaryKernel, invoke_quantized


def reference(x):
    return np.where(x < 0, np.float32(0), x).astype(np.float32)     # NaN stays NaN, as in litert


@kernel(BuiltinOperator.RELU, versions=(1, 2, 3))
class Relu(UnaryKernel):
    name = "relu"
    qtypes = (U8, I8, I16)
    relu_range = (0.0, None)

    def invoke(self, context, node, d):
        if invoke_quantized(self, context, node, d):
            return
        np.maximum(context.tensors[node.inputs[0]], np.float32(0), out=context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
