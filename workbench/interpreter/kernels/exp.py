"""EXP: e ** x — float32 (v1), int8 and int16 (v2).

float32 (``reference_ops::Exp``, which TFLite's builtin EXP runs too): ``std::exp`` per element,
i.e. glibc's expf — :func:`._libm.expf`, its arithmetic in numpy (numpy's own float32 exp differs
in the last bit for many inputs).  exp(x) is inf above 88.72 and 0 below −103.97, silently.

Quantized (``exp.cc``): a lookup table of expf built in prepare — 256 entries for int8
(``LUTPopulate<int8_t>``), 513 interpolated entries for int16 (``LUTPopulate<int16_t>``, float32),
read by ``LUTLookup``.  litert refuses int16 zero points other than 0, and so does this kernel.

Both builds of TFLite compute the same here.  The speed layer: ``fast/unary.py``."""

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import kernel
from ._common import F32, I8, I16
from ._libm import expf
from ._unary import LutData, UnaryKernel, lut_lookup, prepare_lut, require_zero_points


def exp_f32(d: np.ndarray) -> np.ndarray:
    """The function the LUT holds: expf of the dequantized value."""
    return expf(d)


def exp_float(x: np.ndarray) -> np.ndarray:
    """``reference_ops::Exp``: expf on every element."""
    return expf(x)


def exp_quantized(x: np.ndarray, d: LutData) -> np.ndarray:
    """``LUTLookup`` in the table of expf that prepare filled."""
    return lut_lookup(x, d)


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
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        out[...] = exp_quantized(x, d) if type(d) is LutData else exp_float(x)
