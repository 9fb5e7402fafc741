"""SUM: sum over the axes (integers wrap like C); axes from input 1, ``keep_dims`` from
ReducerOptions (see _reduce.py).

Versions: float32, int32, int64 and the quantized uint8 and int16 → 1, int8 → 2 (op_version.cc
only looks for int8).  int16 needs zero points 0 (TFLite's Prepare).

A quantized sum rescales, and TFLite's default kernel (``optimized_ops::QuantizedMeanOrSum`` with
compute_sum) does it in float32, not in fixed point:
  acc = Σ x (raw integers, int32); scale = in_scale / out_scale (float32);
  bias = (float32)(−in_zp) · scale · count (float32, in that order);
  out = (int32)round(acc · scale + bias) + out_zp (round half away from zero), clamped to the type.
The reference kernel (``reference_ops::QuantizedMeanOrSum``, TFLite Micro) would use the fixed-point
multiplier of in_scale / out_scale instead — it differs by one in rare cases; the workbench follows
what litert runs and keeps that multiplier in ``SumData`` for comparison.
"""

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import OpData, kernel, opdata
from ._common import F32
from ._elementwise import I32, I64
from ._reduce import ReduceKernel
from .mean import reduced_rows

U8, I8, I16 = np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16)


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
    scale: float                  # float32 in_scale / out_scale
    bias: float                   # float32 −in_zp · scale · count
    output_multiplier: int        # fixed-point in_scale / out_scale (what the reference kernel would use)
    output_shift: int


def reference(x: np.ndarray, axes: tuple, keep: bool) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
        return np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype)


def sum_quantized(x: np.ndarray, d) -> np.ndarray:
    acc = x.astype(np.int64).sum(axis=d.axes, keepdims=d.keep_dims)
    acc = ((acc + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)                       # int32 accumulator
    f = (acc.astype(np.float32) * np.float32(d.scale)).astype(np.float32) + np.float32(d.bias)
    v = quant.round_half_away(f.astype(np.float32)).astype(np.int64) + d.output_zero_point
    lo, hi = quant.quantized_range(x.dtype)
    return np.clip(v, lo, hi).astype(x.dtype).reshape(d.output_shape)


def reference_quantized(x: np.ndarray, d) -> np.ndarray:
    """One output at a time: the float32 formula of the module docstring."""
    lo, hi = quant.quantized_range(x.dtype)
    out = []
    for row in reduced_rows(x, d.axes):
        acc = quant._wrap_int32(sum(int(v) for v in row))
        f = np.float32(np.float32(acc) * np.float32(d.scale)) + np.float32(d.bias)
        v = int(np.copysign(np.floor(abs(float(f)) + 0.5), float(f))) + d.output_zero_point
        out.append(min(max(v, lo), hi))
    return np.array(out, np.int64).astype(x.dtype).reshape(d.output_shape)


@kernel(BuiltinOperator.SUM, versions=(1, 2))
class Sum(ReduceKernel):
    name = "sum"
    dtypes = (F32, I32, I64, U8, I8, I16)
    reduce = staticmethod(reference)

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
        if type(d) is SumData:
            context.tensors[node.outputs[0]][...] = sum_quantized(context.tensors[node.inputs[0]], d)
            return
        super().invoke(context, node, d)

    def invoke_reference(self, context, node, d):
        if type(d) is SumData:
            context.tensors[node.outputs[0]][...] = reference_quantized(context.tensors[node.inputs[0]], d)
            return
        super().invoke(context, node, d)
