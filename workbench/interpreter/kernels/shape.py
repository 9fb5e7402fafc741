"""SHAPE: the input's shape as a 1-D int32 (or int64, ``out_type``) tensor.

Only the input's shape matters, never its values, so the node is evaluated once in
``allocate_tensors`` (``value_inputs = ()``) and its output is a constant from then on.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata


@opdata
class ShapeData(OpData):
    value: tuple


@kernel(BuiltinOperator.SHAPE, versions=(1,))
class Shape(Kernel):
    name = "shape"
    value_inputs = ()

    def prepare(self, context, node):
        out_type = node.params.get("out_type", 2)
        dtype = np.int64 if out_type == 4 else np.int32   # runtime TfLiteType: 2 int32, 4 int64
        shape = context.shape(node.inputs[0])
        context.set_output(node.outputs[0], (len(shape),), dtype)
        return ShapeData(tuple(shape))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = d.value
