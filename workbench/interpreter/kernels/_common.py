"""Small facts shared by kernels: activation ranges, window padding, type checks."""

from __future__ import annotations

import numpy as np

from ...errors import KernelError, UnsupportedOpError

# The tensor types the kernels check and produce, as numpy dtypes (TensorType in the schema); every
# kernel imports them from here.
BOOL = np.dtype(np.bool_)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I8, I16, I32, I64 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64)
U8, U32 = np.dtype(np.uint8), np.dtype(np.uint32)
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
    """Clamp ``out`` in place to [lo, hi], as TFLite's ActivationFunctionWithMinMax does after ADD,
    SUB, MUL, DIV, CONV_2D, FULLY_CONNECTED, L2_POOL_2D: also for NONE, whose range [-FLT_MAX, FLT_MAX]
    turns an overflow's ±inf into ±FLT_MAX (measured in litert: 1/0 = 3.4028235e38); NaN stays NaN.
    An op whose TFLite kernel applies no activation (CONCATENATION) checks :func:`clamps` first."""
    np.clip(out, lo, hi, out=out)


# ----------------------------------------------------------------------------------------------
# tensorflow/lite/kernels/padding.h; runtime padding codes: 0 unknown, 1 SAME, 2 VALID
#
# TFLite computes an output size as  SAME: (in + S - 1) / S,  VALID: (in + S - E) / S  with
# E = (F - 1)·D + 1 and C integer division, which truncates toward zero.  For VALID with an input
# smaller than E the numerator is negative: between -S and 0 it truncates to 0 (an empty output),
# at -S or below the size is negative.  What litert (2.3.0, the oracle of the tests) does then
# depends on the op, measured:
#   * CONV_2D, DEPTHWISE_CONV_2D: stride and dilation must be > 0, input and filter height and
#     width must be > 0, and a negative output size fails prepare;       -> :func:`window`
#   * AVERAGE/MAX/L2_POOL_2D: stride must be > 0; anything else wrong (a negative size, a filter
#     of 0) gives an output size of 0 instead: LiteRT's checked ComputePaddingHeightWidth fills in
#     the width first and stops at the first bad axis, so a bad width makes the height 0 too;
#                                                                        -> :func:`pool_window`
#   * TRANSPOSE_CONV: the output shape is given; the forward output size of that shape must equal
#     the input's size, and both must be > 0;                            -> :func:`transpose_window`
# (The tensorflow repository's padding.h returns a negative size unchecked; LiteRT's checks it.)

PADDING_NAMES = {0: "UNKNOWN", 1: "SAME", 2: "VALID"}


