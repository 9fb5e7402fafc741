"""MATRIX_DIAG: [..., N] -> [..., N, N], the input on the main diagonal and zeros elsewhere (any type)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._elementwise import refuse


@opdata
class MatrixDiagData(OpData):
    output_shape: tuple


@kernel(BuiltinOperator.MATRIX_DIAG, versions=(1,))
class MatrixDiag(Kernel):
    name = "matrix_diag"

    def prepare(self, context, node):
        x = node.inputs[0]
        shape = context.shape(x)
        if len(shape) < 1 or context.dtype(x) is None:
            refuse(node, f"input has shape {list(shape)} and type {context.type_name(x)}; needs rank >= 1")
        out = tuple(shape) + (shape[-1],)
        context.set_output(node.outputs[0], out, context.dtype(x))
        return MatrixDiagData(out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        y = context.tensors[node.outputs[0]]
        y[...] = 0
        n = x.shape[-1]
        idx = np.arange(n)
        y[..., idx, idx] = x
