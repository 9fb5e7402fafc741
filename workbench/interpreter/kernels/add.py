"""ADD: a + b with numpy broadcasting and a fused activation (float32; int32 without activation)."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._binary import BinaryKernel
from ._common import F32


@kernel(BuiltinOperator.ADD, versions=(1, 2))
class Add(BinaryKernel):
    name = "add"
    ufunc = np.add
    dtypes = (F32, np.dtype(np.int32))
    int8_kind = "add"      # int8 (version 2): see _binary.py
