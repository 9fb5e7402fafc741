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

When every reduced axis has size 1 (n = 1) TFLite's optimized kernel drops those axes, finds
nothing to reduce and COPIES the input's integers unchanged — no rescaling, whatever the two
scales are.  The workbench does the same (``ReduceProdData.copy``).
"""

import numpy as np

from ...schema.enums import BuiltinOperator
from .. import quant
from ...perf.jit import njit
from ..fast.requantize import mbqm_int64_jit
from ..registry import OpData, kernel, opdata
from ._common import F32
from ._elementwise import I32, I64, refuse
from ._reduce import QUANTIZED, ReduceKernel, check_quantization
from .mean import reduced_rows

I8, I16 = np.dtype(np.int8), np.dtype(np.int16)


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
    copy: bool                 # n == 1: the integers are copied (see the module docstring)


def reference(x: np.ndarray, axes: tuple, keep: bool) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
        return np.prod(x, axis=axes, keepdims=keep, dtype=x.dtype)


def reference_quantized(x: np.ndarray, d) -> np.ndarray:
    """One output at a time with the scalar int64 MBQM of the quant package."""
    if d.copy:
        return x.reshape(d.output_shape).copy()
    lo, hi = quant.quantized_range(x.dtype)
    mbqm = quant.multiply_by_quantized_multiplier_int64
    out = []
    for row in reduced_rows(x, d.axes):
        p = int(row[0]) - d.input_zero_point
        for v in row[1:]:
            p = mbqm(p * (int(v) - d.input_zero_point), d.multiplier, d.shift)
        r = mbqm(p, d.multiplier, d.shift) + d.output_zero_point
        out.append(min(max(r, lo), hi))
    return np.array(out, np.int64).astype(x.dtype).reshape(d.output_shape)


@njit
def prod_rows_numba(rows, in_zp, out_zp, multiplier, shift, lo, hi, out):
    for r in range(rows.shape[0]):
        p = np.int64(rows[r, 0]) - in_zp
        for k in range(1, rows.shape[1]):
            p = mbqm_int64_jit(p * (np.int64(rows[r, k]) - in_zp), multiplier, shift)
        v = mbqm_int64_jit(p, multiplier, shift) + out_zp
        out[r] = min(max(v, lo), hi)


@kernel(BuiltinOperator.REDUCE_PROD, versions=(1, 2))
class ReduceProd(ReduceKernel):
    name = "reduce_prod"
    dtypes = (F32, I32, I64) + QUANTIZED
    reduce = staticmethod(reference)

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
                              scaling, m, sh, n == 1)

    def invoke(self, context, node, d):
        if type(d) is ReduceProdData:
            x = context.tensors[node.inputs[0]]
            if d.copy:
                context.tensors[node.outputs[0]][...] = x.reshape(d.output_shape)
                return
            rows = np.ascontiguousarray(reduced_rows(x, d.axes))
            out = np.empty(rows.shape[0], np.int64)
            lo, hi = quant.quantized_range(x.dtype)
            prod_rows_numba(rows, d.input_zero_point, d.output_zero_point, d.multiplier, d.shift, lo, hi, out)
            context.tensors[node.outputs[0]][...] = out.astype(x.dtype).reshape(d.output_shape)
            return
        super().invoke(context, node, d)

    def invoke_reference(self, context, node, d):
        if type(d) is ReduceProdData:
            context.tensors[node.outputs[0]][...] = reference_quantized(context.tensors[node.inputs[0]], d)
            return
        super().invoke(context, node, d)
