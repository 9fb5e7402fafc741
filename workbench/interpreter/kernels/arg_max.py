"""ARG_MAX: index of the largest value along the axis (first one on ties); float32/int32/uint8 (v1),
int8 (v2), bool (v3); see _arg.py."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._arg import ArgKernel


@kernel(BuiltinOperator.ARG_MAX, versions=(1, 2, 3))
class ArgMax(ArgKernel):
    name = "arg_max"
    func = staticmethod(np.argmax)
