"""REDUCE_PROD: product over the axes (integers wrap like C); axes from input 1, ``keep_dims`` from
ReducerOptions (see _reduce.py).

Versions: float32, int32, int64 (and unquantized integers) → 1; int8 and int16 → 2.  A QUANTIZED
product exists for int8 and int16 only (a quantized uint8 input is refused, as TFLite does); int16
needs zero points 0.  A product of n values has scale in_scale^n, far from the output's, so TFLite
(``QuantizedReduceProd``) rescales at every step instead of once at the end:

  scaling = in_scale / out_scale^(1/n)   (double; n = values per output), → (multiplier, shift);
  p = x₀ − in_zp;  p = MBQM64(p · (xᵢ − in_zp), multiplier, shift) for each next value, in memory
  order;  out = clamp(MBQM64(p, multiplier, shift) + out_zp),

where MBQM64 is TFLite's int64 ``MultiplyByQuantizedMultiplier`` (a 16-bit multiplier and one
rounding shift, ties up: :func:`quant.multiply_by_quantized_multiplier_int64`).  After n steps the
values carry n factors of ``scaling``: in_scale^n / out_scale, the output's scale.

When every reduced axis has size 1 (n = 1) the two builds part (``Variant.reduce_prod_copy``): the
reference kernel rescales the one value, MBQM64(x − in_zp) + out_zp; TFLite's optimized kernel drops
those axes, finds nothing to reduce and COPIES the input's integers unchanged — no rescaling,
whatever the two scales are (``ReduceProdData.copy``).
The speed layer: ``workbench/interpreter/fast/reduce.py``.
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import OpData, kernel, opdata
from ._common import F32, I8, I16, I32, I64
from ._elementwise import refuse
from ._reduce import QUANTIZED, ReduceKernel, check_quantization, reduced_rows


@opdata
class ReduceProdData(OpData):
    axes: tuple
    keep_dims: bool
    output_shape: tuple
    dtype: str
    count: int                 # values multiplied per output (n)
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    scaling: float             # in_scale / out_scale^(1/n), double
    multiplier: int
    shift: int
    copy: bool                 # n == 1 in the optimized kernel: the integers are copied (module docstring)


@np.errstate(over="ignore", invalid="ignore")      # float inf / nan silently, as TFLite
def prod(x: np.ndarray, axes: tuple, keep: bool) -> np.ndarray:
    """``reference_ops::ReduceGeneric`` (product) for float32, int32, int64 and unquantized int8 / int16:
    one accumulator per output in memory order (``np.prod`` multiplies in order; integers wrap)."""
    return np.prod(x, axis=axes, keepdims=keep, dtype=x.dtype)


def prod_quantized(x: np.ndarray, d) -> np.ndarray:
    """``reference_ops::QuantizedReduceProd``: per output, p = x₀ − zp, then p = MBQM64(p · (xᵢ − zp))
    for each next value in memory order (all outputs at once), a last MBQM64, + out_zp, clamped — or
    the copy of the optimized kernel (module docstring)."""
    if d.copy:
        return x.reshape(d.output_shape).copy()
    rows = reduced_rows(x, d.axes).astype(np.int64) - d.input_zero_point
    mbqm = quant.multiply_by_quantized_multiplier_int64_array
    p = rows[:, 0]
    for k in range(1, rows.shape[1]):
        p = mbqm(p * rows[:, k], d.multiplier, d.shift)
    lo, hi = quant.quantized_range(x.dtype)
    return np.clip(mbqm(p, d.multiplier, d.shift) + d.output_zero_point, lo, hi).astype(x.dtype).reshape(
        d.output_shape)


@kernel(BuiltinOperator.REDUCE_PROD, versions=(1, 2))
class ReduceProd(ReduceKernel):
    name = "reduce_prod"
    dtypes = (F32, I32, I64) + QUANTIZED
    reduce = staticmethod(prod)

    def prepare(self, context, node):
        d = super().prepare(context, node)
        x = node.inputs[0]
        dt = context.dtype(x)
        if dt not in QUANTIZED or not quant.is_quantized(context, x):
            return d
        if dt not in (I8, I16):
            refuse(node, f"a quantized {dt} product is not supported by TFLite (quantized int8 and int16 only)")
        check_quantization(context, node, False)
        in_s, in_zp = quant.tensor_scale_zp(context, x)
        out_s, out_zp = quant.tensor_scale_zp(context, node.outputs[0])
        shape = context.shape(x)
        n = int(np.prod([shape[a] for a in d.axes], dtype=np.int64)) if d.axes else 1
        if n == 0 or 0 in shape:
            refuse(node, f"the input {list(shape)} is empty; there is nothing to multiply")
        scaling = float(np.float32(in_s)) / float(np.float32(out_s)) ** (1.0 / n)
        m, sh = quant.quantize_multiplier(scaling)
        return ReduceProdData(d.axes, d.keep_dims, d.output_shape, str(dt), n, in_s, in_zp, out_s, out_zp,
                              scaling, m, sh, n == 1 and context.variant.reduce_prod_copy)

    def invoke(self, context, node, d):
        if type(d) is ReduceProdData:
            context.tensors[node.outputs[0]][...] = prod_quantized(context.tensors[node.inputs[0]], d)
            return
        super().invoke(context, node, d)
