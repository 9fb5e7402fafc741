"""What every CONV_2D kernel shares, whatever its types: the window, the groups, and the sum over the
filter taps that all of TFLite's reference convolutions compute.

Output size and padding follow TFLite's ``tensorflow/lite/kernels/padding.h`` (:func:`._common.window`).
A filter with fewer input channels than the input makes a grouped convolution (version 6): groups =
input channels / filter channels, and output channel ``o`` reads the input channels of group
``o // (O / groups)``.  TFLite's reference kernels skip the taps that fall outside the image; here the
input gets a border instead (of zeros, or of whatever value contributes nothing), so that every
window has the same taps and one numpy operation per tap serves all outputs at once.
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError
from ..registry import OpData, opdata
from ._common import PADDING_NAMES, activation_name, check_bias, check_rank, window


@opdata
class ConvGeometry(OpData):
    """What every CONV_2D kernel prepares, float or integer: window, padding, groups, output shape."""

    padding: str
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    groups: int
    output_shape: tuple
    activation: str


def conv_geometry(context, node) -> ConvGeometry:
    """Input [N, H, W, C], filter [O, KH, KW, C / groups], an optional bias [O] → the window (TFLite's
    Prepare refuses channels that do not form whole groups)."""
    p = node.params
    n, h, w, c = check_rank(node, context, node.input(0), 4)
    o, kh, kw, ci = check_rank(node, context, node.input(1), 4, "filter")
    check_bias(node, context, node.input(2), o)
    if ci <= 0 or c < ci or c % ci or o % (c // ci):
        raise KernelError(f"CONV_2D node {node.index}: input channels {c} and filter {[o, kh, kw, ci]} do not "
                          f"form whole groups")
    sh, sw, dh, dw = p["stride_h"], p["stride_w"], p["dilation_h_factor"], p["dilation_w_factor"]
    oh, ow, pt, pl = window(node, p["padding"], h, w, kh, kw, sh, sw, dh, dw)
    return ConvGeometry(PADDING_NAMES[p["padding"]], sh, sw, dh, dw, kh, kw, pt, pl, c // ci, (n, oh, ow, o),
                        activation_name(p["fused_activation_function"]))


def final_shift_rounding(context, groups: int) -> str:
    """Ties of the last rounding shift of MultiplyByQuantizedMultiplier (``rounding`` in the int8,
    uint8 and int32-bias 16x8 OpData): "away" from zero in TFLite's reference kernels, "up" in ruy,
    which litert's builtin kernels use on x86 (``context.variant.final_shift``) — except for grouped
    convolutions, which every build runs through its reference kernel."""
    return "up" if groups == 1 and context.variant.final_shift == "ties-up" else "away"


def padded_shape(x_shape, f_h, f_w, oh, ow, sh, sw, dh, dw, pt, pl) -> tuple:
    """The shape of the input with a border wide enough for every tap of every window."""
    n, h, w, c = x_shape
    need_h = (oh - 1) * sh + (f_h - 1) * dh + 1
    need_w = (ow - 1) * sw + (f_w - 1) * dw + 1
    return n, max(pt + h, need_h), max(pl + w, need_w), c


def padded(x: np.ndarray, d, border=0) -> np.ndarray:
    """``x`` inside a border of ``border`` (one value, or one per image) wide enough for every tap."""
    n, h, w, _ = x.shape
    _, oh, ow, _ = d.output_shape
    xp = np.empty(padded_shape(x.shape, d.filter_h, d.filter_w, oh, ow, d.stride_h, d.stride_w, d.dilation_h,
                               d.dilation_w, d.pad_top, d.pad_left), x.dtype)
    xp[...] = np.reshape(border, (-1, 1, 1, 1))
    xp[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = x
    return xp


def taps(d):
    """The filter taps in TFLite's order (filter row, then column), each as (ky, kx, rows, cols): the
    slices of the padded input that tap reads for every output position."""
    _, oh, ow, _ = d.output_shape
    for ky in range(d.filter_h):
        for kx in range(d.filter_w):
            yield (ky, kx, slice(ky * d.dilation_h, ky * d.dilation_h + (oh - 1) * d.stride_h + 1, d.stride_h),
                   slice(kx * d.dilation_w, kx * d.dilation_w + (ow - 1) * d.stride_w + 1, d.stride_w))


def integer_sums(xp: np.ndarray, filt: np.ndarray, d) -> np.ndarray:
    """Σ filter · input over the taps of each window, exactly: int64 [N, OH, OW, O] from a padded
    integer input ``xp``.  Per tap, one matrix product per group (the groups as a batch), in float64:
    every partial sum of 8- and 16-bit values is an integer far below 2^53, which float64 holds exactly."""
    n, oh, ow, o = d.output_shape
    g, m = d.groups, n * oh * ow
    acc = np.zeros((g, m, o // g), np.float64)                      # [group, output pixel, its channels]
    if acc.size == 0:                     # an empty output (VALID, input smaller than the window)
        return np.zeros(d.output_shape, np.int64)
    xf = xp.astype(np.float64)
    wg = filt.astype(np.float64).reshape(g, o // g, *filt.shape[1:])          # [G, O/G, KH, KW, I]
    for ky, kx, rows, cols in taps(d):
        window = xf[:, rows, cols, :].reshape(m, g, -1).transpose(1, 0, 2)      # [G, pixels, I]
        acc += window @ wg[:, :, ky, kx, :].transpose(0, 2, 1)
    return acc.transpose(1, 0, 2).reshape(d.output_shape).astype(np.int64)


def float_sums(xp: np.ndarray, filt: np.ndarray, d) -> np.ndarray:
    """``reference_ops::Conv``'s float32 sums: for each output one accumulator that adds input · filter
    tap by tap (filter row, column, then input channel), every product and sum rounded to float32 —
    for all outputs at once.  (The border's zeros add ±0, which changes no sum.)"""
    n, oh, ow, o = d.output_shape
    g = d.groups
    out = np.zeros((n, oh, ow, g, o // g), np.float32)              # the channels of each group
    if out.size == 0:
        return out.reshape(d.output_shape)
    wt = np.ascontiguousarray(filt.reshape(g, o // g, *filt.shape[1:]).transpose(2, 3, 4, 0, 1))  # [KH, KW, I, G, O/G]
    for ky, kx, rows, cols in taps(d):
        window = xp[:, rows, cols, :].reshape(n, oh, ow, g, -1)             # [N, OH, OW, G, I]
        for i in range(window.shape[-1]):
            out += window[..., i, None] * wt[ky, kx, i]
    return out.reshape(d.output_shape)
