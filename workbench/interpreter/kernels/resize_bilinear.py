"""RESIZE_BILINEAR (NHWC) to the size in input 1 ([new_h, new_w], a constant).

Versions: float32 and uint8 → 1, int8 → 2, half_pixel_centers → 3, int16 → 4.

Output row y samples the input at (columns alike; ``ComputeInterpolationValues``, float32):
  scale = in/out, or (in−1)/(out−1) with align_corners (and out > 1);
  src = (y + 0.5)·scale − 0.5 with half_pixel_centers, else y·scale;
  y0 = max(floor(src), 0), y1 = min(ceil(src), in − 1), dy = src − y0 (not clamped at the low end:
  with half pixel centres a position of −0.25 weighs row 0 by 1.25 and row 0 again by −0.25).

float32 and uint8: the two builds add the four corners differently (``Variant.resize_bilinear``):
  * ``reference_ops::ResizeBilinear``: x00·(1−dy)·(1−dx) + x10·dy·(1−dx) + x01·(1−dy)·dx + x11·dy·dx
    + offset, float32 from left to right; offset 0.5 for uint8 (then truncated), 0 for float32;
  * ``optimized_ops::ResizeBilinear`` (the builtin kernel): the weights multiplied first, w00 =
    (1−dy)(1−dx), w01 = (1−dy)·dx, w10 = dy·(1−dx), w11 = dy·dx, and x00·w00, x01·w01, x10·w10,
    x11·w11 added in that order, float32 into a zeroed output (ResizeBilinearGeneric) or, for uint8,
    + 0.5 and truncated (ResizeBilinearGenericSmallChannel).  Two shapes have a kernel of their own: a
    float 2x upscale without align_corners or half_pixel_centers (ResizeBilinear2x2: each new value is
    the half of a sum of two), and a uint8 exact 8x upscale with half_pixel_centers and depth a
    multiple of 8 (ResizeBilinear888Uint8: 8.8 fixed point; its weights are exact sixteenths,
    fractions (2p+1)/16, so it computes out = (Σ w16y·w16x·x + 128) >> 8 with w16 ∈ {16 − f, f},
    positions past the edge repeating it: ``ResizeBilinearUint8Data.exact_8x``).

int8 and int16, in both builds: ``ResizeBilinearInteger``, 10-bit fixed point — scale_10 = (2^10·in +
out/2) // out ((in−1)/(out−1) with align_corners); src_10 = o·scale_10 (+ scale_10/2 − 2^9 with half
pixel centres); y0 = max(src_10 / 2^10, 0), y1 = min((src_10 + 2^10 − 1) / 2^10, in − 1) (C
division); four int64 products with 20-bit weights, summed, divided by 2^20 rounding half away from
zero.  Input and output share the quantization, so no type rescales.
The speed layer: ``workbench/interpreter/fast/resize.py``.
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError
from ...schema.enums import BuiltinOperator
from ..registry import Kernel, OpData, kernel, opdata
from ._common import F32, I8, I16, U8, check_rank


@opdata
class ResizeBilinearData(OpData):
    output_shape: tuple
    align_corners: bool
    half_pixel_centers: bool
    y0: object
    y1: object
    dy: object        # float32 [OH]: src − y0, the weight of row y1
    x0: object
    x1: object
    dx: object        # float32 [OW]


@opdata
class ResizeBilinearUint8Data(ResizeBilinearData):
    exact_8x: bool = False     # TFLite's 8x half-pixel uint8 kernel: dy, dx are then int64 sixteenths


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


def source_positions(out_size, in_size, align_corners, half_pixel):
    """``ComputeInterpolationValues`` for every output index: (y0, y1, dy), dy in float32."""
    f = np.float32
    scale = f(in_size - 1) / f(out_size - 1) if align_corners and out_size > 1 else f(in_size) / f(out_size)
    o = np.arange(out_size, dtype=np.float32)
    src = ((o + f(0.5)) * scale - f(0.5)).astype(np.float32) if half_pixel else (o * scale).astype(np.float32)
    lo = np.maximum(np.floor(src).astype(np.int64), 0)
    hi = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    return lo, hi, (src - lo.astype(np.float32)).astype(np.float32)


def sixteenth_positions(out_size, in_size):
    """8x with half pixel centres: source = (2o − 7)/16; (y0, y1, fraction in sixteenths), edges clamped."""
    s16 = 2 * np.arange(out_size, dtype=np.int64) - 7
    y0 = np.clip(s16 // 16, 0, in_size - 1)
    frac = np.where(s16 < 0, 0, s16 - 16 * y0)
    y1 = np.minimum(y0 + 1, in_size - 1)
    return y0, y1, frac


def _cdiv(a, b):
    """C integer division (truncates toward zero), elementwise."""
    q = np.abs(a) // abs(b)
    return np.where((np.asarray(a) < 0) != (b < 0), -q, q)


def integer_positions(out_size, in_size, align_corners, half_pixel):
    """(src_10, lower, upper) of ``ComputeInterpolationValuesInteger`` for every output index."""
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


def corners(x, d, dtype=np.float32):
    """The four neighbours of every output pixel, [N, OH, OW, C] each: x00, x01, x10, x11 (row, column)."""
    xf = x.astype(dtype, copy=False)
    top, bottom = xf[:, d.y0], xf[:, d.y1]
    return top[:, :, d.x0], top[:, :, d.x1], bottom[:, :, d.x0], bottom[:, :, d.x1]


def _to_type(acc, dtype):
    """float32 as it is; uint8 as C's conversion of acc + 0.5 (truncation; the values are in range)."""
    if dtype == U8:
        return np.trunc(acc + np.float32(0.5)).astype(np.int64).astype(np.uint8)
    return (acc + np.float32(0)).astype(np.float32)     # + 0.0f: TFLite's rounding offset of float (−0 → +0)


