"""GELU (float32), ``approximate`` from GeluOptions:
  exact:        0.5 * x * (1 + erf(x / sqrt(2)))
  approximate:  0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))"""

import math

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32

_erf = np.frompyfunc(math.erf, 1, 1)


@opdata
class GeluData(OpData):
    shape: tuple
    approximate: bool


def reference(x: np.ndarray, approximate: bool) -> np.ndarray:
    v = x.astype(np.float64)
    if approximate:
        y = 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))
    else:
        y = 0.5 * v * (1.0 + _erf(v / math.sqrt(2.0)).astype(np.float64))
    return y.astype(np.float32)


@kernel(BuiltinOperator.GELU, versions=(1,))
class Gelu(Kernel):
    name = "gelu"

    def prepare(self, context, node):
        x = node.inputs[0]
        context.expect_dtype(node, x, (F32,))
        context.set_output(node.outputs[0], context.shape(x), F32)
        return GeluData(context.shape(x), bool(node.params.get("approximate", False)))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.approximate)
