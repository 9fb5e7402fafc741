"""What ADD, SUB, MUL and DIV share: numpy broadcasting, then the fused activation clamp."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ..registry import Kernel, OpData, opdata
from ._common import F32, activation_name, activation_range, apply_activation


@opdata
class BinaryData(OpData):
    output_shape: tuple
    broadcast: bool
    activation: str
    output_activation_min: float
    output_activation_max: float


class BinaryKernel(Kernel):
    """Subclasses set ``ufunc`` (np.add, ...) and ``dtypes``."""

    ufunc = None
    dtypes = (F32,)

    def prepare(self, context, node):
        a, b = node.inputs[0], node.inputs[1]
        dt = context.expect_dtype(node, a, self.dtypes, "input 0")
        if context.dtype(b) != dt:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): inputs have types {dt} and "
                                     f"{context.dtype(b)}")
        sa, sb = context.shape(a), context.shape(b)
        try:
            out = tuple(np.broadcast_shapes(sa, sb))
        except ValueError:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): shapes {list(sa)} and {list(sb)} do "
                                     f"not broadcast") from None
        code = node.params.get("fused_activation_function", 0)
        lo, hi = activation_range(code)
        if dt != F32 and code in (1, 2, 3):
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): fused activation on {dt} is not "
                                     f"implemented")
        context.set_output(node.outputs[0], out, dt)
        return BinaryData(out, sa != sb, activation_name(code), lo, hi)

    def invoke(self, context, node, d):
        t = context.tensors
        out = t[node.outputs[0]]
        self.ufunc(t[node.inputs[0]], t[node.inputs[1]], out=out)
        apply_activation(out, d.output_activation_min, d.output_activation_max)
