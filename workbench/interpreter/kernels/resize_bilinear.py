"""RESIZE_BILINEAR (float32, NHWC) to the size in input 1 ([new_h, new_w], a constant).

For output row y (columns alike), in float32 as TFLite's reference does:
  scale = in/out, or (in-1)/(out-1) with align_corners (and out > 1);
  src = (y + 0.5) * scale - 0.5 with half_pixel_centers (version 3), else y * scale;
  y0 = max(floor(src), 0), y1 = min(ceil(src), in-1), and the weights are (1 - (src - y0), src - y0).

Versions: float32 and uint8 → 1, int8 → 2, half_pixel_centers → 3, int16 → 4.

int8 (and int16, which TFLite always sends to the reference kernel): ``ResizeBilinearInteger`` in
10-bit fixed point — scale_10 = (2^10·in + out/2) // out ((in−1)/(out−1) with align_corners);
src_10 = o·scale_10 (+ scale_10/2 − 2^9 with half pixel centres); y0 = max(src_10 / 2^10, 0),
y1 = min((src_10 + 2^10 − 1) / 2^10, in − 1) (C division); the four int64 products with 20-bit
weights are summed and divided by 2^20 rounding half away from zero.  Input and output share the
quantization, so there is no rescaling.

uint8 takes another road in TFLite's default kernel (``optimized_ops::ResizeBilinear`` for uint8,
``ResizeBilinearGenericSmallChannel``): float32, the source positions as for float32 (y0, y1 and
the fraction, not clamped at the low end with half_pixel_centers: a position of −0.25 weighs row 0
by 1.25 and row 0 again by −0.25), the four corner weights (1−dy)(1−dx), (1−dy)dx, dy(1−dx), dy·dx,
then out = (uint8)(x00·w0 + x01·w1 + x10·w2 + x11·w3 + 0.5), summed in that order in float32 and
truncated.  One uint8 case — half_pixel_centers, depth a multiple of 8, exactly 8x in both
directions — runs a separate kernel in TFLite (``ResizeBilinear888Uint8``): 8.8 fixed point with
running sums.  Its weights are exact sixteenths (source fractions (2p+1)/16), so what it computes is
the exact bilinear value rounded half up: out = (Σ w16y·w16x·x + 128) >> 8 with integer weights
w16 ∈ {16 − f, f}; positions outside the image repeat the edge.  The workbench computes that
closed form (``ResizeBilinearUint8Data.exact_8x``).
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


@np.errstate(over="ignore", invalid="ignore")           # float inf · 0 = nan silently, as TFLite
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
U8 = np.dtype(np.uint8)
I16 = np.dtype(np.int16)


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


ResizeBilinearQuantizedData = ResizeBilinearInt8Data     # int8 and int16 share the integer kernel


def integer_reference(x, d) -> np.ndarray:
    """ResizeBilinearInteger one output value at a time: four products with 20-bit weights, then a
    division by 2^20 rounding half away from zero (C division truncates)."""
    one = 1 << 10
    out = np.empty(d.output_shape, x.dtype)
    n, oh, ow, c = d.output_shape
    for b in range(n):
        for y in range(oh):
            wy = int(d.wy[y])
            for xx in range(ow):
                wx = int(d.wx[xx])
                for k in range(c):
                    total = (int(x[b, d.y0[y], d.x0[xx], k]) * (one - wy) * (one - wx)
                             + int(x[b, d.y1[y], d.x0[xx], k]) * wy * (one - wx)
                             + int(x[b, d.y0[y], d.x1[xx], k]) * (one - wy) * wx
                             + int(x[b, d.y1[y], d.x1[xx], k]) * wy * wx)
                    half = 1 << 19 if total > 0 else -(1 << 19)
                    q = abs(total + half) >> 20
                    out[b, y, xx, k] = q if total + half >= 0 else -q
    return out


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
    return r.astype(x.dtype)


@opdata
class ResizeBilinearUint8Data(OpData):
    output_shape: tuple
    align_corners: bool
    half_pixel_centers: bool
    y0: object
    y1: object
    dy: object        # float32 [OH]: input_y − y0 (may be negative with half pixel centres)
    x0: object
    x1: object
    dx: object        # float32 [OW]
    exact_8x: bool = False     # TFLite's 8x half-pixel uint8 kernel: dy, dx are then int64 sixteenths


def sixteenth_positions(out_size, in_size):
    """8x with half pixel centres: source = (2o − 7)/16; (y0, y1, fraction in sixteenths), edges clamped."""
    s16 = 2 * np.arange(out_size, dtype=np.int64) - 7
    y0 = np.clip(s16 // 16, 0, in_size - 1)
    frac = np.where(s16 < 0, 0, s16 - 16 * y0)
    y1 = np.minimum(y0 + 1, in_size - 1)
    return y0, y1, frac


def uint8_resize_8x(x, d) -> np.ndarray:
    xi = x.astype(np.int64)
    fy = d.dy.reshape(1, -1, 1, 1)
    fx = d.dx.reshape(1, 1, -1, 1)
    acc = (xi[:, d.y0][:, :, d.x0] * ((16 - fy) * (16 - fx)) + xi[:, d.y0][:, :, d.x1] * ((16 - fy) * fx)
           + xi[:, d.y1][:, :, d.x0] * (fy * (16 - fx)) + xi[:, d.y1][:, :, d.x1] * (fy * fx))
    return ((acc + 128) >> 8).astype(np.uint8)


def float_positions(out_size, in_size, align_corners, half_pixel):
    """ComputeInterpolationValues (float): position, y0 = max(floor, 0), y1 = min(ceil, in − 1) and the
    UNclamped fraction position − y0."""
    f = np.float32
    scale = f(in_size - 1) / f(out_size - 1) if align_corners and out_size > 1 else f(in_size) / f(out_size)
    o = np.arange(out_size, dtype=np.float32)
    src = ((o + f(0.5)) * scale - f(0.5)).astype(np.float32) if half_pixel else (o * scale).astype(np.float32)
    lo = np.maximum(np.floor(src).astype(np.int64), 0)
    hi = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    return lo, hi, (src - lo.astype(np.float32)).astype(np.float32)


def uint8_weights(d):
    one = np.float32(1)
    dy = d.dy.reshape(1, -1, 1, 1)
    dx = d.dx.reshape(1, 1, -1, 1)
    return ((one - dy) * (one - dx), (one - dy) * dx, dy * (one - dx), dy * dx)


def uint8_resize(x, d) -> np.ndarray:
    w0, w1, w2, w3 = (w.astype(np.float32) for w in uint8_weights(d))
    xf = x.astype(np.float32)
    acc = xf[:, d.y0][:, :, d.x0] * w0
    acc = (acc + xf[:, d.y0][:, :, d.x1] * w1).astype(np.float32)
    acc = (acc + xf[:, d.y1][:, :, d.x0] * w2).astype(np.float32)
    acc = (acc + xf[:, d.y1][:, :, d.x1] * w3).astype(np.float32)
    acc = (acc + np.float32(0.5)).astype(np.float32)
    return np.trunc(acc).astype(np.int64).astype(np.uint8)      # C's float → uint8 conversion (values in range)


def uint8_reference(x, d) -> np.ndarray:
    """ResizeBilinearGenericSmallChannel, one output value at a time in float32 (or the exact 8x
    sum, one value at a time)."""
    n, h, w, c = x.shape
    _, oh, ow, _ = d.output_shape
    out = np.empty(d.output_shape, np.uint8)
    one = np.float32(1)
    if d.exact_8x:
        for b in range(n):
            for y in range(oh):
                for xx in range(ow):
                    fy, fx = int(d.dy[y]), int(d.dx[xx])
                    for k in range(c):
                        acc = (int(x[b, d.y0[y], d.x0[xx], k]) * (16 - fy) * (16 - fx)
                               + int(x[b, d.y0[y], d.x1[xx], k]) * (16 - fy) * fx
                               + int(x[b, d.y1[y], d.x0[xx], k]) * fy * (16 - fx)
                               + int(x[b, d.y1[y], d.x1[xx], k]) * fy * fx)
                        out[b, y, xx, k] = (acc + 128) // 256
        return out
    for b in range(n):
        for y in range(oh):
            for xx in range(ow):
                dy, dx = d.dy[y], d.dx[xx]
                ws = ((one - dy) * (one - dx), (one - dy) * dx, dy * (one - dx), dy * dx)
                taps = ((d.y0[y], d.x0[xx]), (d.y0[y], d.x1[xx]), (d.y1[y], d.x0[xx]), (d.y1[y], d.x1[xx]))
                for k in range(c):
                    terms = [np.float32(np.float32(x[b, r, col, k]) * np.float32(wt)) for (r, col), wt in zip(taps, ws)]
                    acc = terms[0]
                    for t in terms[1:]:
                        acc = np.float32(acc + t)
                    out[b, y, xx, k] = int(np.float32(acc + np.float32(0.5)))
    return out


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


@kernel(BuiltinOperator.RESIZE_BILINEAR, versions=(1, 2, 3, 4))
class ResizeBilinear(_ResizeBase):
    name = "resize_bilinear"

    def prepare(self, context, node):
        dt = context.expect_dtype(node, node.inputs[0], (F32, U8, I8, I16))
        (n, h, w, c), (oh, ow) = self.out_size(context, node)
        ac, hp = bool(node.params["align_corners"]), bool(node.params["half_pixel_centers"])
        if ac and hp:
            raise UnsupportedOpError(f"RESIZE_BILINEAR (node {node.index}): align_corners and half_pixel_centers "
                                     f"are both set, which TFLite refuses")
        if dt == U8:
            scale = oh // h
            context.set_output(node.outputs[0], (n, oh, ow, c), U8)
            if (not ac and hp and c % 8 == 0 and oh >= 8 and ow >= 8 and scale == 8 and h * scale == oh
                    and w * scale == ow):
                y0, y1, fy = sixteenth_positions(oh, h)
                x0, x1, fx = sixteenth_positions(ow, w)
                return ResizeBilinearUint8Data((n, oh, ow, c), ac, hp, y0, y1, fy, x0, x1, fx, True)
            y0, y1, dy = float_positions(oh, h, ac, hp)
            x0, x1, dx = float_positions(ow, w, ac, hp)
            return ResizeBilinearUint8Data((n, oh, ow, c), ac, hp, y0, y1, dy, x0, x1, dx)
        if dt in (I8, I16):
            context.set_output(node.outputs[0], (n, oh, ow, c), dt)
            sy, y0, y1 = integer_positions(oh, h, ac, hp)
            sx, x0, x1 = integer_positions(ow, w, ac, hp)
            return ResizeBilinearInt8Data((n, oh, ow, c), ac, hp, y0, y1, sy - (1 << 10) * y0, x0, x1,
                                          sx - (1 << 10) * x0)
        context.set_output(node.outputs[0], (n, oh, ow, c), F32)
        y0, y1, dy = source_positions(oh, h, ac, hp)
        x0, x1, dx = source_positions(ow, w, ac, hp)
        return ResizeBilinearData((n, oh, ow, c), ac, hp, y0, y1, dy.reshape(-1, 1, 1), x0, x1, dx.reshape(-1, 1))

    @np.errstate(over="ignore", invalid="ignore")       # float inf · 0 = nan silently, as TFLite
    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is ResizeBilinearInt8Data:
            out[...] = int8_resize(x, d)
            return
        if type(d) is ResizeBilinearUint8Data:
            out[...] = uint8_resize_8x(x, d) if d.exact_8x else uint8_resize(x, d)
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
            context.tensors[node.outputs[0]][...] = integer_reference(context.tensors[node.inputs[0]], d)
            return
        if type(d) is ResizeBilinearUint8Data:
            context.tensors[node.outputs[0]][...] = uint8_reference(context.tensors[node.inputs[0]], d)
            return
        context.tensors[node.outputs[0]][...] = reference(context.tensors[node.inputs[0]], d.output_shape[1:3],
                                                           d.align_corners, d.half_pixel_centers)
