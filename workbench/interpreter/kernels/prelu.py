"""PRELU: x if x >= 0 else alpha * x, ``alpha`` (input 1) broadcast against x — float32, uint8,
int8 and int16 (all version 1).  alpha has the input's type, except for int16 inputs, whose alpha
is int8 (the 16x8 scheme).  litert reads any other alpha type's bytes as that type (garbage), so
this kernel refuses such models instead.  alpha must not change the output shape.

Quantized (``activations.cc`` PreluPrepare, ``reference_ops::Prelu`` / ``BroadcastPrelu4DSlow``):
alpha has its own scale and zero point; two multipliers from float32 products —
output_multiplier_1 = in_scale/out_scale, output_multiplier_2 = in_scale·alpha_scale/out_scale.
Per element v = x − in_zp: out = MBQM(v, multiplier_1) for v >= 0, else
MBQM(v·(alpha − alpha_zp), multiplier_2); + out_zp, clamped.

Both builds run these reference loops (the float one too: a comparison and one product, nothing to
round differently), so there is no variant to choose.  The speed layer (``fast/activations.py``)
reads 8-bit PRELU from a table of every (x, alpha) pair.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, U8
from ._unary import TYPE_RANGE


@opdata
class PreluData(OpData):
    output_shape: tuple


@opdata
class PreluQuantizedData(OpData):
    """TFLite's ``PreluParams``."""

    output_shape: tuple
    dtype: str
    requires_broadcast: bool
    input_offset: int
    alpha_offset: int
    output_offset: int
    output_multiplier_1: int
    output_shift_1: int
    output_multiplier_2: int
    output_shift_2: int
    real_multiplier_1: float
    real_multiplier_2: float


def prelu_float(x: np.ndarray, alpha: np.ndarray, out: np.ndarray) -> None:
    """``reference_ops::BroadcastBinaryFunction4DSlow`` with ``ApplyPrelu`` into ``out``: x >= 0 ? x : x·alpha."""
    with np.errstate(over="ignore", invalid="ignore"):      # float inf / NaN silently, as TFLite
        np.multiply(x, alpha, out=out)
    np.copyto(out, x, where=x >= 0)


def prelu_quantized(x, alpha, d: PreluQuantizedData) -> np.ndarray:
    """``reference_ops::BroadcastPrelu4DSlow`` (and ``Prelu`` without broadcast) on every element."""
    v = np.asarray(x).astype(np.int64) + d.input_offset
    a = np.asarray(alpha).astype(np.int64) + d.alpha_offset
    mb = quant.multiply_by_quantized_multiplier_array
    pos = mb(v, d.output_multiplier_1, d.output_shift_1)
    neg = mb(quant.wrap_bits(v * a, 32), d.output_multiplier_2, d.output_shift_2)
    lo, hi = TYPE_RANGE[np.dtype(d.dtype)]
    return np.clip(np.where(v >= 0, pos, neg) + d.output_offset, lo, hi).astype(d.dtype)


@kernel(BuiltinOperator.PRELU, versions=(1,))
class Prelu(Kernel):
    name = "prelu"

    def prepare(self, context, node):
        x, a, y = node.inputs[0], node.inputs[1], node.outputs[0]
        dt = context.expect_dtype(node, x, (F32, U8, I8, I16))
        context.expect_dtype(node, a, (I8 if dt == I16 else dt,), "alpha")
        try:
            out = tuple(np.broadcast_shapes(context.shape(x), context.shape(a)))
        except ValueError:
            raise UnsupportedOpError(f"PRELU (node {node.index}): alpha {list(context.shape(a))} does not broadcast "
                                     f"against {list(context.shape(x))}") from None
        if out != tuple(context.shape(x)):
            raise UnsupportedOpError(f"PRELU (node {node.index}): alpha {list(context.shape(a))} would change the "
                                     f"output shape {list(context.shape(x))} (TFLite needs it unchanged)")
        if dt == F32:
            context.set_output(y, out, F32)
            return PreluData(out)
        if context.dtype(y) != dt:
            raise UnsupportedOpError(f"PRELU (node {node.index}): {dt} input with a {context.dtype(y)} output")
        s_in, z_in = quant.tensor_scale_zp(context, x)
        s_a, z_a = quant.tensor_scale_zp(context, a)
        s_out, z_out = quant.tensor_scale_zp(context, y)
        r1 = float(np.float32(s_in) / np.float32(s_out))
        r2 = float(np.float32(np.float32(s_in) * np.float32(s_a)) / np.float32(s_out))
        m1, sh1 = quant.quantize_multiplier(r1)
        m2, sh2 = quant.quantize_multiplier(r2)
        context.set_output(y, out, dt)
        return PreluQuantizedData(out, str(dt), context.shape(x) != context.shape(a), -z_in, -z_a, z_out, m1, sh1,
                                  m2, sh2, r1, r2)

    def invoke(self, context, node, d):
        t = context.tensors
        x, alpha = t[node.inputs[0]], t[node.inputs[1]]
        if type(d) is PreluQuantizedData:
            t[node.outputs[0]][...] = prelu_quantized(x, alpha, d)
        else:
            prelu_float(x, alpha, t[node.outputs[0]])
