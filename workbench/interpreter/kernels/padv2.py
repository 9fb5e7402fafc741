"""PADV2: PAD with the fill value from input 2 (a scalar constant of the input's type; absent →
0, or the output's zero point for a quantized tensor).  Versions as PAD: 1 (float32, int32,
int64, uint8), 2 int8, 3 int16, 4 rank above 4, 5 bool.

A quantized constant must carry the output's scale and zero point (TFLite: ``output->params.scale
!= constant_values->params.scale`` fails); its raw integer is what fills the padding."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from ._elementwise import refuse
from ._pad import QUANTIZED, PadKernel


@kernel(BuiltinOperator.PADV2, versions=(1, 2, 3, 4, 5))
class PadV2(PadKernel):
    name = "padv2"

    def constant(self, context, node, dtype):
        c = node.input(2)
        if c < 0:
            if dtype in QUANTIZED:
                from .. import quant
                return dtype.type(quant.tensor_scale_zp(context, node.outputs[0])[1])
            return dtype.type(0)
        if context.dtype(c) != dtype:
            refuse(node, f"the constant value '{context.name(c)}' is {context.dtype(c)}, the input {dtype}; "
                         f"TFLite needs them equal")
        value = np.asarray(context.require_value(node, 2, "the constant value")).reshape(-1)
        if value.size != 1:
            refuse(node, f"the constant value must be a single element, got {value.size}")
        if dtype in QUANTIZED:
            from .. import quant
            so, zo = quant.tensor_scale_zp(context, node.outputs[0])
            sc, zc = quant.tensor_scale_zp(context, c)
            if np.float32(sc) != np.float32(so) or zc != zo:
                refuse(node, f"the constant value has scale {sc} / zero point {zc}, the output {so} / {zo}; "
                             f"TFLite requires them equal")
        return dtype.type(value[0])
