"""MEAN over the axes in input 1 (a constant), ``keep_dims`` from ReducerOptions.

Versions: float32 and uint8 → 1, int8 → 2, int16 → 3.  int16 needs zero points 0 on input and
output (TFLite's Prepare).

float32: each output's values summed in float32, then divided by their count (float32).  The order of
the additions is ``Variant.float_sum_order`` (see _reduce.py): ``reference_ops::Mean`` starts from 0
and adds in memory order; ``optimized_ops::Mean`` starts from the first value, and for a mean over
trailing axes (after dropping size-1 dimensions: [2, 5, 40] over the last axis, not [1, 128]) uses
Eigen's packet sums.

The quantized types have two algorithms in TFLite (``kernels/reduce.cc``):
  * ``reference_ops::QuantizedMeanOrSum`` (every mean of the reference build, every int16 mean, and
    whatever the builtin kernel does not send to the next one): (M, shift) = quantize_multiplier(
    in_scale / out_scale) in double; the 1/count is folded into the multiplier: k = min(floor(log2
    count), 32, 31 + shift), M' = (M · 2^k) // count, shift' = shift − k;
    out = clamp(MBQM(Σx − in_zp·count, M', shift') + out_zp), Σx an int32.
  * ``optimized_(integer_)ops::Mean`` — the builtin kernel (``Variant.quantized_mean``) for a uint8 or
    int8 4-D input, keep_dims, axes {1, 2} after resolving negative and repeated axes (global average
    pooling; what MobileNet uses): acc = Σx (int32); real_scale = in_scale / (count · out_scale)
    (float32) → (output_multiplier, output_shift); bias = out_zp − (int)round_half_away((float)(in_zp ·
    in_scale / out_scale)); out = clamp(MBQM(acc) + bias).  On x86 litert takes channels 16 at a time
    through NEON code (NEON_2_SSE) whose final rounding shift sends ties up, and the remaining
    depth % 16 channels through the scalar MBQM (ties away from zero).
The speed layer (float32, builtin order): ``workbench/interpreter/fast/reduce.py``.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from .. import quant
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, U8, normalize_axis
from ._reduce import eigen_sum, normalized, reduced_rows, sequential_sum

__all__ = ["MeanData", "MeanQuantizedData", "reduced_rows", "mean_float", "mean_quantized_reference",
           "mean_quantized_optimized"]


@opdata
class MeanQuantizedData(OpData):
    dtype: str
    axes: tuple
    keep_dims: bool
    output_shape: tuple
    algorithm: str                  # "optimized 4-D HW (integer)" | "reference (integer, ...)"
    count: int                      # values averaged per output
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    real_scale: float = 0.0         # in_scale / (count · out_scale), float32
    output_multiplier: int = 0
    output_shift: int = 0
    bias: int = 0


MeanInt8Data = MeanQuantizedData     # the name before uint8/int16 were added


@opdata
class MeanData(OpData):
    axes: tuple
    keep_dims: bool
    output_shape: tuple


@np.errstate(over="ignore", invalid="ignore")      # float inf / nan silently, as TFLite
def mean_float(x: np.ndarray, d, order: str) -> np.ndarray:
    """``reference_ops::Mean`` (``order`` "sequential") or ``optimized_ops::Mean`` ("eigen-packets")."""
    if x.size == 0:                                  # TFLite fills the output with NaN
        return np.full(d.output_shape, np.nan, np.float32)
    count = int(np.prod([x.shape[a] for a in d.axes], dtype=np.int64))
    dims, axes = normalized(x.shape, d.axes)
    if order == "eigen-packets" and len(dims) > 1 and axes == [len(dims) - 1]:
        sums = eigen_sum(np.ascontiguousarray(x).reshape(dims))
    else:
        sums = sequential_sum(reduced_rows(x, d.axes), from_zero=order == "sequential")
    return (sums / np.float32(count)).astype(np.float32).reshape(d.output_shape)


def mean_quantized_reference(x, d) -> np.ndarray:
    """``reference_ops::QuantizedMeanOrSum`` (mean): the zero points out of an int32 sum, then one
    MultiplyByQuantizedMultiplier with 1/count inside the multiplier."""
    lo, hi = quant.quantized_range(x.dtype)
    acc = x.astype(np.int64).sum(axis=d.axes, keepdims=d.keep_dims)
    shifted = quant.wrap_int32_array(acc - d.input_zero_point * d.count)
    v = quant.multiply_by_quantized_multiplier_array(shifted, d.output_multiplier, d.output_shift)
    return np.clip(v + d.output_zero_point, lo, hi).astype(x.dtype)


def mean_quantized_optimized(x, d) -> np.ndarray:
    """``optimized_integer_ops::Mean`` / ``optimized_ops::Mean`` over H and W: MBQM of the raw sum, then
    the bias; channels in blocks of 16 go through NEON (vrshl: ties up), the rest one by one (ties away)."""
    lo, hi = quant.quantized_range(x.dtype)
    acc = x.astype(np.int64).sum(axis=d.axes, keepdims=d.keep_dims)
    depth = acc.shape[-1]
    up = np.arange(depth) < depth // 16 * 16
    v_up = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, True)
    v_away = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, False)
    return np.clip(np.where(up, v_up, v_away) + d.bias, lo, hi).astype(x.dtype)


def resolved_axes(values, rank) -> list:
    """TFLite's ResolveAxis: negative axes counted from the end, repeats dropped, order kept."""
    out = []
    for a in values:
        a = int(a) + rank if int(a) < 0 else int(a)
        if a not in out:
            out.append(a)
    return out


