"""EXP: e ** x — float32 (v1), int8 and int16 (v2).

Quantized (``exp.cc``): a lookup table of expf built in prepare — 256 entries for int8
(``LUTPopulate<int8_t>``), 513 interpolated entries for int16 (``LUTPopulate<int16_t>``, float32).
litert refuses int16 zero points other than 0, and so does this kernel.

float32: ``std::exp`` per element, i.e. the C library's expf (glibc); numpy's float32 exp differs
in the last bit for many inputs.  Fast path: a numba loop on ``math.exp`` (which calls expf);
reference: expf through ctypes, one call per element."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import kernel
from .. import quant
from ._common import F32
from ._unary import I8, I16, UnaryKernel, invoke_quantized, libm_f32, prepare_lut, require_zero_points, run_float_unary


def exp_f32(d: np.ndarray) -> np.ndarray:
    return quant.libm_apply("expf", d)


def reference(x: np.ndarray) -> np.ndarray:
    """expf on every element (exp(x) = inf above 88.72, 0 below −103.97, silently as TFLite)."""
    return libm_f32("expf", x)


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
        run_float_unary("exp", context.tensors[node.inputs[0]], context.tensors[node.outputs[0]])

    def invoke_reference(self, context, node, d):
        if invoke_quantized(self, context, node, d, reference=True):
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]])
