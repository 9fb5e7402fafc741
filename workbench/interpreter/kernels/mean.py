"""MEAN (float32) over the axes in input 1 (a constant), ``keep_dims`` from ReducerOptions."""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, normalize_axis


@opdata
class MeanData(OpData):
    axes: tuple
    keep_dims: bool
    output_shape: tuple


def reference(x: np.ndarray, axes: tuple, keep_dims: bool) -> np.ndarray:
    return np.mean(x.astype(np.float64), axis=axes, keepdims=keep_dims).astype(np.float32)


@kernel(BuiltinOperator.MEAN, versions=(1,))
class Mean(Kernel):
    name = "mean"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x_t = node.inputs[0]
        context.expect_dtype(node, x_t, (F32,))
        shape = context.shape(x_t)
        axes_v = context.require_value(node, 1, "the axes")
        axes = tuple(sorted({normalize_axis(node, int(a), len(shape)) for a in np.asarray(axes_v).reshape(-1)}))
        keep = bool(node.params["keep_dims"])
        if keep:
            out = tuple(1 if i in axes else d for i, d in enumerate(shape))
        else:
            out = tuple(d for i, d in enumerate(shape) if i not in axes)
        context.set_output(node.outputs[0], out, F32)
        return MeanData(axes, keep, out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        np.mean(x, axis=d.axes, keepdims=d.keep_dims, out=out)

    def invoke_reference(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.axes, d.keep_dims)
