"""MAX_POOL_2D: the largest value of each window's taps inside the image (padding never wins).

float32 and uint8 (version 1), int8 (version 2), int16 (version 3).  A quantized pool compares the
raw integers — input and output share scale and zero point (``_pool.prepare_pool`` checks it) — and
then clamps to the fused activation's integer range (``reference/integer_ops/pooling.h``).

float32: a NaN never wins either.  TFLite compares ``v > max`` starting from the lowest float, so a
window of NaNs gives −FLT_MAX after the NONE clamp and a window with NaN and 2 gives 2 (measured in
litert); ``np.fmax`` keeps the non-NaN operand in the same way.  ±inf become ±FLT_MAX by the clamp.

Both builds of TFLite agree here: no rounding happens, so there is no variant to choose.
The speed layer: ``workbench/interpreter/fast/pool.py``.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, kernel
from ._pool import Pool2DQuantizedData, padded_input, prepare_pool, taps


def max_pool_float(x: np.ndarray, d) -> np.ndarray:
    """``reference_ops::MaxPool``: per window, the maximum of the taps inside the image, clamped."""
    if x.size == 0 or 0 in d.output_shape:      # an empty output (VALID, input smaller than the window)
        return np.zeros(d.output_shape, np.float32)
    xp = padded_input(x, d, -np.inf)
    out = np.full(d.output_shape, -np.inf, np.float32)
    for rows, cols in taps(d):
        np.fmax(out, xp[:, rows, cols, :], out=out)
    return np.clip(out, d.output_activation_min, d.output_activation_max).astype(np.float32)


def max_pool_quantized(x: np.ndarray, d) -> np.ndarray:
    """``reference_integer_ops::MaxPool`` (int8, int16; uint8 shares it): the same on raw integers."""
    lowest = np.iinfo(x.dtype).min
    if x.size == 0 or 0 in d.output_shape:
        return np.zeros(d.output_shape, x.dtype)
    xp = padded_input(x, d, lowest)
    out = np.full(d.output_shape, lowest, x.dtype)
    for rows, cols in taps(d):
        np.maximum(out, xp[:, rows, cols, :], out=out)
    return np.clip(out, d.output_activation_min, d.output_activation_max).astype(x.dtype)


@kernel(BuiltinOperator.MAX_POOL_2D, versions=(1, 2, 3))
class MaxPool2D(Kernel):
    name = "max_pool_2d"

    def prepare(self, context, node):
        return prepare_pool(context, node)

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        if type(d) is Pool2DQuantizedData:
            context.tensors[node.outputs[0]][...] = max_pool_quantized(x, d)
        else:
            context.tensors[node.outputs[0]][...] = max_pool_float(x, d)
