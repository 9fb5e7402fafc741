"""AVERAGE_POOL_2D: the mean of each window's taps that fall inside the image.

Padding never counts: a corner window of a SAME pool averages fewer values (``tensorflow/lite/kernels/padding.h``).

float32: one float32 sum per output, taps added row by row, then divided by the number of taps
inside the image, then clamped (``reference_ops::AveragePool``).

Quantized (uint8 v1, int8 v2, int16 v3): the raw integer taps summed in int32, divided by the number of in-image
taps rounding half away from zero ((sum ± count/2) / count with C's truncating division), then clamped to the fused
activation's range (``reference/integer_ops/pooling.h``). TFLite runs three routines here (optimized uint8 with a
uint32 accumulator, optimized int8, reference int16); for values that cannot be negative (uint8) the two roundings
coincide, so one formula covers all three, in both builds.

The speed layer: ``workbench/interpreter/fast/pool.py``.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, kernel
from ._pool import Pool2DQuantizedData, padded_input, prepare_pool, taps


def _sum_and_count(x: np.ndarray, d, acc_dtype):
    """Per output: the sum of the taps inside the image (padding adds 0) and how many there were."""
    xp = padded_input(x.astype(acc_dtype), d, 0)
    inside = padded_input(np.ones((1,) + x.shape[1:3] + (1,), np.int32), d, 0)
    total = np.zeros(d.output_shape, acc_dtype)
    count = np.zeros((1,) + d.output_shape[1:3] + (1,), np.int32)
    for rows, cols in taps(d):
        total += xp[:, rows, cols, :]
        count += inside[:, rows, cols, :]
    return total, count


@np.errstate(over="ignore", invalid="ignore", divide="ignore")     # float inf / nan silently, as TFLite
def average_pool_float(x: np.ndarray, d) -> np.ndarray:
    """``reference_ops::AveragePool``: float32 sum of the in-image taps / their count, clamped."""
    if x.size == 0 or 0 in d.output_shape:      # an empty output (VALID, input smaller than the window)
        return np.zeros(d.output_shape, np.float32)
    total, count = _sum_and_count(x, d, np.float32)
    out = np.where(count > 0, total / np.maximum(count, 1).astype(np.float32), np.float32(0))
    return np.clip(out, d.output_activation_min, d.output_activation_max).astype(np.float32)


def average_pool_quantized(x: np.ndarray, d) -> np.ndarray:
    """``reference_integer_ops::AveragePool``: int32 sum / count, rounding half away from zero, clamped."""
    if x.size == 0 or 0 in d.output_shape:
        return np.zeros(d.output_shape, x.dtype)
    total, count = _sum_and_count(x, d, np.int32)
    count = np.maximum(count, 1)
    half = count // 2
    q = np.where(total > 0, (total + half) // count, -((-total + half) // count))
    return np.clip(q, d.output_activation_min, d.output_activation_max).astype(x.dtype)


@kernel(BuiltinOperator.AVERAGE_POOL_2D, versions=(1, 2, 3))
class AveragePool2D(Kernel):
    name = "average_pool_2d"

    def prepare(self, context, node):
        return prepare_pool(context, node)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        if type(d) is Pool2DQuantizedData:
            context.tensors[node.outputs[0]][...] = average_pool_quantized(x, d)
        else:
            context.tensors[node.outputs[0]][...] = average_pool_float(x, d)