@np.errstate(over="ignore", invalid="ignore")           # float inf · 0 = nan silently, as TFLite
def bilinear_reference(x, d) -> np.ndarray:
    """``reference_ops::ResizeBilinear`` (float32, uint8): the four-neighbour formula, left to right."""
    x00, x01, x10, x11 = corners(x, d)
    one = np.float32(1)
    dy, dx = d.dy.reshape(1, -1, 1, 1), d.dx.reshape(1, 1, -1, 1)
    acc = x00 * (one - dy) * (one - dx) + x10 * dy * (one - dx) + x01 * (one - dy) * dx + x11 * dy * dx
    return _to_type(acc, x.dtype)


@np.errstate(over="ignore", invalid="ignore")
def bilinear_optimized(x, d) -> np.ndarray:
    """``optimized_ops::ResizeBilinearGeneric`` (float32) / ``ResizeBilinearGenericSmallChannel`` (uint8):
    the weight products first, then x00·w00 + x01·w01 + x10·w10 + x11·w11 added to 0 in that order."""
    x00, x01, x10, x11 = corners(x, d)
    one = np.float32(1)
    dy, dx = d.dy.reshape(1, -1, 1, 1), d.dx.reshape(1, 1, -1, 1)
    acc = np.float32(0) + x00 * ((one - dy) * (one - dx))
    acc = acc + x01 * ((one - dy) * dx)
    acc = acc + x10 * (dy * (one - dx))
    acc = acc + x11 * (dy * dx)
    return acc.astype(np.float32) if x.dtype == F32 else _to_type(acc, x.dtype)


def takes_2x2_kernel(d, input_shape) -> bool:
    """The optimized float kernel's special case: an exact 2x upscale, plain source positions."""
    _, oh, ow, _ = d.output_shape
    return not d.align_corners and not d.half_pixel_centers and (oh, ow) == (2 * input_shape[1], 2 * input_shape[2])


