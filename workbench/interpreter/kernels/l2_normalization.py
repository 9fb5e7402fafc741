"""L2_NORMALIZATION (float32) over the last axis: x / max(sqrt(sum(x^2)), 1e-6).

TFLite's float kernel only accepts fused activation NONE (checked in Prepare); so does this one."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, activation_name
from ._elementwise import refuse

EPSILON = 1e-6


@opdata
class L2NormalizationData(OpData):
    shape: tuple
    epsilon: float


def reference(x: np.ndarray) -> np.ndarray:
    v = x.astype(np.float64)
    norm = np.sqrt((v * v).sum(axis=-1, keepdims=True))
    return (v / np.maximum(norm, EPSILON)).astype(np.float32)


@kernel(BuiltinOperator.L2_NORMALIZATION, versions=(1,))
class L2Normalization(Kernel):
    name = "l2_normalization"

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32,))
        act = int(node.params.get("fused_activation_function", 0))
        if act != 0:
            refuse(node, f"fused activation {activation_name(act)}; TFLite's kernel only accepts NONE")
        if len(context.shape(x)) == 0:
            refuse(node, "the input must have at least one dimension")
        context.set_output(node.outputs[0], context.shape(x), F32)
        return L2NormalizationData(context.shape(x), EPSILON)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
