"""SUB: a - b with broadcasting (version 3: broadcasting beyond rank 4) and a fused activation."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._binary import BinaryKernel
from ._common import F32


@kernel(BuiltinOperator.SUB, versions=(1, 2, 3))
class Sub(BinaryKernel):
    name = "sub"
    ufunc = np.subtract
    dtypes = (F32, np.dtype(np.int32))
    int8_kind = "sub"      # int8 (version 2): see _binary.py
