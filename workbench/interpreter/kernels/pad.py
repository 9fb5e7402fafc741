"""PAD: zero padding per axis.  Versions: float32/int32/int64/uint8 → 1, int8 → 2, int16 → 3, rank
above 4 → 4, bool → 5.  A quantized tensor pads with the output's zero point — the integer that
stands for 0.0 (see _pad.py)."""

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._pad import QUANTIZED, PadKernel


@kernel(BuiltinOperator.PAD, versions=(1, 2, 3, 4, 5))
class Pad(PadKernel):
    name = "pad"

    def constant(self, context, node, dtype):
        if dtype in QUANTIZED:
            from .. import quant
            return dtype.type(quant.tensor_scale_zp(context, node.outputs[0])[1])
        return dtype.type(0)