@np.errstate(over="ignore", invalid="ignore")
def bilinear_2x2(x) -> np.ndarray:
    """``optimized_ops::ResizeBilinear2x2`` (float32): input pixel (y, x) and its right, lower and
    lower-right neighbours (the edge repeated) give the 2x2 outputs a, (a + r)/2, (a + b)/2 = m and
    (m + (r + br)/2)/2."""
    n, h, w, c = x.shape
    two = np.float32(2)
    right = x[:, :, np.minimum(np.arange(w) + 1, w - 1)]
    below = x[:, np.minimum(np.arange(h) + 1, h - 1)]
    below_right = below[:, :, np.minimum(np.arange(w) + 1, w - 1)]
    out = np.empty((n, 2 * h, 2 * w, c), np.float32)
    out[:, 0::2, 0::2] = x
    out[:, 0::2, 1::2] = (x + right) / two
    out[:, 1::2, 0::2] = mid = (x + below) / two
    out[:, 1::2, 1::2] = (mid + (right + below_right) / two) / two
    return out


def resize_uint8_8x(x, d) -> np.ndarray:
    """``optimized_ops::ResizeBilinear888Uint8`` in closed form: exact sixteenths, rounded half up."""
    x00, x01, x10, x11 = corners(x, d, np.int64)
    fy, fx = d.dy.reshape(1, -1, 1, 1), d.dx.reshape(1, 1, -1, 1)
    acc = x00 * ((16 - fy) * (16 - fx)) + x01 * ((16 - fy) * fx) + x10 * (fy * (16 - fx)) + x11 * (fy * fx)
    return ((acc + 128) >> 8).astype(np.uint8)


def resize_integer(x, d) -> np.ndarray:
    """``reference_ops::ResizeBilinearInteger`` (int8, int16): 20-bit weights, int64 sums, a rounding
    division by 2^20 (half away from zero; C division truncates)."""
    one = 1 << 10
    x00, x01, x10, x11 = corners(x, d, np.int64)
    wy, wx = d.wy.reshape(1, -1, 1, 1), d.wx.reshape(1, 1, -1, 1)
    total = (x00 * ((one - wy) * (one - wx)) + x10 * (wy * (one - wx)) + x01 * ((one - wy) * wx)
             + x11 * (wy * wx))
    return _cdiv(total + np.where(total > 0, 1 << 19, -(1 << 19)), 1 << 20).astype(x.dtype)


class _ResizeBase(Kernel):
    value_inputs = (0, 1)

    def out_size(self, context, node):
        x = node.inputs[0]
        n, h, w, c = check_rank(node, context, x, 4)
        size = np.asarray(context.require_value(node, 1, "the output size")).reshape(-1)
        if size.shape != (2,) or (size <= 0).any():
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): "
                                     f"size {size.tolist()} must be 2 positive ints")
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
        out = (n, oh, ow, c)
        context.set_output(node.outputs[0], out, dt)
        if dt in (I8, I16):
            sy, y0, y1 = integer_positions(oh, h, ac, hp)
            sx, x0, x1 = integer_positions(ow, w, ac, hp)
            return ResizeBilinearInt8Data(out, ac, hp, y0, y1, sy - (1 << 10) * y0, x0, x1, sx - (1 << 10) * x0)
        if dt == U8 and (context.variant.resize_bilinear == "optimized" and hp and c % 8 == 0 and oh >= 8 and ow >= 8
                         and oh == 8 * h and ow == 8 * w):
            return ResizeBilinearUint8Data(out, ac, hp, *sixteenth_positions(oh, h), *sixteenth_positions(ow, w),
                                           exact_8x=True)
        data = ResizeBilinearUint8Data if dt == U8 else ResizeBilinearData
        return data(out, ac, hp, *source_positions(oh, h, ac, hp), *source_positions(ow, w, ac, hp))

    def invoke(self, context, node, d):
        x = context.tensors[node.inputs[0]]
        out = context.tensors[node.outputs[0]]
        if type(d) is ResizeBilinearInt8Data:
            out[...] = resize_integer(x, d)
        elif context.variant.resize_bilinear == "reference":
            out[...] = bilinear_reference(x, d)
        elif getattr(d, "exact_8x", False):
            out[...] = resize_uint8_8x(x, d)
        elif x.dtype == F32 and takes_2x2_kernel(d, x.shape):
            out[...] = bilinear_2x2(x)
        else:
            out[...] = bilinear_optimized(x, d)
