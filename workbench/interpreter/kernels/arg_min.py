"""ARG_MIN: index of the smallest value along the axis (first one on ties); float32/int32/uint8 (v1),
int8 (v2), bool (v3); see _arg.py."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._arg import ArgKernel


@kernel(BuiltinOperator.ARG_MIN, versions=(1, 2, 3))
class ArgMin(ArgKernel):
    name = "arg_min"
    func = staticmethod(np.argmin)