def takes_optimized_mean(variant, dt, shape, raw_axes, keep) -> bool:
    """Whether the build sends a quantized MEAN to ``optimized_(integer_)ops::Mean`` (reduce.cc's test)."""
    return (variant.quantized_mean == "optimized" and dt in (U8, I8) and keep and len(shape) == 4
            and sorted(raw_axes) == [1, 2] and len(raw_axes) == 2)


def prepare_quantized(context, node, shape, axes, keep, out, dt):
    x_t, y_t = node.inputs[0], node.outputs[0]
    in_s, in_zp = quant.tensor_scale_zp(context, x_t)
    out_s, out_zp = quant.tensor_scale_zp(context, y_t)
    if dt == I16 and (in_zp != 0 or out_zp != 0):
        raise UnsupportedOpError(f"MEAN (node {node.index}): int16 zero points must be 0 (input {in_zp}, output "
                                 f"{out_zp}), as TFLite requires")
    count = int(np.prod([shape[a] for a in axes])) if axes else 1
    if count == 0:
        raise UnsupportedOpError(f"MEAN (node {node.index}): {dt} mean over an empty axis (no values to average)")
    raw_axes = resolved_axes(np.asarray(context.value(node.inputs[1])).reshape(-1), len(shape))
    context.set_output(y_t, out, dt)
    if takes_optimized_mean(context.variant, dt, shape, raw_axes, keep):
        temp = np.float32(np.float32(in_zp) * np.float32(in_s)) / np.float32(out_s)
        temp = np.float32(temp + np.float32(0.5)) if temp > 0 else np.float32(temp - np.float32(0.5))
        bias = out_zp - int(temp)                                  # static_cast<int32_t> truncates
        real = np.float32(in_s) / (np.float32(count) * np.float32(out_s))
        m, sh = quant.quantize_multiplier(float(real))
        return MeanQuantizedData(str(dt), axes, keep, out, "optimized 4-D HW (integer)", count, in_s, in_zp, out_s,
                                 out_zp, float(real), m, sh, bias)
    real = float(np.float64(np.float32(in_s)) / np.float64(np.float32(out_s)))
    m, sh = quant.quantize_multiplier(real)
    k = min(count.bit_length() - 1, 32, 31 + sh)
    m2 = (m << k) // count if k >= 0 else m
    return MeanQuantizedData(str(dt), axes, keep, out, "reference (integer, 1/count folded into the multiplier)",
                             count, in_s, in_zp, out_s, out_zp, real / count, int(m2), int(sh - k), 0)


@kernel(BuiltinOperator.MEAN, versions=(1, 2, 3))
class Mean(Kernel):
    name = "mean"
    value_inputs = (0, 1)

    def prepare(self, context, node):
        x_t = node.inputs[0]
        dt = context.expect_dtype(node, x_t, (F32, U8, I8, I16))
        shape = context.shape(x_t)
        axes_v = context.require_value(node, 1, "the axes")
        if np.asarray(axes_v).dtype.kind not in "iu":
            raise UnsupportedOpError(f"MEAN (node {node.index}): the axes must be integers, got "
                                     f"{np.asarray(axes_v).dtype}")
        axes = tuple(sorted({normalize_axis(node, int(a), len(shape)) for a in np.asarray(axes_v).reshape(-1)}))
        keep = bool(node.params["keep_dims"])
        if keep:
            out = tuple(1 if i in axes else d for i, d in enumerate(shape))
        else:
            out = tuple(d for i, d in enumerate(shape) if i not in axes)
        if dt != F32:
            return prepare_quantized(context, node, shape, axes, keep, out, dt)
        context.set_output(node.outputs[0], out, F32)
        return MeanData(axes, keep, out)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is MeanData:
            out[...] = mean_float(x, d, context.variant.float_sum_order)
        elif d.algorithm.startswith("optimized"):
            out[...] = mean_quantized_optimized(x, d)
        else:
            out[...] = mean_quantized_reference(x, d)
