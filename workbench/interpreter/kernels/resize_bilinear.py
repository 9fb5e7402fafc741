"""RESIZE_BILINEAR (float32, NHWC) to the size in input 1 ([new_h, new_w], a constant).

For output row y (columns alike), in float32 as TFLite's reference does:
  scale = in/out, or (in-1)/(out-1) with align_corners (and out > 1);
  src = (y + 0.5) * scale - 0.5 with half_pixel_centers (version 3), else y * scale;
  y0 = max(floor(src), 0), y1 = min(ceil(src), in-1), and the weights are (1 - (src - y0), src - y0).

int8 (version 2; v3 with half_pixel_centers): TFLite's ``reference_ops::ResizeBilinearInteger`` in
10-bit fixed point — scale_10 = (2^10·in + out/2) // out ((in−1)/(out−1) with align_corners);
src_10 = o·scale_10 (+ scale_10/2 − 2^9 with half pixel centres); y0 = max(src_10 / 2^10, 0),
y1 = min((src_10 + 2^10 − 1) / 2^10, in − 1) (C division); the four int64 products with 20-bit
weights are summed and divided by 2^20 rounding half away from zero.  Input and output share the
quantization, so there is no rescaling.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, check_rank


@opdata
class ResizeBilinearData(OpData):
    output_shape: tuple
    align_corners: bool
    half_pixel_centers: bool
    y0: object
    y1: object
    wy: object       # float32 [OH, 1, 1]: weight of row y1
    x0: object
    x1: object
    wx: object       # float32 [OW, 1]: weight of column x1


def source_positions(out_size, in_size, align_corners, half_pixel):
    f = np.float32
    if align_corners and out_size > 1:
        scale = f(in_size - 1) / f(out_size - 1)
    else:
        scale = f(in_size) / f(out_size)
    o = np.arange(out_size, dtype=np.float32)
    src = (o + f(0.5)) * scale - f(0.5) if half_pixel else o * scale
    src = src.astype(np.float32)
    lo = np.maximum(np.floor(src).astype(np.int64), 0)
    hi = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    return lo, hi, (src - lo.astype(np.float32)).astype(np.float32)


def reference(x, out_hw, align_corners, half_pixel):
    """Per output pixel, the four-neighbour formula written out."""
    n, h, w, c = x.shape
    oh, ow = out_hw
    y0, y1, dy = source_positions(oh, h, align_corners, half_pixel)
    x0, x1, dx = source_positions(ow, w, align_corners, half_pixel)
    out = np.empty((n, oh, ow, c), np.float32)
    one = np.float32(1)
    for y in range(oh):
        for xx in range(ow):
            a, b = dy[y], dx[xx]
            out[:, y, xx, :] = (x[:, y0[y], x0[xx], :] * (one - a) * (one - b) + x[:, y1[y], x0[xx], :] * a * (one - b)
                                + x[:, y0[y], x1[xx], :] * (one - a) * b + x[:, y1[y], x1[xx], :] * a * b)
    return out


I8 = np.dtype(np.int8)


def _cdiv(a, b):
    """C integer division (truncates toward zero), elementwise."""
    q = np.abs(a) // abs(b)
    return np.where((np.asarray(a) < 0) != (b < 0), -q, q)


def integer_positions(out_size, in_size, align_corners, half_pixel):
    """(src_10, lower, upper) of ComputeInterpolationValuesInteger for every output index."""
    if out_size <= 0:       # an empty output: no positions (and no division by 0)
        z = np.zeros(0, np.int64)
        return z, z, z
    scale = ((1 << 10) * in_size + out_size // 2) // out_size
    if align_corners and out_size > 1:
        scale = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    o = np.arange(out_size, dtype=np.int64)
    src = o * scale + scale // 2 - (1 << 9) if half_pixel else o * scale
    lo = np.maximum(_cdiv(src, 1 << 10), 0)
    hi = np.minimum(_cdiv(src + (1 << 10) - 1, 1 << 10), in_size - 1)
    return src, lo, hi


@opdata
class ResizeBilinearInt8Data(OpData):
    output_shape: tuple
    align_corners: bool
    half_pixel_centers: bool
    y0: object
    y1: object
    wy: object        # int64 [OH]: 10-bit weight of row y1 (src_10 − 2^10·y0)
    x0: object
    x1: object
    wx: object        # int64 [OW]


def int8_resize(x, d) -> np.ndarray:
    one = 1 << 10
    xi = x.astype(np.int64)
    wy = d.wy.reshape(1, -1, 1, 1)
    wx = d.wx.reshape(1, 1, -1, 1)
    ll = xi[:, d.y0][:, :, d.x0] * ((one - wy) * (one - wx))
    lu = xi[:, d.y1][:, :, d.x0] * (wy * (one - wx))
    rl = xi[:, d.y0][:, :, d.x1] * ((one - wy) * wx)
    ru = xi[:, d.y1][:, :, d.x1] * (wy * wx)
    total = ll + lu + rl + ru
    r = _cdiv(total + np.where(total > 0, 1 << 19, -(1 << 19)), 1 << 20)
    return r.astype(np.int8)


class _ResizeBase(Kernel):
    value_inputs = (0, 1)

    def out_size(self, context, node):
        x = node.inputs[0]
        n, h, w, c = check_rank(node, context, x, 4)
        size = np.asarray(context.require_value(node, 1, "the output size")).reshape(-1)
        if size.shape != (2,) or (size <= 0).any():
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): size {size.tolist()} must be 2 positive ints")
        if h <= 0 or w <= 0:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): the input {[n, h, w, c]} is empty in "
                                     f"height or width; there is nothing to resize from")
        return (n, h, w, c), (int(size[0]), int(size[1]))


@kernel(BuiltinOperator.RESIZE_BILINEAR, versions=(1, 2, 3))
class ResizeBilinear(_ResizeBase):
    name = "resize_bilinear"

    def prepare(self, context, node):
        dt = context.expect_dtype(node, node.inputs[0], (F32, I8))
        (n, h, w, c), (oh, ow) = self.out_size(context, node)
        ac, hp = bool(node.params["align_corners"]), bool(node.params["half_pixel_centers"])
        if ac and hp:
            raise UnsupportedOpError(f"RESIZE_BILINEAR (node {node.index}): align_corners and half_pixel_centers "
                                     f"are both set, which TFLite refuses")
        if dt == I8:
            context.set_output(node.outputs[0], (n, oh, ow, c), I8)
            sy, y0, y1 = integer_positions(oh, h, ac, hp)
            sx, x0, x1 = integer_positions(ow, w, ac, hp)
            return ResizeBilinearInt8Data((n, oh, ow, c), ac, hp, y0, y1, sy - (1 << 10) * y0, x0, x1,
                                          sx - (1 << 10) * x0)
        context.set_output(node.outputs[0], (n, oh, ow, c), F32)
        y0, y1, dy = source_positions(oh, h, ac, hp)
        x0, x1, dx = source_positions(ow, w, ac, hp)
        return ResizeBilinearData((n, oh, ow, c), ac, hp, y0, y1, dy.reshape(-1, 1, 1), x0, x1, dx.reshape(-1, 1))

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is ResizeBilinearInt8Data:
            out[...] = int8_resize(x, d)
            return
        one = np.float32(1)
        top = x[:, d.y0]                     # [N, OH, W, C]
        bot = x[:, d.y1]
        rows = top * (one - d.wy) + bot * d.wy
        left = rows[:, :, d.x0]
        right = rows[:, :, d.x1]
        np.multiply(left, one - d.wx, out=out)
        out += right * d.wx

    def invoke_reference(self, context, node, d):
        if type(d) is ResizeBilinearInt8Data:
            context.tensors[node.outputs[0]][...] = int8_resize(context.tensors[node.inputs[0]], d)
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.output_shape[1:3],
                                                           d.align_corners, d.half_pixel_centers)
