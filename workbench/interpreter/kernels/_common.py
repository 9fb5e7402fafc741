"""Small facts shared by kernels: activation ranges, window padding, type checks."""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedOpError

F32 = np.dtype(np.float32)
FLOAT_MAX = float(np.finfo(np.float32).max)

# runtime ActivationFunctionType codes (map 1:1 from the schema)
ACTIVATION_NAMES = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}


def activation_range(code: int) -> tuple[float, float]:
    """Clamp range of a fused activation in TFLite's float kernels (CalculateActivationRange).

    RELU [0, max], RELU_N1_TO_1 [-1, 1], RELU6 [0, 6]; anything else (NONE, and also TANH and
    SIGN_BIT, which float kernels do not apply) is no clamp.
    """
    code = int(code)
    if code == 1:
        return 0.0, FLOAT_MAX
    if code == 2:
        return -1.0, 1.0
    if code == 3:
        return 0.0, 6.0
    return -FLOAT_MAX, FLOAT_MAX


def activation_name(code: int) -> str:
    name = ACTIVATION_NAMES.get(int(code), f"activation {code}")
    if int(code) in (4, 5):
        name += " (not applied by TFLite's float kernels)"
    return name


def clamps(lo: float, hi: float) -> bool:
    return lo > -FLOAT_MAX or hi < FLOAT_MAX


def apply_activation(out: np.ndarray, lo: float, hi: float) -> None:
    """Clamp ``out`` in place to [lo, hi] (nothing to do for 'no clamp')."""
    if lo > -FLOAT_MAX:
        if hi < FLOAT_MAX:
            np.clip(out, lo, hi, out=out)
        else:
            np.maximum(out, lo, out=out)
    elif hi < FLOAT_MAX:
        np.minimum(out, hi, out=out)


# ----------------------------------------------------------------------------------------------
# padding.h (TFLITE_FACTS §3.3); runtime padding codes: 0 unknown, 1 SAME, 2 VALID

PADDING_NAMES = {0: "UNKNOWN", 1: "SAME", 2: "VALID"}


def out_size(padding: int, in_size: int, filter_size: int, stride: int, dilation: int) -> int:
    """TensorFlow's windowed output size (0 for stride 0 or an unknown padding, as TFLite)."""
    if stride == 0:
        return 0
    eff = (filter_size - 1) * dilation + 1
    if padding == 1:
        return (in_size + stride - 1) // stride
    if padding == 2:
        return max(0, (in_size + stride - eff) // stride)
    return 0


def pad_before(stride: int, dilation: int, in_size: int, filter_size: int, out: int) -> tuple[int, int]:
    """(padding before, padding after) for one spatial axis; the odd pixel goes at the end."""
    eff = (filter_size - 1) * dilation + 1
    total = max(0, (out - 1) * stride + eff - in_size)
    return total // 2, total - total // 2


def window(node, padding: int, in_h: int, in_w: int, f_h: int, f_w: int, s_h: int, s_w: int,
           d_h: int, d_w: int) -> tuple[int, int, int, int]:
    """(out_h, out_w, pad_top, pad_left), refusing what TFLite would turn into an empty output."""
    if padding not in (1, 2):
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): padding is {PADDING_NAMES.get(padding, padding)} "
                                 f"(no options table in the file?); TFLite would produce an empty output")
    if s_h <= 0 or s_w <= 0 or d_h <= 0 or d_w <= 0:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): stride ({s_h}, {s_w}) and dilation "
                                 f"({d_h}, {d_w}) must be positive (an absent options table zero-fills them)")
    oh = out_size(padding, in_h, f_h, s_h, d_h)
    ow = out_size(padding, in_w, f_w, s_w, d_w)
    pt, _ = pad_before(s_h, d_h, in_h, f_h, oh)
    pl, _ = pad_before(s_w, d_w, in_w, f_w, ow)
    return oh, ow, pt, pl


def tap_range(o: int, stride: int, pad: int, dilation: int, filt: int, size: int) -> tuple[int, int]:
    """Filter taps [k0, k1) of output position ``o`` that land inside the input."""
    origin = o * stride - pad
    k0 = 0
    while k0 < filt and origin + k0 * dilation < 0:
        k0 += 1
    k1 = filt
    while k1 > k0 and origin + (k1 - 1) * dilation >= size:
        k1 -= 1
    return k0, k1


def check_bias(node, ctx, b_t: int, channels: int) -> None:
    """An optional bias (slot 2 of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) holds one value per
    output channel (TFLite: ``SizeOfDimension(bias, 0) == channels``)."""
    if b_t >= 0:
        shape = ctx.shape(b_t)
        if len(shape) != 1 or shape[0] != channels:
            raise UnsupportedOpError(f"{node.op_name} (node {node.index}): bias '{ctx.name(b_t)}' has shape "
                                     f"{list(shape)}; it must be [{channels}] (one value per output channel)")


def check_rank(node, ctx, t: int, rank: int, what: str = "input") -> tuple:
    shape = ctx.shape(t)
    if len(shape) != rank:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): {what} '{ctx.name(t)}' has shape "
                                 f"{list(shape)}; expected rank {rank}")
    return shape


def normalize_axis(node, axis: int, rank: int) -> int:
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): axis {axis} out of range for rank {rank}")
    return a
