"""What AVERAGE_POOL_2D and MAX_POOL_2D share: Pool2DOptions → a prepared window.

Quantized pools (uint8 version 1, int8 version 2, int16 version 3 — op_version.cc gives uint8 the
float version): input and output share scale and zero point, so no rescaling happens; the fused
activation becomes an integer clamp in the type's range (``reference/integer_ops/pooling.h``).  TFLite only
DCHECKs the equal quantization (release builds would silently reuse the input's numbers); the
workbench refuses a mismatch instead of producing numbers that mean something else.
"""

from __future__ import annotations

import numpy as np

from ...errors import KernelError, UnsupportedOpError
from .. import quant
from ..registry import OpData, opdata
from ._common import F32, I8, I16, PADDING_NAMES, U8, activation_name, activation_range, check_rank, pool_window

QUANTIZED = (U8, I8, I16)


@opdata
class Pool2DData(OpData):
    padding: str
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    output_shape: tuple
    activation: str
    output_activation_min: float
    output_activation_max: float


@opdata
class Pool2DQuantizedData(OpData):
    dtype: str
    padding: str
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_top: int
    pad_left: int
    output_shape: tuple
    activation: str
    input_scale: float
    input_zero_point: int
    output_scale: float
    output_zero_point: int
    output_activation_min: int
    output_activation_max: int


Pool2DInt8Data = Pool2DQuantizedData     # the name before uint8/int16 were added


def prepare_pool(context, node, dtypes=(F32,) + QUANTIZED):
    p = node.params
    x_t = node.inputs[0]
    dt = context.expect_dtype(node, x_t, dtypes)
    if context.dtype(node.outputs[0]) != dt:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): input is {dt} but output "
                                 f"'{context.name(node.outputs[0])}' is {context.dtype(node.outputs[0])}; "
                                 f"TFLite needs them equal")
    n, h, w, c = check_rank(node, context, x_t, 4)
    fh, fw, sh, sw = p["filter_height"], p["filter_width"], p["stride_h"], p["stride_w"]
    # TensorFlow's pooling.cc refuses a filter below 1; litert 2.3.0 no longer checks it and gives an
    # empty output (_common.pool_window).  The workbench keeps the refusal: such a pool means nothing.
    if fh <= 0 or fw <= 0:
        raise KernelError(f"{node.op_name} (node {node.index}): filter {fh}x{fw} must be positive")
    oh, ow, pt, pl = pool_window(node, p["padding"], h, w, fh, fw, sh, sw)
    if dt in QUANTIZED:
        in_s, in_zp = quant.tensor_scale_zp(context, x_t)
        out_s, out_zp = quant.tensor_scale_zp(context, node.outputs[0])
        if in_zp != out_zp or abs(in_s - out_s) > 1e-6:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): {dt} input and output must share scale "
                                     f"and zero point (got {in_s}/{in_zp} and {out_s}/{out_zp})")
        code = p["fused_activation_function"]
        lo, hi = quant.activation_range_quantized(code, out_s, out_zp, *quant.quantized_range(dt))
        context.set_output(node.outputs[0], (n, oh, ow, c), dt)
        return Pool2DQuantizedData(str(dt), PADDING_NAMES[p["padding"]], sh, sw, fh, fw, pt, pl, (n, oh, ow, c),
                                   activation_name(code), in_s, in_zp, out_s, out_zp, lo, hi)
    context.set_output(node.outputs[0], (n, oh, ow, c), F32)
    lo, hi = activation_range(p["fused_activation_function"])
    return Pool2DData(PADDING_NAMES[p["padding"]], sh, sw, fh, fw, pt, pl, (n, oh, ow, c),
                      activation_name(p["fused_activation_function"]), lo, hi)


def padded_input(x: np.ndarray, d, fill) -> np.ndarray:
    """The input inside a border of ``fill`` wide enough for every window: taps that fall outside the
    image read ``fill`` (the lowest value for MAX, 0 for sums), so every window has the same taps."""
    n, h, w, c = x.shape
    _, oh, ow, _ = d.output_shape
    hp = max(d.pad_top + h, (oh - 1) * d.stride_h + d.filter_h)
    wp = max(d.pad_left + w, (ow - 1) * d.stride_w + d.filter_w)
    xp = np.full((n, hp, wp, c), fill, x.dtype)
    xp[:, d.pad_top:d.pad_top + h, d.pad_left:d.pad_left + w, :] = x
    return xp


def taps(d):
    """The filter taps in TFLite's order (row, then column), each as the (rows, cols) slices of the
    padded input that tap reads for every output position."""
    _, oh, ow, _ = d.output_shape
    for ky in range(d.filter_h):
        for kx in range(d.filter_w):
            yield (slice(ky, ky + (oh - 1) * d.stride_h + 1, d.stride_h),
                   slice(kx, kx + (ow - 1) * d.stride_w + 1, d.stride_w))
