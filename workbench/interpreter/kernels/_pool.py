"""What AVERAGE_POOL_2D and MAX_POOL_2D share: Pool2DOptions → a prepared window."""

from __future__ import annotations

from ..registry import OpData, opdata
from ._common import F32, PADDING_NAMES, activation_name, activation_range, check_rank, window


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


def prepare_pool(context, node) -> Pool2DData:
    p = node.params
    x_t = node.inputs[0]
    context.expect_dtype(node, x_t, (F32,))
    n, h, w, c = check_rank(node, context, x_t, 4)
    fh, fw, sh, sw = p["filter_height"], p["filter_width"], p["stride_h"], p["stride_w"]
    if fh <= 0 or fw <= 0:
        raise ValueError(f"{node.op_name} node {node.index}: filter {fh}x{fw} must be positive")
    oh, ow, pt, pl = window(node, p["padding"], h, w, fh, fw, sh, sw, 1, 1)
    context.set_output(node.outputs[0], (n, oh, ow, c), F32)
    lo, hi = activation_range(p["fused_activation_function"])
    return Pool2DData(PADDING_NAMES[p["padding"]], sh, sw, fh, fw, pt, pl, (n, oh, ow, c),
                      activation_name(p["fused_activation_function"]), lo, hi)
