"""L2_POOL_2D (float32): sqrt(mean of x^2 over the in-image taps of each window), then the fused
activation.  Windows, padding and output size as AVERAGE_POOL_2D (``tensorflow/lite/kernels/padding.h``).

TFLite has no quantized L2 pool (its Prepare refuses uint8/int8 and its Eval int16), and neither does
this kernel: only float32, version 1."""

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import Kernel, kernel
from ._common import F32, apply_activation, tap_range
from ._pool import prepare_pool


def reference(x: np.ndarray, d) -> np.ndarray:
    n, h, w, c = x.shape
    _, oh, ow, _ = d.output_shape
    out = np.zeros(d.output_shape, np.float32)
    v = x.astype(np.float64)
    for oy in range(oh):
        y0, y1 = tap_range(oy, d.stride_h, d.pad_top, 1, d.filter_h, h)
        for ox in range(ow):
            x0, x1 = tap_range(ox, d.stride_w, d.pad_left, 1, d.filter_w, w)
            ys, xs = oy * d.stride_h - d.pad_top, ox * d.stride_w - d.pad_left
            win = v[:, ys + y0:ys + y1, xs + x0:xs + x1, :]
            count = (y1 - y0) * (x1 - x0)
            if count:
                out[:, oy, ox, :] = np.sqrt((win * win).sum(axis=(1, 2)) / count)
    apply_activation(out, d.output_activation_min, d.output_activation_max)
    return out


@kernel(BuiltinOperator.L2_POOL_2D, versions=(1,))
class L2Pool2D(Kernel):
    name = "l2_pool_2d"

    def prepare(self, context, node):
        return prepare_pool(context, node, (F32,))

    def invoke(self, context, node, d):
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d)
