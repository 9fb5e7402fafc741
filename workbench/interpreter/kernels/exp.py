"""EXP: e ** x — float32 (v1), int8 and int16 (v2).

Quantized (``exp.cc``): a lookup table of expf built in prepare — 256 entries for int8
(``LUTPopulate<int8_t>``), 513 interpolated entries for int16 (``LUTPopulate<int16_t>``, float32).
litert refuses int16 zero points other than 0, and so does this kernel."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from .. import quant
from ._common import F32
from ._unary import I8, I16, UnaryKernel, invoke_quantized, prepare_lut, require_zero_points


def exp_f32(d: np.ndarray) -> np.ndarray:
    return quant.libm_apply("expf", d)


def reference(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):        # exp(x) = inf for x > 88.7, silently as TFLite
        return np.asarray(np.exp(x), dtype=x.dtype)


@kernel(BuiltinOperator.EXP, versions=(1, 2))
class Exp(UnaryKernel):
    name = "exp"
    dtypes = (F32,)
    qtypes = (I8, I16)
    lut = staticmethod(exp_f32)

    def prepare_quantized(self, context, node, dt):
        if dt == I16:
            _, in_zp = quant.tensor_scale_zp(context, node.inputs[0])
            _, out_zp = quant.tensor_scale_zp(context, node.outputs[0])
            require_zero_points(node, "int16", ("input", in_zp), ("output", out_zp))
        return prepare_lut(context, node, dt, exp_f32)

    def invoke(self, context, node, d):
        if invoke_quantized(self, context, node, d):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
