"""RELU6: min(max(x, 0), 6) — float32 and uint8 (v1), int8 (v2), int16 (v3, zero points 0).

Quantized: requantize by in_scale/out_scale and clamp to the output's quantized [0, 6] (see the
RELU family in ``_unary.py``).  A uint8 RELU6 stays version 1 (op_version.cc has no uint8 rule)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._unary import I8, I16, U8, UnaryKernel, invoke_quantized


def reference(x):
    return np.where(x < 0, 0, np.where(x > 6, 6, x)).astype(np.float32)     # NaN stays NaN, as in litert


@kernel(BuiltinOperator.RELU6, versions=(1, 2, 3))
class Relu6(UnaryKernel):
    name = "relu6"
    qtypes = (U8, I8, I16)
    relu_range = (0.0, 6.0)

    def invoke(self, context, node, d):
        if invoke_quantized(self, context, node, d):
            return
        np.clip(context.tensors[node.inputs[0]], np.float32(0), np.float32(6), out=context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
