"""MATRIX_SET_DIAG: input [..., M, N] with its main diagonal replaced by diagonal [..., min(M, N)]."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import refuse


@opdata
class MatrixSetDiagData(OpData):
    output_shape: tuple
    diagonal_length: int


@kernel(BuiltinOperator.MATRIX_SET_DIAG, versions=(1,))
class MatrixSetDiag(Kernel):
    name = "matrix_set_diag"

    def prepare(self, context, node):
        x, dg = node.inputs[0], node.inputs[1]
        shape, ds = context.shape(x), context.shape(dg)
        if len(shape) < 2:
            refuse(node, f"input has shape {list(shape)}; needs rank >= 2")
        k = min(shape[-2], shape[-1])
        if tuple(ds) != tuple(shape[:-2]) + (k,) or context.dtype(dg) != context.dtype(x):
            refuse(node, f"diagonal {context.dtype(dg)} {list(ds)} must be {context.dtype(x)} "
                         f"{list(shape[:-2]) + [k]}")
        context.set_output(node.outputs[0], shape, context.dtype(x))
        return MatrixSetDiagData(tuple(shape), k)

    def invoke(self, context, node, d):
        t = context.tensors
        y = t[node.outputs[0]]
        y[...] = t[node.inputs[0]]
        idx = np.arange(d.diagonal_length)
        y[..., idx, idx] = t[node.inputs[1]]
