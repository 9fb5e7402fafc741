"""RESHAPE: same data, new shape; from input 1 when it is a 1-D int32 tensor, else ``new_shape``.

One dimension may be -1 (inferred).  The shape must be known when tensors are allocated (a
constant, or computed from constants such as SHAPE → STRIDED_SLICE → PACK).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata


@opdata
class ReshapeData(OpData):
    output_shape: tuple
    shape_from: str


def resolve_shape(node, in_count: int, shape) -> tuple:
    shape = [int(s) for s in shape]
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise UnsupportedOpError(f"RESHAPE (node {node.index}): more than one -1 in {shape}")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 or in_count % known:
            raise UnsupportedOpError(f"RESHAPE (node {node.index}): cannot infer -1 in {shape} for {in_count} elements")
        shape[unknown[0]] = in_count // known
    if math.prod(shape) != in_count:
        raise UnsupportedOpError(f"RESHAPE (node {node.index}): {in_count} elements do not fit shape {shape}")
    return tuple(shape)


@kernel(BuiltinOperator.RESHAPE, versions=(1,))
class Reshape(Kernel):
    name = "reshape"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x_t, s_t = node.input(0), node.input(1)
        in_shape = context.shape(x_t)
        use_tensor = (s_t >= 0 and len(context.shape(s_t)) == 1 and context.dtype(s_t) == np.int32)
        if use_tensor:
            shape = context.require_value(node, 1, "the new shape").reshape(-1)
            source = "input 1"
        else:
            new_shape = node.params.get("new_shape")
            if new_shape is None:
                raise UnsupportedOpError(f"RESHAPE (node {node.index}): no shape tensor and no new_shape option")
            shape, source = tuple(new_shape), "new_shape option"
        out = resolve_shape(node, math.prod(in_shape), shape)
        context.set_output(node.outputs[0], out, context.dtype(x_t))
        return ReshapeData(out, source)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]].reshape(-1)[...] = context.tensors[node.inputs[0]].reshape(-1)
