"""NEG: −x for float32, int32, int64, int8 and int16 (integers wrap like C; version 1).

TFLite's NEG has no quantized arithmetic: an int8 / int16 input is negated as plain integers and
its quantization parameters are ignored (``reference_ops::Negate``, the builtin's too), so
−(−128) = −128.  numpy's negative wraps the same way; there is no faster path to take."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._common import F32, I8, I16, I32, I64
from ._unary import UnaryKernel


def negate(x: np.ndarray, out: np.ndarray) -> None:
    """``reference_ops::Negate``: out = −x per element, in the input's type."""
    np.negative(x, out=out)


@kernel(BuiltinOperator.NEG, versions=(1,))
class Neg(UnaryKernel):
    name = "neg"
    dtypes = (F32, I32, I64, I8, I16)

    def invoke(self, context, node, d):
        negate(context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])
