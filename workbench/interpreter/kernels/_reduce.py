"""What SUM, REDUCE_MAX/MIN/PROD/ANY/ALL share: axes from input 1 (a constant; negative and
duplicate axes allowed, as TFLite resolves them), ``keep_dims`` from ReducerOptions."""

from __future__ import annotations

import numpy as np

from ..registry import Kernel, OpData, opdata
from ._elementwise import const_ints, norm_axes, reduced_shape


@opdata
class ReduceData(OpData):
    axes: tuple
    keep_dims: bool
    output_shape: tuple


class ReduceKernel(Kernel):
    """Subclasses set ``dtypes`` and ``reduce(x, axes, keep) -> array``."""

    dtypes = ()
    value_inputs = (0, 1)

    @staticmethod
    def reduce(x, axes, keep):
        raise NotImplementedError

    def prepare(self, context, node):
        x = node.inputs[0]
        dt = context.expect_dtype(node, x, self.dtypes)
        shape = context.shape(x)
        axes = norm_axes(node, const_ints(context, node, 1, "the axes"), len(shape))
        axes = tuple(a for a in axes if a < len(shape))      # a scalar has no axes: axis 0 reduces nothing
        keep = bool(node.params.get("keep_dims", False))
        out = reduced_shape(shape, axes, keep)
        context.set_output(node.outputs[0], out, dt)
        return ReduceData(axes, keep, out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = np.asarray(self.reduce(x, d.axes, d.keep_dims)).astype(out.dtype).reshape(out.shape)
