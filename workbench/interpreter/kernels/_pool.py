"""What AVERAGE_POOL_2D and MAX_POOL_2D share: Pool2DOptions → a prepared window.

int8 (version 2): input and output share scale and zero point, so no rescaling happens; the
fused activation becomes an int clamp (TFLITE_FACTS §4.8).
"""

from __future__ import annotations

from ..registry import OpData, opdata
import numpy as np

from ...errors import UnsupportedOpError
from ._elementwise import KernelError
from .. import quant
from ._common import F32, PADDING_NAMES, activation_name, activation_range, check_rank, window

I8 = np.dtype(np.int8)


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
    impl: str = "numba"


@opdata
class Pool2DInt8Data(OpData):
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
    impl: str = "numba"


def prepare_pool(context, node):
    p = node.params
    x_t = node.inputs[0]
    dt = context.expect_dtype(node, x_t, (F32, I8))
    n, h, w, c = check_rank(node, context, x_t, 4)
    fh, fw, sh, sw = p["filter_height"], p["filter_width"], p["stride_h"], p["stride_w"]
    if fh <= 0 or fw <= 0:
        raise KernelError(f"{node.op_name} (node {node.index}): filter {fh}x{fw} must be positive")
    oh, ow, pt, pl = window(node, p["padding"], h, w, fh, fw, sh, sw, 1, 1)
    if dt == I8:
        in_s, in_zp = quant.tensor_scale_zp(context, x_t)
        out_s, out_zp = quant.tensor_scale_zp(context, node.outputs[0])
        if in_zp != out_zp or abs(in_s - out_s) > 1e-6:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): int8 input and output must share scale "
                                     f"and zero point (got {in_s}/{in_zp} and {out_s}/{out_zp})")
        code = p["fused_activation_function"]
        lo, hi = quant.activation_range_quantized(code, out_s, out_zp)
        context.set_output(node.outputs[0], (n, oh, ow, c), I8)
        return Pool2DInt8Data(PADDING_NAMES[p["padding"]], sh, sw, fh, fw, pt, pl, (n, oh, ow, c),
                              activation_name(code), in_s, in_zp, out_s, out_zp, lo, hi)
    context.set_output(node.outputs[0], (n, oh, ow, c), F32)
    lo, hi = activation_range(p["fused_activation_function"])
    return Pool2DData(PADDING_NAMES[p["padding"]], sh, sw, fh, fw, pt, pl, (n, oh, ow, c),
                      activation_name(p["fused_activation_function"]), lo, hi)
