"""DIV (float32): a / b with numpy broadcasting and a fused activation."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._binary import BinaryKernel
from ._common import F32


@kernel(BuiltinOperator.DIV, versions=(1,))
class Div(BinaryKernel):
    name = "div"
    ufunc = np.divide
    dtypes = (F32,)