def c_div(a: int, b: int) -> int:
    """Integer division as C does it: the quotient truncated toward zero (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def out_size(padding: int, in_size: int, filter_size: int, stride: int, dilation: int) -> int:
    """TensorFlow's windowed output size, as padding.h's ComputeOutSize computes it (C division).

    Can be negative (VALID with an input smaller than the effective filter); 0 for stride 0 or an
    unknown padding.  The callers decide what a negative size means (see the notes above).
    """
    if stride == 0:
        return 0
    eff = (filter_size - 1) * dilation + 1
    if padding == 1:
        return c_div(in_size + stride - 1, stride)
    if padding == 2:
        return c_div(in_size + stride - eff, stride)
    return 0


def out_size_checked(padding: int, in_size: int, filter_size: int, stride: int, dilation: int):
    """LiteRT's ComputeOutSizeChecked: the output size, or None where it reports an error (padding
    not SAME/VALID, a negative input, a filter, stride or dilation below 1, a negative result)."""
    if padding not in (1, 2) or in_size < 0 or filter_size <= 0 or stride <= 0 or dilation <= 0:
        return None
    size = out_size(padding, in_size, filter_size, stride, dilation)
    return size if size >= 0 else None


def pad_before(stride: int, dilation: int, in_size: int, filter_size: int, out: int) -> tuple[int, int]:
    """(padding before, padding after) for one spatial axis; the odd pixel goes at the end."""
    eff = (filter_size - 1) * dilation + 1
    total = max(0, (out - 1) * stride + eff - in_size)
    return total // 2, total - total // 2


def _fail(node, message: str):
    raise KernelError(f"{node.op_name} (node {node.index}): {message}")


def _check_padding_code(node, padding: int) -> None:
    if padding not in (1, 2):
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): "
                                 f"padding is {PADDING_NAMES.get(padding, padding)} "
                                 f"(no options table in the file?); TFLite would produce an empty output")


def _too_small(axis: str, padding: int, size: int, filt: int, stride: int, dilation: int) -> str:
    eff = (filt - 1) * dilation + 1
    got = out_size(padding, size, filt, stride, dilation)
    lo, hi = max(eff - 2 * stride + 1, 1), eff - 1
    empty = f"{axis}s {lo}..{hi} give" if lo < hi else f"{axis} {hi} gives"
    return (f"input {axis} {size} is too small for {PADDING_NAMES[padding]} padding with filter {axis} {filt}"
            f"{f' (dilation {dilation}: effective {eff})' if dilation != 1 else ''} and stride {stride}: the output "
            f"{axis} would be ({size} + {stride} - {eff}) / {stride} = {got} (C division), negative, so TFLite fails "
            f"prepare ({empty} an empty output, {eff} or more a non-empty one)")


def window(node, padding: int, in_h: int, in_w: int, f_h: int, f_w: int, s_h: int, s_w: int,
           d_h: int, d_w: int) -> tuple[int, int, int, int]:
    """(out_h, out_w, pad_top, pad_left) of a CONV_2D / DEPTHWISE_CONV_2D, refusing what litert's
    prepare refuses (see the notes above); an output size of 0 (an empty output) is returned as is."""
    _check_padding_code(node, padding)
    if s_h <= 0 or s_w <= 0 or d_h <= 0 or d_w <= 0:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): stride ({s_h}, {s_w}) and dilation "
                                 f"({d_h}, {d_w}) must be positive (an absent options table zero-fills them)")
    if in_h <= 0 or in_w <= 0:
        _fail(node, f"input height and width ({in_h}, {in_w}) must be positive; TFLite fails prepare")
    if f_h <= 0 or f_w <= 0:
        _fail(node, f"filter height and width ({f_h}, {f_w}) must be positive; TFLite fails prepare")
    oh = out_size(padding, in_h, f_h, s_h, d_h)
    ow = out_size(padding, in_w, f_w, s_w, d_w)
    if ow < 0:
        _fail(node, _too_small("width", padding, in_w, f_w, s_w, d_w))
    if oh < 0:
        _fail(node, _too_small("height", padding, in_h, f_h, s_h, d_h))
    pt, _ = pad_before(s_h, d_h, in_h, f_h, oh)
    pl, _ = pad_before(s_w, d_w, in_w, f_w, ow)
    return oh, ow, pt, pl


def pool_window(node, padding: int, in_h: int, in_w: int, f_h: int, f_w: int, s_h: int,
                s_w: int) -> tuple[int, int, int, int]:
    """(out_h, out_w, pad_top, pad_left) of a 2-D pool as litert computes it (see the notes above):
    only a stride below 1 (or an unknown padding) is refused; a bad axis gives an empty output."""
    _check_padding_code(node, padding)
    if s_h <= 0 or s_w <= 0:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): stride ({s_h}, {s_w}) must be positive "
                                 f"(an absent options table zero-fills it)")
    ow = out_size_checked(padding, in_w, f_w, s_w, 1)
    oh = out_size_checked(padding, in_h, f_h, s_h, 1) if ow is not None else None
    if ow is None or oh is None:          # LiteRT leaves 0 in the sizes it did not fill in, padding 0
        return (0 if oh is None else oh), (0 if ow is None else ow), 0, 0
    pt, _ = pad_before(s_h, 1, in_h, f_h, oh)
    pl, _ = pad_before(s_w, 1, in_w, f_w, ow)
    return oh, ow, pt, pl


def transpose_window(node, padding: int, out_h: int, out_w: int, f_h: int, f_w: int, s_h: int, s_w: int,
                     in_h: int, in_w: int) -> tuple[int, int]:
    """(pad_top, pad_left) of a TRANSPOSE_CONV with the given output size: the forward-conv padding of
    that output size (dilation 1), after litert's checks (see the notes above)."""
    _check_padding_code(node, padding)
    if s_h <= 0 or s_w <= 0:
        raise UnsupportedOpError(f"{node.op_name} (node {node.index}): stride ({s_h}, {s_w}) must be positive "
                                 f"(an absent options table zero-fills it)")
    if out_h <= 0 or out_w <= 0:
        _fail(node, f"output height and width ({out_h}, {out_w}) must be positive; TFLite fails prepare")
    if in_h <= 0 or in_w <= 0:
        _fail(node, f"input height and width ({in_h}, {in_w}) must be positive; TFLite fails prepare")
    if f_h <= 0 or f_w <= 0:
        _fail(node, f"filter height and width ({f_h}, {f_w}) must be positive; TFLite fails prepare")
    back_h = out_size(padding, out_h, f_h, s_h, 1)
    back_w = out_size(padding, out_w, f_w, s_w, 1)
    if (back_h, back_w) != (in_h, in_w):
        _fail(node, f"output {out_h}x{out_w} does not come from input {in_h}x{in_w}: a {PADDING_NAMES[padding]} "
                    f"convolution of it (filter {f_h}x{f_w}, stride ({s_h}, {s_w})) would give {back_h}x{back_w}; "
                    f"TFLite fails prepare when they differ")
    pt, _ = pad_before(s_h, 1, out_h, f_h, back_h)
    pl, _ = pad_before(s_w, 1, out_w, f_w, back_w)
    return pt, pl


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
