"""SHAPE: the input's shape as a 1-D int32 (or int64, ``out_type``) tensor, of an input of any type
(strings too).  ``out_type`` must be int32 or int64, as in TFLite: a SHAPE without options reads
out_type 0 (no type) and a ShapeOptions() left at its schema default reads float32; TFLite refuses
both ("Unknown shape output data type").

Only the input's shape matters, never its values, so the node is evaluated once in
``allocate_tensors`` (``value_inputs = ()``) and its output is a constant from then on.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import refuse

OUT_TYPES = {2: np.int32, 4: np.int64}    # runtime TfLiteType codes: kTfLiteInt32, kTfLiteInt64


@opdata
class ShapeData(OpData):
    value: tuple


@kernel(BuiltinOperator.SHAPE, versions=(1,))
class Shape(Kernel):
    name = "shape"
    value_inputs = ()

    def prepare(self, context, node):
        out_type = int(node.params.get("out_type", 0))
        dtype = OUT_TYPES.get(out_type)
        if dtype is None:
            refuse(node, f"out_type is TfLiteType {out_type} (0 when the options table is absent); TFLite's "
                         f"SHAPE writes int32 (2) or int64 (4) only")
        shape = context.shape(node.inputs[0])
        context.set_output(node.outputs[0], (len(shape),), dtype)
        return ShapeData(tuple(shape))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = d.value
