"""MEAN over the axes in input 1 (a constant), ``keep_dims`` from ReducerOptions.

Versions: float32 and uint8 → 1, int8 → 2, int16 → 3.  int16 needs zero points 0 on input and
output (TFLite's Prepare).  The quantized types have two algorithms in TFLite (``kernels/reduce.cc``):
  * uint8 or int8, 4-D input, keep_dims, axes {1, 2} — after resolving negative and repeated axes —
    (global average pooling; what MobileNet uses) → ``optimized_(integer_)ops::Mean``:
    acc = Σ x (raw integers, int32);
    real_scale = in_scale / (count · out_scale) (float32) → (output_multiplier, output_shift);
    bias = out_zp − (int)round_half_away((float)(in_zp · in_scale / out_scale));
    out = clamp(MBQM(acc, output_multiplier, output_shift) + bias) to the type's range; on x86 litert
    takes channels 16 at a time through NEON code (NEON_2_SSE) whose final rounding shift sends ties
    up, and the remaining depth % 16 channels through the scalar MBQM (ties away from zero).
  * anything else (and every int16 mean) → ``reference_ops::QuantizedMeanOrSum`` (current TFLite;
    older releases did this in float32): (M, shift) = quantize_multiplier(in_scale / out_scale) in
    double; the 1/count is folded into the multiplier: k = min(floor(log2 count), 32, 31 + shift),
    M' = (M · 2^k) // count, shift' = shift − k; out = clamp(MBQM(Σx − in_zp·count, M', shift') + out_zp).
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from .. import quant
from ._common import F32, normalize_axis

I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)
I16 = np.dtype(np.int16)


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


def reduced_rows(x: np.ndarray, axes: tuple) -> np.ndarray:
    """The input as [outputs, count]: kept axes first (row-major, as the output), reduced axes last."""
    kept = [a for a in range(x.ndim) if a not in axes]
    return x.transpose(kept + list(axes)).reshape(int(np.prod([x.shape[a] for a in kept], dtype=np.int64)), -1)


def reference_quantized(x, d) -> np.ndarray:
    """One output at a time, with the scalar fixed-point functions of the quant package."""
    lo, hi = quant.quantized_range(x.dtype)
    out = []
    for c, row in enumerate(reduced_rows(x, d.axes)):
        acc = sum(int(v) for v in row)
        if d.algorithm.startswith("optimized"):
            channel = c % d.output_shape[-1]
            ties_up = channel < d.output_shape[-1] // 16 * 16
            mbqm = quant.multiply_by_quantized_multiplier_ruy if ties_up else quant.multiply_by_quantized_multiplier
            v = mbqm(acc, d.output_multiplier, d.output_shift) + d.bias
        else:
            shifted = quant._wrap_int32(acc - d.input_zero_point * d.count)
            v = quant.multiply_by_quantized_multiplier(shifted, d.output_multiplier, d.output_shift)
            v += d.output_zero_point
        out.append(min(max(v, lo), hi))
    return np.array(out, np.int64).astype(x.dtype).reshape(d.output_shape)


def mean_quantized(x, d) -> np.ndarray:
    """The vectorised form of :func:`reference_quantized`."""
    lo, hi = quant.quantized_range(x.dtype)
    acc = x.astype(np.int64).sum(axis=d.axes, keepdims=d.keep_dims)
    if d.algorithm.startswith("optimized"):
        # channels in blocks of 16 go through NEON (vrshl: ties up), the rest one by one (ties away)
        depth = acc.shape[-1]
        up = np.arange(depth) < depth // 16 * 16
        v_up = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, True)
        v_away = quant.multiply_by_quantized_multiplier_array(acc, d.output_multiplier, d.output_shift, False)
        v = np.where(up, v_up, v_away) + d.bias
        return np.clip(v, lo, hi).astype(x.dtype)
    shifted = ((acc - d.input_zero_point * d.count + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)    # int32, as C
    v = quant.multiply_by_quantized_multiplier_array(shifted, d.output_multiplier, d.output_shift) + d.output_zero_point
    return np.clip(v, lo, hi).astype(x.dtype)


def resolved_axes(values, rank) -> list:
    """TFLite's ResolveAxis: negative axes counted from the end, repeats dropped, order kept."""
    out = []
    for a in values:
        a = int(a) + rank if int(a) < 0 else int(a)
        if a not in out:
            out.append(a)
    return out


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
    if dt != I16 and keep and len(shape) == 4 and len(raw_axes) == 2 and sorted(raw_axes) == [1, 2]:
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


@opdata
class MeanData(OpData):
    axes: tuple
    keep_dims: bool
    output_shape: tuple


def reference(x: np.ndarray, axes: tuple, keep_dims: bool) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):      # float inf / nan silently, as TFLite
        return np.mean(x.astype(np.float64), axis=axes, keepdims=keep_dims).astype(np.float32)


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
        if type(d) is MeanQuantizedData:
            out[...] = mean_quantized(x, d)
            return
        with np.errstate(over="ignore", invalid="ignore"):  # float inf / nan silently, as TFLite
            np.mean(x, axis=d.axes, keepdims=d.keep_dims, out=out)

    def invoke_reference(self, context, node, d):
        if type(d) is MeanQuantizedData:
            context.tensors[node.outputs[0]][...] = reference_quantized(context.tensors[node.inputs[0]], d)
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.axes, d.keep_dims)
