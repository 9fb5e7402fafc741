"""SUM: sum over the axes (integers wrap like C); axes from input 1, ``keep_dims`` from
ReducerOptions (see _reduce.py).

Versions: float32, int32, int64 and the quantized uint8 and int16 → 1, int8 → 2 (op_version.cc
only looks for int8).  int16 needs zero points 0 (TFLite's Prepare).

float32: one accumulator per output adding its values in memory order, starting from 0 in the
reference kernel and from the first value in the optimized one (``Variant.float_sum_order``; only
the sign of a sum of −0s differs).

A quantized sum rescales, and the two builds do it differently (``Variant.quantized_sum``):
  * ``reference_ops::QuantizedMeanOrSum`` (compute_sum), in fixed point:
    out = clamp(MBQM(Σx − in_zp·count, M, shift) + out_zp), Σx an int32, (M, shift) =
    quantize_multiplier(in_scale / out_scale) in double;
  * ``optimized_ops::QuantizedMeanOrSum`` (the builtin kernel), in float32: scale = in_scale /
    out_scale (float32); bias = (float32)(−in_zp) · scale · count (float32, in that order);
    out = (int32)round(Σx · scale + bias) + out_zp (round half away from zero), clamped to the type.
LiteRT's reference build hands int8 and int16 data to the uint8 version of QuantizedMeanOrSum
(kernels/reduce.cc): it reads the bytes as uint8 and clamps to [0, 255].  The reference variant here
does not copy that slip: it applies the fixed-point formula to the values.
The speed layer (float32, builtin order): ``workbench/interpreter/fast/reduce.py``.
"""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import OpData, kernel, opdata
from ._common import F32, I8, I16, I32, I64, U8
from ._reduce import ReduceKernel, reduced_rows, sequential_sum


@opdata
class SumData(OpData):
    axes: tuple
    keep_dims: bool
    output_shape: tuple
    dtype: str
    count: int                    # values added per output
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    scale: float                  # float32 in_scale / out_scale (the optimized kernel)
    bias: float                   # float32 −in_zp · scale · count (the optimized kernel)
    output_multiplier: int        # fixed-point in_scale / out_scale (the reference kernel)
    output_shift: int


def sum_integers(x: np.ndarray, axes: tuple, keep: bool) -> np.ndarray:
    """``reference_ops::ReduceGeneric`` (sum) for int32 / int64: the order does not matter, C wraps."""
    return np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype)


@np.errstate(over="ignore", invalid="ignore")      # float inf / nan silently, as TFLite
def sum_float(x: np.ndarray, d, order: str) -> np.ndarray:
    """``reference_ops::ReduceGeneric`` (``order`` "sequential": from 0) or ``optimized_ops::
    ReduceGeneric`` (from the first value) for float32: one accumulator per output, in memory order."""
    if x.size == 0:
        return np.zeros(d.output_shape, np.float32)
    return sequential_sum(reduced_rows(x, d.axes), from_zero=order == "sequential").reshape(d.output_shape)


def sum_fixed_point(x: np.ndarray, d) -> np.ndarray:
    """``reference_ops::QuantizedMeanOrSum`` (sum): the zero points out of the int32 sum, one MBQM."""
    acc = quant.wrap_int32_array(x.astype(np.int64).sum(axis=d.axes, keepdims=d.keep_dims)
                                 - d.input_zero_point * d.count)
    v = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift) + d.output_zero_point
    lo, hi = quant.quantized_range(x.dtype)
    return np.clip(v, lo, hi).astype(x.dtype).reshape(d.output_shape)


def sum_float32(x: np.ndarray, d) -> np.ndarray:
    """``optimized_ops::QuantizedMeanOrSum`` (sum): the int32 sum rescaled in float32, rounded."""
    acc = quant.wrap_int32_array(x.astype(np.int64).sum(axis=d.axes, keepdims=d.keep_dims))
    f = (acc.astype(np.float32) * np.float32(d.scale)).astype(np.float32) + np.float32(d.bias)
    v = quant.round_half_away(f.astype(np.float32)).astype(np.int64) + d.output_zero_point
    lo, hi = quant.quantized_range(x.dtype)
    return np.clip(v, lo, hi).astype(x.dtype).reshape(d.output_shape)


@kernel(BuiltinOperator.SUM, versions=(1, 2))
class Sum(ReduceKernel):
    name = "sum"
    dtypes = (F32, I32, I64, U8, I8, I16)
    reduce = staticmethod(sum_integers)

    def prepare(self, context, node):
        d = super().prepare(context, node)
        dt = context.dtype(node.inputs[0])
        if dt not in (U8, I8, I16):
            return d
        in_s, in_zp = quant.tensor_scale_zp(context, node.inputs[0])
        out_s, out_zp = quant.tensor_scale_zp(context, node.outputs[0])
        if dt == I16 and (in_zp != 0 or out_zp != 0):
            raise UnsupportedOpError(f"SUM (node {node.index}): int16 zero points must be 0 (input {in_zp}, output "
                                     f"{out_zp}), as TFLite requires")
        shape = context.shape(node.inputs[0])
        count = int(np.prod([shape[a] for a in d.axes], dtype=np.int64)) if d.axes else 1
        scale = np.float32(np.float32(in_s) / np.float32(out_s))
        bias = np.float32(np.float32(np.float32(-in_zp) * scale) * np.float32(count))
        m, sh = quant.quantize_multiplier(float(np.float64(np.float32(in_s)) / np.float64(np.float32(out_s))))
        return SumData(d.axes, d.keep_dims, d.output_shape, str(dt), count, in_s, in_zp, out_s, out_zp, float(scale),
                       float(bias), m, sh)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is SumData:
            rescale = sum_fixed_point if context.variant.quantized_sum == "fixed-point" else sum_float32
            out[...] = rescale(x, d)
        elif x.dtype == F32:
            out[...] = sum_float(x, d, context.variant.float_sum_order)
        else:
            out[...] = sum_integers(x, d.axes, d.keep_dims).reshape(out.shape)
