"""TRANSPOSE: permute axes by ``perm`` (input 1, a constant).  Pure data movement, so any dtype numpy
holds works: int8 (v2), bool (v3), rank 5 (v4), int16 (v5), rank 6 (v6)."""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata


@opdata
class TransposeData(OpData):
    perm: tuple
    output_shape: tuple


@kernel(BuiltinOperator.TRANSPOSE, versions=range(1, 7))
class Transpose(Kernel):
    name = "transpose"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        perm = [int(p) for p in np.asarray(context.require_value(node, 1, "perm")).reshape(-1)]
        perm = [p + len(shape) if p < 0 else p for p in perm]
        if sorted(perm) != list(range(len(shape))):
            raise UnsupportedOpError(f"TRANSPOSE (node {node.index}): perm {perm} for rank {len(shape)}")
        if context.dtype(x) is None:
            raise UnsupportedOpError(f"TRANSPOSE (node {node.index}): unsupported tensor type")
        out = tuple(shape[p] for p in perm)
        context.set_output(node.outputs[0], out, context.dtype(x))
        return TransposeData(tuple(perm), out)

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = context.tensors[node.inputs[0]].transpose(d.perm)
