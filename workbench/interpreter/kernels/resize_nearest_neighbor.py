"""RESIZE_NEAREST_NEIGHBOR (NHWC) to the size in input 1.

Source index of output index o (TFLite's reference, in float32):
  scale as RESIZE_BILINEAR; offset = 0.5 with half_pixel_centers else 0;
  src = round-half-away((o + offset) * scale) with align_corners, else floor(...);
  clamped to [0, in - 1].

Types: float32, int32, uint8 (version 1), int8 (v2), int16 (v4); version 3 = half_pixel_centers or
align_corners.  Quantized values are copied as they are (input and output share the quantization in
TFLite's converter; the kernel does not rescale).  The builtin kernel (optimized_ops) picks the same
pixels: no arithmetic variant.
"""

from __future__ import annotations

import numpy as np

from ...schema.enums import BuiltinOperator
from ..registry import OpData, kernel, opdata
from .resize_bilinear import _ResizeBase


@opdata
class ResizeNearestNeighborData(OpData):
    output_shape: tuple
    align_corners: bool
    half_pixel_centers: bool
    rows: object
    cols: object


def source_index(out_size, in_size, align_corners, half_pixel):
    """The input row (column) each output row (column) copies, for every output index."""
    f = np.float32
    if align_corners and out_size > 1:
        scale = f(in_size - 1) / f(out_size - 1)
    else:
        scale = f(in_size) / f(out_size)
    offset = f(0.5) if half_pixel else f(0.0)
    v = ((np.arange(out_size, dtype=np.float32) + offset) * scale).astype(np.float32)
    if align_corners:
        idx = (np.sign(v) * np.floor(np.abs(v) + f(0.5))).astype(np.int64)
    else:
        idx = np.floor(v).astype(np.int64)
    idx = np.minimum(idx, in_size - 1)
    if half_pixel:
        idx = np.maximum(idx, 0)
    return idx


def resize_nearest(x, d, out) -> None:
    """``reference_ops::ResizeNearestNeighbor``: output pixel (y, x) is input pixel (rows[y], cols[x])."""
    np.take(x[:, d.rows], d.cols, axis=2, out=out)


@kernel(BuiltinOperator.RESIZE_NEAREST_NEIGHBOR, versions=(1, 2, 3, 4))
class ResizeNearestNeighbor(_ResizeBase):
    name = "resize_nearest_neighbor"

    def prepare(self, context, node):
        context.expect_dtype(node, node.inputs[0], ("float32", "int32", "uint8", "int8", "int16"))
        (n, h, w, c), (oh, ow) = self.out_size(context, node)
        ac, hp = bool(node.params["align_corners"]), bool(node.params["half_pixel_centers"])
        context.set_output(node.outputs[0], (n, oh, ow, c), context.dtype(node.inputs[0]))
        return ResizeNearestNeighborData((n, oh, ow, c), ac, hp, source_index(oh, h, ac, hp),
                                         source_index(ow, w, ac, hp))

    def invoke(self, context, node, d):
        resize_nearest(context.tensors[node.inputs[0]], d, context.tensors[node.outputs[0]])
